"""The actor-critic learners' normalisers move only with an applied update: a batch that is skipped as
non-finite (a NaN reward, not only a NaN observation) leaves every weight, statistics included, as it was."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.api import plan_run

NORMS = {"obs_norm": True, "value_norm": True, "normalize_advantages": True}


def _batch(T: int, B: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"obs": (rng.normal(size=(T + 1, B, 4)) * 3 + 1).astype(np.float32),
            "actions": rng.integers(0, 2, (T, B)).astype(np.int64),
            "rewards": rng.normal(size=(T, B)).astype(np.float32),
            "terminated": rng.random((T, B)) < 0.1, "truncated": np.zeros((T, B), bool),
            "valid": np.ones((T, B), bool), "behaviour_logp": np.log(rng.uniform(0.3, 0.7, (T, B))).astype(np.float32)}


@pytest.mark.parametrize("system, extra", [("impala", {}), ("appo", {}), ("ppo", {}), ("a2c", {})],
                         ids=["impala", "appo", "ppo", "a2c"])
def test_a_skipped_update_moves_no_statistic_and_an_applied_one_moves_them(system, extra):
    learner = plan_run(system, "CartPole-v1", num_envs=4, unroll_length=5, **NORMS, **extra)[4].make_learner({})
    bad = _batch(5, 4, 0)
    bad["rewards"][2, 1] = np.nan
    before = learner.get_weights().copy()
    out = learner.step(bad)
    assert "grad_norm" not in out and out["nonfinite_skipped"] == 1
    np.testing.assert_array_equal(learner.get_weights(), before)
    assert float(learner.model.obs_norm.count) == 0 and float(learner.model.popart.weight_sum) == 0
    assert "grad_norm" in learner.step(_batch(5, 4, 1))
    assert float(learner.model.obs_norm.count) == 6 * 4 and float(learner.model.popart.weight_sum) > 0
    assert abs(float(learner.model.obs_norm.mean.mean()) - 1.0) < 1.5  # the batch's moments, not the defaults


@pytest.mark.parametrize("minibatch_by", ["stream", "step"])
def test_appo_passes_update_once_per_minibatch_and_move_the_statistics_once_per_batch(minibatch_by):
    """epochs x minibatches applied updates per batch; the running statistics take the batch once, after the passes:
    each observation counted once, and PopArt's averages moved by one step (weight 0.01, as a single update's)."""
    learner = plan_run("appo", "CartPole-v1", num_envs=4, unroll_length=5, ppo_clip=0.2, epochs=3, minibatches=2,
                       minibatch_by=minibatch_by, **NORMS)[4].make_learner({})
    assert "grad_norm" in learner.step(_batch(5, 4, 1))
    assert learner.version == 3 * 2
    assert float(learner.model.obs_norm.count) == 6 * 4
    np.testing.assert_allclose(float(learner.model.popart.weight_sum), 0.01, rtol=1e-6)


@pytest.mark.parametrize("minibatch_by", ["stream", "step"])
def test_an_appo_batch_with_a_nan_is_skipped_whole_and_counts_once(minibatch_by):
    """A NaN in one env stream: no minibatch is trained (the others neither), no statistic moves, and the batch adds
    one to the non-finite count the trainer's streak reads, not epochs x minibatches."""
    learner = plan_run("appo", "CartPole-v1", num_envs=4, unroll_length=5, ppo_clip=0.2, epochs=3, minibatches=2,
                       minibatch_by=minibatch_by, **NORMS)[4].make_learner({})
    bad = _batch(5, 4, 0)
    bad["rewards"][2, 3] = np.nan
    before = learner.get_weights().copy()
    out = learner.step(bad)
    assert "grad_norm" not in out and out["nonfinite_skipped"] == 1 and learner.version == 0
    np.testing.assert_array_equal(learner.get_weights(), before)
    assert float(learner.model.obs_norm.count) == 0 and float(learner.model.popart.weight_sum) == 0
