"""How actors share the exploration ladder: neighbouring rungs, or every actor spanning it (GORILA's bundles)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from distrl.agents.common.exploration import EpsilonGreedy, rungs
from distrl.ops import epsilon_ladder


def test_shares_by_hand():
    ladder = np.arange(6.0)  # 2 actors x 3 envs
    assert rungs(ladder, 0, 3).tolist() == [0, 1, 2] and rungs(ladder, 1, 3).tolist() == [3, 4, 5]
    assert rungs(ladder, 0, 3, interleaved=True).tolist() == [0, 2, 4]
    assert rungs(ladder, 1, 3, interleaved=True).tolist() == [1, 3, 5]


@given(st.integers(1, 6), st.integers(1, 8), st.booleans())
def test_every_rung_goes_to_exactly_one_actor(num_actors, num_envs, interleaved):
    ladder = epsilon_ladder(num_actors * num_envs)
    shares = [rungs(ladder, i, num_envs, interleaved) for i in range(num_actors)]
    assert all(len(s) == num_envs for s in shares)
    assert sorted(np.concatenate(shares).tolist()) == sorted(ladder.tolist())


@given(st.integers(2, 6), st.integers(2, 8))
def test_interleaved_every_actor_spans_the_ladder(num_actors, num_envs):
    """Each actor has one rung of every block of ``num_actors`` neighbours: its most exploring copy is within one block
    of the ladder's top, its least within one block of its bottom (neighbouring shares leave the last actor only the
    bottom ``num_envs`` rungs)."""
    ladder = epsilon_ladder(num_actors * num_envs)
    for i in range(num_actors):
        share = rungs(ladder, i, num_envs, interleaved=True)
        assert share.max() >= ladder[num_actors - 1] and share.min() <= ladder[-num_actors]


def test_gorila_defaults_leave_no_bundle_nearly_greedy():
    """The defaults' ladder (2 bundles x 8 envs, eps 0.4, alpha 7): neighbouring shares gave the second bundle
    0.013 down to 0.0007; interleaved, each bundle has a copy at 0.26 or more."""
    shares = [EpsilonGreedy.ladder(i, 2, 8, 0.4, 7.0, 2, interleaved=True).epsilons for i in range(2)]
    assert min(s.max() for s in shares) == pytest.approx(0.4 ** (1 + 7 / 15))
    assert EpsilonGreedy.ladder(1, 2, 8, 0.4, 7.0, 2).epsilons.max() < 0.015
