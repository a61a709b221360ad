"""The episode record every run keeps: the window of recent returns, and the count and total over all of them."""

import numpy as np
import pytest

from distrl.runtime.run.metrics import EpisodeStats


def test_a_slices_score_is_the_mean_of_every_episode_it_finished():
    """PBT's slice score: a span's mean from two readings of the count and total, past the 100-episode window."""
    stats = EpisodeStats()
    stats.add([1.0] * 50, [1] * 50)
    count, total = stats.count, stats.total
    span = np.arange(300, dtype=float)
    stats.add(span, np.ones(300, int))
    assert (stats.total - total) / (stats.count - count) == pytest.approx(span.mean())
    assert stats.mean_return == pytest.approx(span[-100:].mean())  # the window: the last 100 only
    again = EpisodeStats()
    again.load(stats.state())
    assert (again.count, again.total) == (stats.count, stats.total)
    old = {k: v for k, v in stats.state().items() if k != "total"}  # a checkpoint from before the total was kept
    again = EpisodeStats()
    again.load(old)
    assert again.total == pytest.approx(span[-100:].sum())


def test_a_non_finite_return_is_reported_in_the_window_and_left_out_of_the_sums():
    stats = EpisodeStats()
    stats.add([1.0, float("nan"), 3.0], [1, 1, 1])
    summed, total = stats.summed, stats.total
    assert (stats.count, summed, total) == (3, 2, 4.0) and np.isnan(stats.mean_return)
    stats.add([float("-inf"), 5.0], [1, 1])
    assert (stats.total - total) / (stats.summed - summed) == 5.0  # the next span's mean is not ruined
    again = EpisodeStats()
    again.load({k: v for k, v in stats.state().items() if k not in ("total", "summed")})  # an older checkpoint
    assert (again.total, again.summed) == (9.0, 3)
