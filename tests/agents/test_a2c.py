import csv

import pytest

import distrl


def test_a2c_learns_cartpole(tmp_path):
    """Honest bar in bounded time: 300k steps (~2 s here) lift the mean return from ~20 (random) past 200."""
    s = distrl.train("a2c", env="CartPole-v1", total_steps=300_000, runtime="inline", run_dir=str(tmp_path / "r"), seed=0)
    assert s["episode_return_mean"] >= 200, s
    assert s["policy_lag_mean"] == 0.0 and 0.0 < s["learner_wait_frac"] < 1.0


def test_inline_is_deterministic(tmp_path):
    """Same seed, same numbers: every column of metrics.csv except the wall-clock ones."""
    tables = []
    for name in ("a", "b"):
        distrl.train("a2c", env="CartPole-v1", total_steps=20_000, runtime="inline", run_dir=str(tmp_path / name),
                     seed=3, num_envs=8, log_interval_s=1e9)  # one row, at the end
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
