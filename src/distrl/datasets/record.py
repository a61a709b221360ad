"""Record demonstrations: greedy episodes of a trained run's policy, or of a scripted demonstrator (a
function from a batch of observations to actions), into :class:`Episodes`."""

from __future__ import annotations

import importlib
from typing import Callable

import numpy as np

from distrl.datasets.minari_io import Episodes
from distrl.errors import ConfigError


def scripted_policy(spec: str) -> Callable[[np.ndarray], np.ndarray]:
    """``module:function``: a function from a batch of observations ``[B, ...]`` to actions ``[B, ...]``."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ConfigError(f"--policy must be module:function (e.g. mypkg.demos:push_with_velocity); got '{spec}'")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"cannot load --policy '{spec}': {e}") from None
    if not callable(fn):
        raise ConfigError(f"--policy '{spec}' is not a function")
    return fn


def record_episodes(env_id: str, act: Callable[[np.ndarray], object], episodes: int, seed: int = 0,
                    reset: Callable[[], None] | None = None) -> Episodes:
    """Play ``episodes`` with ``act`` (one observation in, one action out), calling ``reset`` at episode starts."""
    from distrl.envs import make_env

    if episodes < 1:
        raise ConfigError(f"--episodes must be >= 1; got {episodes}")
    env = make_env(env_id)
    out = Episodes([], [], [], [], [], env_id.split(":")[-1], env.observation_space, env.action_space)
    try:
        for ep in range(episodes):
            obs, _ = env.reset(seed=seed + ep)
            if reset is not None:
                reset()
            o, a, r, te, tr = [obs], [], [], [], []
            done = False
            while not done:
                action = np.asarray(act(obs))
                if not env.action_space.contains(action.astype(env.action_space.dtype)):
                    raise ConfigError(f"the policy returned {action!r}, not an action of {env.action_space}")
                obs, reward, terminated, truncated, _ = env.step(action.astype(env.action_space.dtype))
                o.append(obs), a.append(action), r.append(reward), te.append(terminated), tr.append(truncated)
                done = terminated or truncated
            out.observations.append(np.asarray(o))
            out.actions.append(np.asarray(a).astype(env.action_space.dtype))
            out.rewards.append(np.asarray(r, dtype=np.float32))
            out.terminations.append(np.asarray(te, bool))
            out.truncations.append(np.asarray(tr, bool))
    finally:
        env.close()
    return out


def batch_policy(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], object]:
    """A function over a batch of observations, used one observation at a time."""
    def act(obs):
        actions = np.asarray(fn(np.asarray(obs)[None]))
        if actions.shape[:1] != (1,):
            raise ConfigError(f"--policy must return one action per observation of the batch; got shape {actions.shape}")
        return actions[0]
    return act
