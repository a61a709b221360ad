"""run_dir/best: the weights of the best periodic evaluation, kept across a resume, switched in one rename."""

import json
import math

import numpy as np
import pytest
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
                                   "weights": "policy-3-300.safetensors"}
    assert sorted(p.name for p in (tmp_path / "best").iterdir()) == ["best.json", "policy-3-300.safetensors"]


def test_a_repeated_version_never_overwrites_the_kept_weights(tmp_path):
    """After a crash and resume versions repeat with other weights: the kept file is never written over."""
    best = BestPolicy(tmp_path)
    best.offer(_weights(1), 1.0, {"version": 5, "env_steps": 10})
    kept = read_best(tmp_path)["weights"]
    best.offer(_weights(2), 2.0, {"version": 5, "env_steps": 10})
    assert read_best(tmp_path)["weights"] != kept
    np.testing.assert_array_equal(_kept(tmp_path), _weights(2))


def test_read_only_weights_are_kept(tmp_path):
    """Ray's object store hands out read-only arrays."""
    weights = _weights(4)
    weights.flags.writeable = False
    assert BestPolicy(tmp_path).offer(weights, 1.0, {"version": 1})
    np.testing.assert_array_equal(_kept(tmp_path), _weights(4))


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


def test_a_crash_before_the_switch_leaves_the_previous_best_whole_and_the_next_best_clears_its_leftovers(
        tmp_path, monkeypatch):
    import distrl.runtime.run.best_policy as best_policy

    best = BestPolicy(tmp_path)
    best.offer(_weights(1), 1.0, {"version": 1})
    real, calls = best_policy.os.replace, []

    def dies_at_the_switch(src, dst):  # the weights' rename goes through; the process dies before best.json's
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(best_policy.os, "replace", dies_at_the_switch)
    with pytest.raises(KeyboardInterrupt):
        best.offer(_weights(2), 2.0, {"version": 2})
    monkeypatch.setattr(best_policy.os, "replace", real)
    folder = tmp_path / "best"
    assert {p.name for p in folder.iterdir()} == {"best.json", ".tmp-best.json", "policy-1-0.safetensors",
                                                 "policy-2-0.safetensors"}
    assert read_best(tmp_path)["weights"] == "policy-1-0.safetensors"
    np.testing.assert_array_equal(_kept(tmp_path), _weights(1))
    assert BestPolicy(tmp_path).score == 1.0
    (folder / ".tmp-99-policy-3-0.safetensors").write_bytes(b"half")  # a weights file being written at a crash
    assert BestPolicy(tmp_path).offer(_weights(4), 3.0, {"version": 4})
    assert sorted(p.name for p in folder.iterdir()) == ["best.json", "policy-4-0.safetensors"]


def test_a_damaged_record_counts_as_none_kept(tmp_path):
    BestPolicy(tmp_path).offer(_weights(1), 1.0, {"version": 1})
    record = tmp_path / "best" / "best.json"
    good = json.loads(record.read_text())
    for damaged in ("{not json", json.dumps({**good, "eval_return_mean": "high"}),
                    json.dumps({**good, "weights": "../best/policy-1-0.safetensors"}),  # whole, but not here
                    json.dumps({**good, "eval_return_mean": float("inf")}),
                    json.dumps({**good, "weights": "policy-7.safetensors"})):
        record.write_text(damaged)
        assert read_best(tmp_path) is None and BestPolicy(tmp_path).score == -math.inf
    record.write_text(json.dumps(good))
    (tmp_path / "best" / "policy-1-0.safetensors").write_bytes(b"")
    assert read_best(tmp_path) is None
    (tmp_path / "best" / "policy-1-0.safetensors").write_bytes(b"not safetensors")  # whole-looking, unloadable
    resumed = BestPolicy(tmp_path)
    assert read_best(tmp_path) is not None and resumed.score == -math.inf
    assert resumed.offer(_weights(2), -5.0, {"version": 2})  # a resume replaces it with any finite score
    np.testing.assert_array_equal(_kept(tmp_path), _weights(2))


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
    assert read_best(folder) == {"eval_return_mean": top, "version": last, "weights": f"policy-{last}-0.safetensors"}
    np.testing.assert_array_equal(_kept(folder), _weights(last))


class _Scorer:
    """A PolicyScorer that scores weights by their first value (and remembers what it played)."""

    played: list = []

    def __init__(self, index, seed, handles):
        self.closed = False

    def score(self, weights):
        _Scorer.played.append(np.array(weights))
        return {"eval_return_mean": float(weights[0]), "eval_return_std": 0.0, "eval_episodes": 5}

    def close(self):
        pass


class _Trainer:
    def __init__(self, run_dir, resume, make=_Scorer):
        from types import SimpleNamespace

        from distrl.core.program import Program, Role

        evaluator = Role("evaluator", make, uses=("weights",), interval_steps=100, scores_weights=True)
        self.program, self.resume, self.env_steps = Program(roles=(evaluator,)), resume, 0
        self.cfg = SimpleNamespace(seed=0)


