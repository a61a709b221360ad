import pytest

import distrl

SMALL = dict(num_actors=2, num_envs=2, unroll_length=8, min_replay=100, batch_size=32, samples_per_insert=2.0,
             hidden=(32, 32))


@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_apex_ddpg_smoke(tmp_path, runtime):
    s = distrl.train(
        "apex-ddpg", env="Pendulum-v1", runtime=runtime, total_steps=1500, run_dir=str(tmp_path / "r"), **SMALL
    )
    assert s["env_steps"] >= 1500 and s["learner_updates"] > 0
    ev = distrl.evaluate(tmp_path / "r", episodes=1)
    assert ev["episodes"] == 1


def test_apex_ddpg_rejects_discrete_actions(tmp_path):
    from distrl.errors import ConfigError

    with pytest.raises(ConfigError, match="1-d Box"):
        distrl.train("apex-ddpg", env="CartPole-v1", runtime="inline", total_steps=100, run_dir=str(tmp_path / "r"))


def test_apex_ddpg_learns_pendulum(tmp_path):
    """30k steps on ``inline`` (~13 s) lift greedy play from about -1200 (random) above -400.

    Spread (``benchmarks/learning_spread.py --cases apex-ddpg --seeds 0..4 --variants base sse``, 10 runs):
    -158 to -133. On ``local`` the same budget gave -146 to -820 over five runs (the actors' timing
    changes what the learner sees), too wide for a fixed bar."""
    distrl.train(
        "apex-ddpg", env="Pendulum-v1", runtime="inline", total_steps=30_000, run_dir=str(tmp_path / "r"), seed=0
    )
    ev = distrl.evaluate(tmp_path / "r", episodes=10)
    assert ev["mean_return"] >= -400, ev
