"""Record demonstrations: greedy episodes of a trained run's policy, or of a scripted demonstrator (a
function from a batch of observations to actions), into :class:`Episodes`."""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np

from distrl.config import import_function
from distrl.datasets.minari_io import Episodes
from distrl.errors import ConfigError


def scripted_policy(spec: str) -> Callable[[np.ndarray], np.ndarray]:
    """``module:function``: a function from a batch of observations ``[B, ...]`` to actions ``[B, ...]``."""
    return import_function(spec, "--policy", "mypkg.demos:push_with_velocity")


def noisy(action: np.ndarray, space, noise: float, rng: np.random.Generator) -> np.ndarray:
    """The behaviour policy's action: for a Box, Gaussian noise of ``noise`` times the half-range, clipped to the
    bounds; for a discrete space, a uniformly random action with probability ``noise`` (each of several categorical
    actions apart)."""
    if noise == 0.0:
        return action
    if isinstance(space, (gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)):  # each action redrawn at the rate
        nvec = np.asarray(space.nvec) if isinstance(space, gym.spaces.MultiDiscrete) else np.full(space.shape, 2)
        return np.where(rng.random(nvec.shape) < noise, rng.integers(0, nvec), action)
    if isinstance(space, gym.spaces.Discrete):
        return np.asarray(rng.integers(space.n)) if rng.random() < noise else action
    half = (space.high - space.low) / 2.0
    return np.clip(action + noise * half * rng.standard_normal(space.shape), space.low, space.high)


def record_episodes(env_id: str, act: Callable[[np.ndarray], object], episodes: int, seed: int = 0,
                    reset: Callable[[], None] | None = None, noise: float = 0.0) -> Episodes:
    """Play ``episodes`` with ``act`` (one observation in, one action out), calling ``reset`` at episode starts;
    ``noise`` > 0 perturbs each action (:func:`noisy`): offline datasets are often recorded that way, so that
    they cover more actions than one deterministic policy takes."""
    from distrl.envs import make_env

    if episodes < 1:
        raise ConfigError(f"--episodes must be >= 1; got {episodes}")
    try:
        noise = float(noise)
    except (TypeError, ValueError):
        raise ConfigError(f"--noise must be a number >= 0; got {noise!r}") from None
    if not 0.0 <= noise < float("inf"):
        raise ConfigError(f"--noise must be a number >= 0 (a fraction of the action range, or a probability for "
                          f"discrete actions); got {noise}")
    rng = np.random.default_rng(seed)
    env = make_env(env_id)
    if not isinstance(env.action_space, gym.spaces.Box) and noise > 1.0:
        env.close()
        raise ConfigError(f"--noise is the chance of a random action for discrete actions: at most 1; got {noise}")
    out = Episodes([], [], [], [], [], env_id.split(":")[-1], env.observation_space, env.action_space)
    try:
        for ep in range(episodes):
            obs, _ = env.reset(seed=seed + ep)
            if reset is not None:
                reset()
            o, a, r, te, tr = [obs], [], [], [], []
            done = False
            while not done:
                action = _checked(_called(act, obs), env.action_space)
                action = noisy(action, env.action_space, noise, rng)
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


def _called(act: Callable[[np.ndarray], object], obs) -> np.ndarray:
    """``act(obs)`` as an array; a policy that raises (or takes no observation) is one line naming its error."""
    try:
        return np.asarray(act(obs))
    except ConfigError:
        raise
    except Exception as e:
        first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        raise ConfigError(f"the policy raised {type(e).__name__}" + (f": {first}" if first else "")
                          + " (a --policy is a function of a batch of observations, returning their actions)") from None


def _checked(action: np.ndarray, space) -> np.ndarray:
    """``action`` if it is one of ``space``'s, as is: an integer space takes whole numbers only (0.7 is not cast to
    0), and nothing is converted that is not a number."""
    integral = np.issubdtype(space.dtype, np.integer)
    if action.dtype.kind not in "biuf" or (integral and action.dtype.kind == "f"
                                           and not np.all(np.isfinite(action) & (action == np.round(action)))):
        raise ConfigError(f"the policy returned {action!r}, not an action of {space}"
                          + (" (whole numbers)" if integral else ""))
    if not space.contains(action.astype(space.dtype)):
        raise ConfigError(f"the policy returned {action!r}, not an action of {space}")
    return action


def batch_policy(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], object]:
    """A function over a batch of observations, used one observation at a time."""
    def act(obs):
        actions = np.asarray(fn(np.asarray(obs)[None]))
        if actions.shape[:1] != (1,):
            raise ConfigError(
                f"--policy must return one action per observation of the batch; got shape {actions.shape}"
            )
        return actions[0]
    return act
