import pytest

import distrl
from distrl.errors import ConfigError
from tests.agents.learning import median, scores

SMALL = dict(num_actors=2, num_envs=4, unroll_length=8, hidden=(32, 32))


@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_seed_smoke(tmp_path, runtime):
    s = distrl.train("seed", env="CartPole-v1", runtime=runtime, total_steps=4000, run_dir=str(tmp_path / "r"), **SMALL)
    assert s["env_steps"] >= 4000 and s["learner_updates"] > 0 and s["episodes"] > 0
    assert s["inference_batch_mean"] > 0 and s["actor_restarts"] == 0 and s.get("unrolls_dropped") in (None, 0)
    if runtime == "local":  # actors measured their round trips to the server
        assert s["latency_p50_ms"] > 0 and 0 <= s["actor_idle_frac"] <= 1
    assert distrl.evaluate(tmp_path / "r", episodes=1)["episodes"] == 1


def test_seed_continuous_actions_pendulum(tmp_path):
    s = distrl.train("seed", env="Pendulum-v1", runtime="local", total_steps=3000, run_dir=str(tmp_path / "r"), **SMALL)
    assert s["env_steps"] >= 3000 and s["learner_updates"] > 0


def test_seed_rejects_a_bad_bind_address(tmp_path):
    with pytest.raises(ConfigError, match="bind"):
        distrl.train("seed", env="CartPole-v1", runtime="inline", total_steps=100, run_dir=str(tmp_path / "r"), bind="nowhere")


def test_seed_metrics_rows_carry_inference_statistics(tmp_path):
    import csv

    distrl.train("seed", env="CartPole-v1", runtime="local", total_steps=20_000, run_dir=str(tmp_path / "r"),
                 log_interval_s=0.1, **SMALL)
    rows = list(csv.DictReader(open(tmp_path / "r" / "metrics.csv")))
    assert any(r.get("inference_batch_p50") for r in rows) and any(r.get("latency_p99_ms") for r in rows)


def test_seed_learns_cartpole(tmp_path):
    """The median over seeds 0-2 of greedy play after 333k steps on ``inline`` (same server code; ~5 s in
    all) is past 60 (an untrained policy: ~10-20).

    Spread (``benchmarks/learning_spread.py --cases seed --total-steps 333000 --seeds 0..9 --variants base sse``,
    20 runs) with RMSProp eps 1e-3 (the default since 2026-11-26): 224-461, median 352 (both variants gave
    the same numbers); with the earlier 1e-5: 67-440, median 260. (One run of 1M steps, the bar this test
    had, spread 110-500 and gave 210 for seed 0 where 438 had been taken as the bar.)"""
    got = scores("seed", (0, 1, 2), tmp_path, score="eval", env="CartPole-v1", runtime="inline", total_steps=333_000)
    assert median(got) >= 60, got
