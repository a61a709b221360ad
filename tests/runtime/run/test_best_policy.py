"""run_dir/best: the weights of the best periodic evaluation, kept across a resume, switched in one rename."""

import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.runtime.run.best_policy import BestPolicy, load_best_weights, read_best


def _weights(i: int) -> np.ndarray:
    return np.full(7, float(i), np.float32)


def _kept(run_dir) -> np.ndarray:
    return load_best_weights(run_dir, read_best(run_dir))


def test_a_higher_score_replaces_a_lower_one_ties_go_to_the_later_weights_and_no_other_file_stays(tmp_path):
    best = BestPolicy(tmp_path)
    assert best.offer(_weights(1), 10.0, {"env_steps": 100, "version": 1})
    assert read_best(tmp_path)["env_steps"] == 100
    assert not best.offer(_weights(2), 9.5, {"env_steps": 200, "version": 2})  # lower: the kept one stays
    assert best.offer(_weights(3), 10.0, {"env_steps": 300, "version": 3})  # a tie: the later weights
    np.testing.assert_array_equal(_kept(tmp_path), _weights(3))
    assert read_best(tmp_path) == {"eval_return_mean": 10.0, "env_steps": 300, "version": 3,
                                   "weights": "policy-3.safetensors"}
    assert sorted(p.name for p in (tmp_path / "best").iterdir()) == ["best.json", "policy-3.safetensors"]


def test_non_finite_scores_or_weights_are_never_kept(tmp_path):
    best = BestPolicy(tmp_path)
    assert not best.offer(_weights(1), math.nan, {})
    assert not best.offer(_weights(1), math.inf, {})
    assert not best.offer(np.array([1.0, np.nan], np.float32), 5.0, {})
    assert read_best(tmp_path) is None
    assert best.offer(_weights(1), -1e308, {})  # any finite score beats none kept


def test_a_resumed_run_must_match_or_beat_the_kept_score(tmp_path):
    BestPolicy(tmp_path).offer(_weights(1), 200.0, {"env_steps": 5, "version": 1})
    resumed = BestPolicy(tmp_path)
    assert resumed.score == 200.0
    assert not resumed.offer(_weights(2), 150.0, {"version": 2}) and resumed.offer(_weights(3), 250.0, {"version": 3})
    np.testing.assert_array_equal(_kept(tmp_path), _weights(3))


def test_scores_over_another_number_of_episodes_start_the_bar_anew(tmp_path):
    best = BestPolicy(tmp_path)
    best.offer(_weights(1), 500.0, {"eval_episodes": 10, "version": 1})
    assert not best.offer(_weights(2), 400.0, {"eval_episodes": 10, "version": 2})
    resumed = BestPolicy(tmp_path)  # a resume with eval_episodes=2: its first score is kept whatever it is
    assert resumed.offer(_weights(3), 300.0, {"eval_episodes": 2, "version": 3})
    assert not resumed.offer(_weights(4), 299.0, {"eval_episodes": 2, "version": 4})
    assert read_best(tmp_path)["eval_return_mean"] == 300.0


def test_a_crash_before_the_switch_leaves_the_previous_best_whole_and_the_next_best_clears_its_leftovers(tmp_path):
    best = BestPolicy(tmp_path)
    best.offer(_weights(1), 1.0, {"version": 1})
    folder = tmp_path / "best"
    (folder / ".tmp-99-policy-2.safetensors").write_bytes(b"half")  # weights being written when the crash came
    (folder / "policy-2.safetensors").write_bytes(b"whole but never switched to")
    (folder / ".tmp-best.json").write_text("{")
    assert read_best(tmp_path)["weights"] == "policy-1.safetensors"
    np.testing.assert_array_equal(_kept(tmp_path), _weights(1))
    assert BestPolicy(tmp_path).offer(_weights(3), 2.0, {"version": 3})
    assert sorted(p.name for p in folder.iterdir()) == ["best.json", "policy-3.safetensors"]


def test_a_damaged_record_counts_as_none_kept(tmp_path):
    BestPolicy(tmp_path).offer(_weights(1), 1.0, {"version": 1})
    record = tmp_path / "best" / "best.json"
    good = json.loads(record.read_text())
    for damaged in ("{not json", json.dumps({**good, "eval_return_mean": "high"}),
                    json.dumps({**good, "weights": "../../elsewhere.safetensors"}),
                    json.dumps({**good, "weights": "policy-7.safetensors"})):
        record.write_text(damaged)
        assert read_best(tmp_path) is None and BestPolicy(tmp_path).score == -math.inf
    record.write_text(json.dumps(good))
    (tmp_path / "best" / "policy-1.safetensors").write_bytes(b"")
    assert read_best(tmp_path) is None
    (tmp_path / "best" / "policy-1.safetensors").write_bytes(b"not safetensors")  # whole-looking, unloadable
    assert read_best(tmp_path) is not None and BestPolicy(tmp_path).score == -math.inf  # a resume replaces it


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(math.nan)), min_size=1, max_size=12))
def test_the_kept_weights_are_the_last_offer_of_the_highest_finite_score(tmp_path_factory, scores):
    """Independent reference: the index of the last maximum among the finite scores, found by ``max``."""
    folder = tmp_path_factory.mktemp("run")
    best = BestPolicy(folder)
    for i, s in enumerate(scores):
        best.offer(_weights(i), s, {"version": i})
    finite = [(s, i) for i, s in enumerate(scores) if math.isfinite(s)]
    if not finite:
        assert read_best(folder) is None
        return
    top, last = max(finite)  # (score, index): ties broken by the larger index
    assert read_best(folder) == {"eval_return_mean": top, "version": last, "weights": f"policy-{last}.safetensors"}
    np.testing.assert_array_equal(_kept(folder), _weights(last))
