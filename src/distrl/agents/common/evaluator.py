"""A periodic evaluator: greedy episodes on its own env copies with the latest weights.

A role like any other (the runtime only keeps the weights it sends with a new best): every ``eval_interval_steps`` env
steps the trainer requests one step of it, which plays one episode on each of ``eval_episodes`` env
copies at once (a vector env, one batched forward per step), greedily, with the newest weights it can
pull, and reports ``eval_return_mean`` (a column of ``metrics.csv`` and TensorBoard). The copies are
reset with the same seeds every time, so two evaluations differ only by the weights (an evaluator the runtime
restarted after a crash has a new seed, as every restarted component does, and plays other episodes). Training
envs, exploration and the training RNG are untouched, so ``inline`` stays deterministic.

An evaluation that scores at least this evaluator's best so far also returns the weights it played (``policy``):
the trainer keeps the run's best in ``run_dir/best`` (``runtime/run/best_policy.py``), which ``distrl eval`` plays.
On resume the trainer builds one evaluator in its own process to play the kept weights again (``score``): the score
it then competes with is one measured, never one read from a file.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import torch

from distrl.core.program import Role
from distrl.core.protocols import Stateless
from distrl.envs import make_vec_env
from distrl.models import load_flat, to_flat

MAX_STEPS = 100_000  # an episode still running after this many vector steps counts as it stands


def from_weights(handle, model: torch.nn.Module, version: int) -> int:
    """Load the weights service's newest weights (if newer than ``version``); return their version."""
    newer = handle.pull(version)
    if newer is None:
        return version
    with torch.no_grad():
        load_flat(model.parameters(), newer[0])
    return newer[1]


def from_params(handle, model: torch.nn.Module, version: int) -> int:
    """Load the parameter server's current parameters; return the sum of the shard versions."""
    return int(np.sum(handle.pull(model)))


LOADERS = {"weights": from_weights, "params": from_params}


class Evaluator(Stateless):
    def __init__(self, env_id: str, model: torch.nn.Module, episodes: int, seed: int, handle, load: Callable):
        self.env = make_vec_env(env_id, episodes, seed, training=False)
        self.seed, self.episodes = seed, self.env.num_envs  # a team's game: whole games (envs/teams.py)
        self.model, self.handle, self.load = model.eval(), handle, load
        self.version = -1
        self.best = -np.inf
        space = self.env.single_action_space
        self.clip = (space.low, space.high) if hasattr(space, "low") else None

    def step(self, out=None) -> dict[str, Any]:
        self.version = self.load(self.handle, self.model, self.version)
        returns = self._play()
        score = float(returns.mean())
        info: dict[str, Any] = {"metrics": {"eval_return_mean": score, "eval_return_std": float(returns.std()),
                                            "eval_version": float(self.version)}}
        if score >= self.best:  # the weights travel only with a new best or a tie (at a capped score, each tie)
            self.best = score
            info["policy"] = {"weights": to_flat(self.model.parameters()), "version": self.version,
                              "eval_episodes": self.episodes}
        return info

    def score(self, weights: np.ndarray) -> dict[str, float]:
        """Play ``weights`` (flat, as this evaluator sends them with a best) as an evaluation plays the newest: the
        run re-scores the best policy it kept before a resume goes on (``runtime/run/best_policy.py``)."""
        load_flat(self.model.parameters(), weights)
        self.version = -1  # the next evaluation pulls the newest weights again
        returns = self._play()
        return {"eval_return_mean": float(returns.mean()), "eval_return_std": float(returns.std()),
                "eval_episodes": self.episodes}

    def _play(self) -> np.ndarray:
        """One greedy episode on each env copy, from the same seeds every time; the returns."""
        obs, _ = self.env.reset(seed=self.seed)
        if hasattr(self.model, "reset_state"):  # a recurrent policy starts every episode from zeros
            self.model.reset_state()
        returns = np.zeros(self.episodes)
        done = np.zeros(self.episodes, dtype=bool)
        with torch.inference_mode():
            for _ in range(MAX_STEPS):
                action = self.model.greedy(torch.from_numpy(np.asarray(obs))).numpy()
                if self.clip is not None:
                    action = np.clip(action, *self.clip)
                obs, reward, terminated, truncated, _ = self.env.step(action)
                returns += np.where(done, 0.0, reward)
                done |= terminated | truncated
                if done.all():
                    break
        return returns

    def close(self) -> None:
        self.env.close()


def _make(env_id: str, make_model: Callable, episodes: int, source: str, index: int, seed: int, handles: dict):
    return Evaluator(env_id, make_model(), episodes, seed, handles[source], LOADERS[source])


def evaluator_roles(ctx, make_model: Callable[[], torch.nn.Module], source: str = "weights") -> tuple[Role, ...]:
    """The evaluator role for a program whose newest weights come from ``source`` (``weights`` or ``params``);
    none when ``ctx.eval_interval_steps`` is 0. ``make_model`` must be picklable (a ``functools.partial``)."""
    if not ctx.eval_interval_steps:
        return ()
    return (Role("evaluator", partial(_make, ctx.env_id, make_model, ctx.eval_episodes, source), count=1,
                 uses=(source,), interval_steps=ctx.eval_interval_steps, in_flight=1, cpus=0, scores_weights=True),)
