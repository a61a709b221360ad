"""Offline transitions for QT-Opt: a Minari dataset as one read-only float32 matrix every updater samples.

The dataset's episodes become the n-step transitions an actor would have made of them
(``episodes_to_transitions``), packed row by row as [obs | action | reward | discount | next_obs] so the
runtime's constant-array service can hold them once per machine (shared memory on ``local``, the object
store on ``ray``); an updater draws rows uniformly and unpacks them into the replay's field layout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from distrl.agents.common.transition_actor import ITEM_FIELDS, episodes_to_transitions
from distrl.errors import ConfigError


@dataclass(frozen=True)
class Layout:
    """Where each transition field lives in a packed row, and its shape and dtype in the replay."""

    fields: tuple  # (name, shape, dtype) in ITEM_FIELDS order

    @classmethod
    def of(cls, env) -> Layout:
        shapes = {
            "obs": env.obs_shape,
            "action": env.action_shape,
            "reward": (),
            "discount": (),
            "next_obs": env.obs_shape,
        }
        dtypes = {"obs": env.obs_dtype.name, "action": env.action_dtype.name, "reward": "float32",
                  "discount": "float32", "next_obs": env.obs_dtype.name}
        return cls(tuple((k, tuple(shapes[k]), dtypes[k]) for k in ITEM_FIELDS))

    @property
    def width(self) -> int:
        return sum(int(np.prod(shape)) for _, shape, _ in self.fields)

    def pack(self, items: dict[str, np.ndarray]) -> np.ndarray:
        n = len(items["reward"])
        return np.concatenate([np.asarray(items[k], np.float32).reshape(n, -1) for k, _, _ in self.fields], axis=1)

    def unpack(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        out, col = {}, 0
        for name, shape, dtype in self.fields:
            width = int(np.prod(shape))
            out[name] = rows[:, col:col + width].reshape((len(rows),) + shape).astype(dtype)
            col += width
        return out


def load_offline(path: str, env_id: str, env):
    """The dataset's episodes, checked against the env (one line if they do not fit)."""
    from distrl.datasets.minari_io import check_matches, load_episodes

    try:
        episodes = load_episodes(path)
        check_matches(episodes, env_id, env, what="offline data")
    except ConfigError as e:
        raise ConfigError(f"offline: {e}") from None
    if episodes.steps == 0:
        raise ConfigError(f"offline: the dataset at '{path}' holds no steps")
    return episodes


def offline_matrix(path: str, env_id: str, env, n_step: int, gamma: float, reward_clip: float | None) -> np.ndarray:
    """Every transition of the dataset at ``path``, packed (built once per machine by the constant service)."""
    episodes = load_offline(path, env_id, env)
    layout = Layout.of(env)
    per_episode = episodes_to_transitions(episodes, n_step, gamma, reward_clip)
    return np.concatenate([layout.pack(items) for items in per_episode], axis=0)