def _forge(run_dir, score: float) -> None:
    record = run_dir / "best" / "best.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "eval_return_mean": score}))


@pytest.mark.parametrize("forged", [1e308, -1e308, 3.0])
def test_on_resume_the_kept_weights_are_played_again_and_their_measured_score_is_the_bar(tmp_path, forged):
    """A record's score is believed only once measured: a forged 1e308 would otherwise keep every later best out
    (#58), a forged -1e308 would let a worse policy in."""
    from distrl.runtime.run.best_policy import BestPolicyKeeper

    BestPolicy(tmp_path).offer(_weights(7), 7.0, {"eval_episodes": 5, "version": 1, "env_steps": 100})
    _forge(tmp_path, forged)
    _Scorer.played.clear()
    keeper = BestPolicyKeeper(tmp_path)
    keeper.on_start(_Trainer(tmp_path, resume=True))
    np.testing.assert_array_equal(_Scorer.played[0], _weights(7))  # the kept weights, played once
    assert read_best(tmp_path)["eval_return_mean"] == 7.0 and read_best(tmp_path)["rescored"]
    policy = {"weights": _weights(6), "version": 2, "eval_episodes": 5}
    keeper.on_report(_Trainer(tmp_path, True), {"policy": policy, "metrics": {"eval_return_mean": 6.5,
                                                                              "eval_return_std": 0.0}})
    np.testing.assert_array_equal(_kept(tmp_path), _weights(7))  # below the measured 7: kept out
    policy = {"weights": _weights(8), "version": 3, "eval_episodes": 5}
    keeper.on_report(_Trainer(tmp_path, True), {"policy": policy, "metrics": {"eval_return_mean": 7.5,
                                                                              "eval_return_std": 0.0}})
    np.testing.assert_array_equal(_kept(tmp_path), _weights(8))  # above it: the new best, whatever the file said


def test_a_fresh_run_plays_nothing_and_kept_weights_that_cannot_be_played_leave_the_bar_open(tmp_path, capsys):
    from distrl.runtime.run.best_policy import BestPolicyKeeper

    BestPolicy(tmp_path).offer(_weights(7), 7.0, {"eval_episodes": 5, "version": 1, "env_steps": 100})
    _Scorer.played.clear()
    BestPolicyKeeper(tmp_path).on_start(_Trainer(tmp_path, resume=False))
    assert _Scorer.played == []

    class Refusing(_Scorer):
        def score(self, weights):
            raise ValueError("flat weights hold 7 values; the parameters 9")

    keeper = BestPolicyKeeper(tmp_path)
    keeper.on_start(_Trainer(tmp_path, resume=True, make=Refusing))
    assert "could not be played again" in capsys.readouterr().err
    assert read_best(tmp_path)["rescored"] is False  # what the summary and distrl eval then say of its score
    policy = {"weights": _weights(1), "version": 2, "eval_episodes": 5}
    keeper.on_report(_Trainer(tmp_path, True), {"policy": policy, "metrics": {"eval_return_mean": -50.0,
                                                                              "eval_return_std": 0.0}})
    np.testing.assert_array_equal(_kept(tmp_path), _weights(1))


def test_a_scorer_that_cannot_even_be_made_or_scores_nan_leaves_the_resume_going_and_the_bar_open(tmp_path, capsys):
    from distrl.runtime.run.best_policy import BestPolicyKeeper

    class Unmakeable(_Scorer):
        def __init__(self, index, seed, handles):
            raise RuntimeError("this process has no display for the env")

    class Nan(_Scorer):
        def score(self, weights):
            return {"eval_return_mean": math.nan, "eval_return_std": 0.0, "eval_episodes": 5}

    for make in (Unmakeable, Nan):
        BestPolicy(tmp_path).offer(_weights(7), 7.0, {"eval_episodes": 5, "version": 1, "env_steps": 100})
        keeper = BestPolicyKeeper(tmp_path)
        keeper.on_start(_Trainer(tmp_path, resume=True, make=make))
        assert "could not be played again" in capsys.readouterr().err
        assert keeper.best.score == -math.inf and read_best(tmp_path)["rescored"] is False


def test_a_resumed_run_replays_a_forged_best_score_and_keeps_the_measured_one(tmp_path):
    """End to end: a run whose best.json was forged to 1e308 resumes with the score its weights earn."""
    import distrl

    run = tmp_path / "run"
    kwargs = dict(env="CartPole-v1", runtime="inline", num_envs=8, unroll_length=8, eval_interval_steps=1000,
                  eval_episodes=2, run_dir=str(run), progress=False)
    distrl.train("a2c", total_steps=2000, **kwargs)
    _forge(run, 1e308)
    summary = distrl.train("a2c", total_steps=3000, resume=True, **kwargs)
    kept = read_best(run)
    assert kept["eval_return_mean"] <= 500 and kept["eval_episodes"] == 2
    assert summary["best_policy"]["eval_return_mean"] <= 500
