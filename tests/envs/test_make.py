import numpy as np
import pytest

from distrl.envs import EpisodeTracker, check_env_id, env_spec, make_env, make_vec_env
from distrl.errors import ConfigError


def test_vector_env_uses_numpy_vectorised_cartpole_and_seeds():
    a = make_vec_env("CartPole-v1", 8, seed=3)
    b = make_vec_env("CartPole-v1", 8, seed=3)
    assert "CartPoleVectorEnv" in type(a).__name__
    oa, _ = a.reset(seed=3)
    ob, _ = b.reset(seed=3)
    np.testing.assert_array_equal(oa, ob)
    actions = np.ones(8, dtype=np.int64)
    np.testing.assert_array_equal(a.step(actions)[0], b.step(actions)[0])


def test_box_action_env_falls_back_to_sync_vector_env():
    env = make_vec_env("Pendulum-v1", 3, seed=0)
    spec = env_spec("Pendulum-v1")
    assert not spec.discrete and spec.action_shape == (1,)
    obs, *_ = env.step(np.zeros((3, 1), dtype=np.float32))
    assert obs.shape == (3, 3)


def test_user_env_through_module_form():
    env = make_env("tests.envs.corridor:DistrlCorridor-v0", seed=0)
    obs, _ = env.reset()
    assert obs.shape == (1,)
    assert env_spec("tests.envs.corridor:DistrlCorridor-v0").discrete


@pytest.mark.parametrize("env_id,message", [
    ("CartPole-v9", "did you mean 'CartPole-v1'"),
    ("no_such_module:Foo-v0", "importing module 'no_such_module' failed"),
])
def test_unknown_env_ids(env_id, message):
    with pytest.raises(ConfigError, match=message):
        check_env_id(env_id)


def test_atari_preprocessing():
    pytest.importorskip("ale_py", reason="atari extra not installed")
    pytest.importorskip("cv2", reason="atari extra not installed")
    spec = env_spec("ALE/Pong-v5")
    assert spec.obs_shape == (4, 84, 84) and spec.obs_dtype == np.uint8


def test_episode_tracker_skips_reset_steps():
    t = EpisodeTracker(2)
    r, n = t.step(np.array([1.0, 1.0]), np.array([False, True]), np.array([True, True]))
    assert r.tolist() == [1.0] and n.tolist() == [1]
    r, n = t.step(np.array([0.0, 0.0]), np.array([False, False]), np.array([True, False]))
    r, n = t.step(np.array([1.0, 1.0]), np.array([True, True]), np.array([True, True]))
    assert r.tolist() == [2.0, 1.0] and n.tolist() == [3, 1]


@pytest.mark.parametrize("env_id, size", [("FrozenLake-v1", 16), ("Taxi-v4", 500), ("Blackjack-v1", 45),
                                          ("tests.envs.spaces:DistrlLights-v0", 3 + 3 + 2 + 9)])
def test_observations_that_are_not_one_real_array_are_flattened(env_id, size):
    """Discrete observations one-hot, Tuple and Dict ones concatenated (gymnasium's flatten), as float32 in the
    spec, one env and the vector env alike."""
    spec = env_spec(env_id)
    assert spec.obs_shape == (size,) and spec.obs_dtype == np.float32
    obs, _ = make_env(env_id, seed=0).reset(seed=0)
    batch, _ = make_vec_env(env_id, 3, seed=0).reset(seed=0)
    assert obs.shape == (size,) and obs.dtype == np.float32 and batch.shape == (3, size)
    np.testing.assert_array_equal(batch[0], obs)


def test_multi_discrete_and_multi_binary_actions_are_several_categoricals():
    spec = env_spec("tests.envs.spaces:DistrlLights-v0")
    assert spec.action_nvec == (3, 3, 2) and spec.action_shape == (3,) and spec.action_dtype == np.int64
    assert not spec.discrete and not spec.continuous
    assert env_spec("tests.envs.spaces:DistrlLightsBinary-v0").action_nvec == (2, 2, 2)
    assert env_spec("CartPole-v1").action_nvec is None


def test_a_lost_life_ends_a_training_episode_unless_whole_games_are_asked_for():
    """The Nature-DQN heuristic on Atari training envs; R2D2 asks for whole games (its paper, section 2.3) and an
    evaluation plays them: the same seed and moves reach the first episode end with lives left, or with none."""
    pytest.importorskip("ale_py", reason="atari extra not installed")
    pytest.importorskip("cv2", reason="atari extra not installed")

    def lives_at_first_end(**kwargs) -> int:
        env = make_vec_env("ALE/Breakout-v5", 1, seed=0, **kwargs)
        rng = np.random.default_rng(0)
        try:
            for step in range(20_000):
                fire = step % 20 == 0  # Breakout serves the ball on FIRE
                _, _, terminated, truncated, info = env.step(np.array([1 if fire else rng.integers(4)]))
                if terminated[0] or truncated[0]:
                    return int(info["lives"][0])
        finally:
            env.close()
        raise AssertionError("no episode ended")

    assert lives_at_first_end() == 4  # a training env: the first life lost ends the episode
    assert lives_at_first_end(life_loss_ends=False) == 0  # the whole game
    assert lives_at_first_end(training=False) == 0  # an evaluation's
