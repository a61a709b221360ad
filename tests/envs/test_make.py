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
