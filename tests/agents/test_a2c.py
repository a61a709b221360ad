import csv

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import distrl
from tests.agents.learning import scores


def test_a2c_learns_cartpole(tmp_path):
    """The default config (PPO's passes), inline, seed 0: the training mean passes 180 within 98,304 env steps
    (6 batches of 16 x 1024, ~8 s; random: ~22). Spread (``benchmarks/learning_spread.py --cases a2c --seeds 0 1 2 3
    --variants base sse``): 268-292 on seeds 0-3 (base), 265-287 (sse); the default's 150k budget (164k in whole
    batches) ends at 500 on seeds 0-3."""
    got = scores("a2c", (0,), tmp_path, score="train", env="CartPole-v1", total_steps=98_304, runtime="inline")
    assert got[0] >= 180, got


def test_a2c_reports_no_policy_lag(tmp_path):
    s = distrl.train("a2c", env="CartPole-v1", total_steps=5_000, runtime="inline", run_dir=str(tmp_path / "r"), num_envs=8)
    assert s["policy_lag_mean"] == 0.0 and 0.0 < s["learner_wait_frac"] < 1.0


def test_inline_is_deterministic(tmp_path):
    """Same seed, same numbers: every column of metrics.csv except the wall-clock ones."""
    tables = []
    for name in ("a", "b"):
        distrl.train("a2c", env="CartPole-v1", total_steps=8_000, runtime="inline", run_dir=str(tmp_path / name),
                     seed=3, num_envs=8, unroll_length=32, log_interval_s=1e9)  # one row, at the end; shuffled passes
        with open(tmp_path / name / "metrics.csv") as f:
            tables.append([{k: v for k, v in r.items() if not k.startswith("time_") and k not in ("wall_s", "sps", "learner_wait_frac")}
                           for r in csv.DictReader(f)])
    assert tables[0] == tables[1] and tables[0][0]["episodes"] != "0"


def test_continuous_actions_run(tmp_path):
    s = distrl.train("a2c", env="Pendulum-v1", total_steps=2000, runtime="inline", run_dir=str(tmp_path / "p"), num_envs=4)
    assert s["env_steps"] >= 2000


def test_python_api_policy(tmp_path):
    distrl.train("a2c", env="CartPole-v1", total_steps=3000, runtime="inline", run_dir=str(tmp_path / "r"), num_envs=4)
    policy = distrl.load_policy(tmp_path / "r")
    assert policy.act([0.0, 0.0, 0.0, 0.0]) in (0, 1)
    with pytest.raises(ValueError):
        distrl.evaluate(tmp_path / "r", episodes=0)


def _learner(**config):
    from distrl.api import plan_run

    return plan_run("a2c", "CartPole-v1", runtime="inline", num_envs=4, unroll_length=5, **config)[4].make_learner({})


def _batch(seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return {"obs": rng.normal(size=(6, 4, 4)).astype(np.float32), "actions": rng.integers(0, 2, (5, 4)),
            "rewards": rng.normal(size=(5, 4)).astype(np.float32), "terminated": rng.random((5, 4)) < 0.2,
            "truncated": np.zeros((5, 4), bool), "valid": rng.random((5, 4)) > 0.2,
            "behaviour_logp": np.zeros((5, 4), np.float32)}


def test_one_pass_of_one_minibatch_takes_the_papers_step():
    """At the batch's start the policy is the one that acted (ratio 1), where PPO's clipped surrogate has the gradient
    of the plain policy gradient: the passes' path with one minibatch of the whole batch ends at the same weights as
    the paper's one update (the minibatch's steps shuffled, which a mean over them does not see)."""
    import numpy as np

    paper, ppo = _learner(epochs=1, minibatches=1, ppo_clip=0.0), _learner(epochs=1, minibatches=1, ppo_clip=0.2)
    ppo.model.load_state_dict(paper.model.state_dict())
    start, batch = paper.get_weights().copy(), _batch()
    paper.step(batch)
    ppo._passes(ppo.batch_tensors(batch))
    assert paper.version == ppo.version == 1 and not np.allclose(paper.get_weights(), start)
    np.testing.assert_allclose(ppo.get_weights(), paper.get_weights(), rtol=1e-5, atol=1e-7)


def test_passes_make_epochs_times_minibatches_updates_and_skip_a_nonfinite_batch_whole():
    import numpy as np

    learner = _learner(epochs=3, minibatches=4)
    out = learner.step(_batch())
    assert learner.version == 12 and "grad_norm" in out and out["nonfinite_skipped"] == 0
    before = learner.get_weights().copy()
    bad = _batch(1)
    bad["rewards"][2, 1] = np.nan
    out = learner.step(bad)
    assert out["nonfinite_skipped"] == 1 and learner.version == 12
    np.testing.assert_array_equal(learner.get_weights(), before)


@given(envs=st.integers(1, 6), length=st.integers(1, 6), minibatches=st.integers(0, 40))
@settings(max_examples=40, deadline=None)
def test_more_minibatches_than_steps_is_one_config_error(envs, length, minibatches):
    """Generated batch shapes: up to num_envs * unroll_length minibatches plan, one more is a ConfigError naming
    the most there can be."""
    from distrl.api import plan_run
    from distrl.errors import ConfigError

    kw = dict(runtime="inline", num_envs=envs, unroll_length=length, minibatches=minibatches, epochs=2)
    if minibatches > envs * length:
        with pytest.raises(ConfigError, match=f"give at most {envs * length}$"):
            plan_run("a2c", "CartPole-v1", **kw)
    else:
        plan_run("a2c", "CartPole-v1", **kw)
