"""An actor that steps a vector env with a local policy copy and writes fixed-length unrolls.

Used by A2C, IMPALA (each pulls the learner's newest weights before an unroll, so A2C's single actor on
``inline`` is always on-policy) and A3C's workers (which sync from the parameter server themselves). The vector env
autoresets on the step after an episode ends (Gymnasium's next-step mode); that step is marked ``valid = 0`` so learners
and episode counts skip it, and the final observation of a truncated episode stays in ``obs`` so the learner can
bootstrap from it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from distrl.core.protocols import Stateless, WeightsReader
from distrl.core.types import ArraySpec, UnrollSpec
from distrl.envs import EnvSpec, EpisodeTracker, make_vec_env
from distrl.models import ActorCritic, FlatParameters


def unroll_spec(env: EnvSpec, num_envs: int, length: int) -> UnrollSpec:
    T, E = length, num_envs
    return {
        "obs": ArraySpec((T + 1, E) + env.obs_shape, env.obs_dtype.name),
        "actions": ArraySpec((T, E) + env.action_shape, env.action_dtype.name),
        "behaviour_logp": ArraySpec((T, E), "float32"),
        "rewards": ArraySpec((T, E), "float32"),
        "terminated": ArraySpec((T, E), "bool"),
        "truncated": ArraySpec((T, E), "bool"),
        "valid": ArraySpec((T, E), "bool"),
        "version": ArraySpec((E,), "int64", batch_axis=0),
    }


class UnrollActor(Stateless):
    def __init__(self, env_id: str, num_envs: int, length: int, seed: int, model: ActorCritic,
                 weights: WeightsReader | None = None):
        self.weights = weights
        self.env = make_vec_env(env_id, num_envs, seed)
        self.length = length
        self.model = model
        self.flat = FlatParameters(model)  # new weights before every unroll: one copy
        self.version = -1
        torch.manual_seed(seed)
        self.obs, _ = self.env.reset(seed=seed)
        self.prev_done = np.zeros(num_envs, dtype=bool)
        self.tracker = EpisodeTracker(num_envs)
        space = self.env.single_action_space
        self.clip = (space.low, space.high) if hasattr(space, "low") else None

    def set_weights(self, flat: np.ndarray, version: int) -> None:
        self.flat.load(flat)
        self.version = version

    def step(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        """Pull newer weights if there are any, then one unroll."""
        newer = self.weights.pull(self.version)
        if newer is not None:
            self.set_weights(*newer)
        return self.unroll(out)

    def unroll(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        env_s = infer_s = 0.0
        returns, lengths = [], []
        out["obs"][0] = self.obs
        with torch.inference_mode():
            for t in range(self.length):
                t0 = time.perf_counter()
                action, logp = self.model.act(torch.from_numpy(self.obs))
                action = action.numpy()
                t1 = time.perf_counter()
                env_action = np.clip(action, *self.clip) if self.clip is not None else action
                obs, reward, terminated, truncated, _ = self.env.step(env_action)
                t2 = time.perf_counter()
                valid = ~self.prev_done
                done = (terminated | truncated) & valid
                out["actions"][t] = action
                out["behaviour_logp"][t] = logp.numpy()
                out["rewards"][t] = reward
                out["terminated"][t] = terminated
                out["truncated"][t] = truncated
                out["valid"][t] = valid
                out["obs"][t + 1] = obs
                r, n = self.tracker.step(reward, done, valid)
                if r.size:
                    returns.append(r)
                    lengths.append(n)
                self.prev_done = done
                self.obs = obs
                infer_s += t1 - t0
                env_s += t2 - t1
        out["version"][:] = self.version
        return {
            "env_steps": self.length * self.env.num_envs,
            "version": self.version,
            "episode_returns": np.concatenate(returns) if returns else np.zeros(0),
            "episode_lengths": np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64),
            "env_s": env_s,
            "infer_s": infer_s,
        }

    def close(self) -> None:
        self.env.close()
