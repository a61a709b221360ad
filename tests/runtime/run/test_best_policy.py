"""run_dir/best: the weights of the best periodic evaluation, kept across a resume, written whole or not at all."""

import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.runtime.run.best_policy import BestPolicy, load_best_weights, read_best


def _weights(i: int) -> np.ndarray:
    return np.full(7, float(i), np.float32)


def test_a_higher_score_replaces_a_lower_one_ties_go_to_the_later_weights_and_nothing_half_written_stays(tmp_path):
    best = BestPolicy(tmp_path)
    assert best.offer(_weights(1), 10.0, {"env_steps": 100}) and read_best(tmp_path)["env_steps"] == 100
    assert not best.offer(_weights(2), 9.5, {"env_steps": 200})  # lower: the kept one stays
    assert best.offer(_weights(3), 10.0, {"env_steps": 300})  # a tie: the later weights
    np.testing.assert_array_equal(load_best_weights(tmp_path), _weights(3))
    assert read_best(tmp_path) == {"eval_return_mean": 10.0, "env_steps": 300}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]  # no temporary or old folder left


def test_non_finite_scores_or_weights_are_never_kept(tmp_path):
    best = BestPolicy(tmp_path)
    assert not best.offer(_weights(1), math.nan, {})
    assert not best.offer(_weights(1), math.inf, {})
    assert not best.offer(np.array([1.0, np.nan], np.float32), 5.0, {})
    assert read_best(tmp_path) is None
    assert best.offer(_weights(1), -1e308, {})  # any finite score beats none kept


def test_a_resumed_run_must_beat_the_kept_score(tmp_path):
    BestPolicy(tmp_path).offer(_weights(1), 200.0, {"env_steps": 5})
    resumed = BestPolicy(tmp_path)
    assert resumed.score == 200.0
    assert not resumed.offer(_weights(2), 150.0, {}) and resumed.offer(_weights(3), 250.0, {})
    np.testing.assert_array_equal(load_best_weights(tmp_path), _weights(3))


def test_a_damaged_record_counts_as_none_kept(tmp_path):
    BestPolicy(tmp_path).offer(_weights(1), 1.0, {})
    (tmp_path / "best" / "best.json").write_text("{not json")
    assert read_best(tmp_path) is None and BestPolicy(tmp_path).score == -math.inf
    (tmp_path / "best" / "best.json").write_text(json.dumps({"eval_return_mean": "high"}))
    assert read_best(tmp_path) is None
    (tmp_path / "best" / "best.json").write_text(json.dumps({"eval_return_mean": 1.0}))
    (tmp_path / "best" / "policy.safetensors").write_bytes(b"")
    assert read_best(tmp_path) is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(math.nan)), min_size=1, max_size=12))
def test_the_kept_weights_are_the_last_offer_of_the_highest_finite_score(tmp_path_factory, scores):
    """Independent reference: the index of the last maximum among the finite scores, found by sorting."""
    folder = tmp_path_factory.mktemp("run")
    best = BestPolicy(folder)
    for i, s in enumerate(scores):
        best.offer(_weights(i), s, {"index": i})
    finite = [(s, i) for i, s in enumerate(scores) if math.isfinite(s)]
    if not finite:
        assert read_best(folder) is None
        return
    top, last = max(finite)  # (score, index): ties broken by the larger index
    assert read_best(folder) == {"eval_return_mean": top, "index": last}
    np.testing.assert_array_equal(load_best_weights(folder), _weights(last))
