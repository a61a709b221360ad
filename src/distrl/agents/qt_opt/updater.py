"""QT-Opt's Bellman updater: labels transitions with targets, apart from the trainer (arXiv:1806.10293, section 5).

In QT-Opt the expensive half of a Q-learning step, the max over next actions (CEM on the target networks for
every sampled transition), runs in separate Bellman-updater workers, so it scales apart from the trainers,
which only regress Q(s, a) on finished targets. Each step here samples ``updater_batch`` transitions (a share
from the offline dataset, the rest from the actors' replay partitions), computes

    a* = CEM argmax_a Q_polyak(s', a),   y = r + gamma^n (1 - done) min(Q_polyak(s', a*), Q_lagged(s', a*))

(``ops.clipped_double_q_target``) and writes (s, a, y, version) into the training buffer, a replay service
whose rate limiter paces the updaters to the trainer. ``version`` is the learner version whose target networks
made y: the trainer reports its own version minus it as target staleness.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from distrl.agents.common.evaluator import from_weights
from distrl.agents.qt_opt.offline import Layout
from distrl.core.protocols import Stateless
from distrl.core.types import ArraySpec
from distrl.ops import clipped_double_q_target

IDLE_S = 0.01  # how long a step with no data to label waits before it returns (the runtime grants the next)


def targets_spec(env, batch: int) -> dict[str, ArraySpec]:
    """One updater output: ``batch`` labelled transitions."""
    return {"obs": ArraySpec((batch,) + env.obs_shape, env.obs_dtype.name, batch_axis=0),
            "action": ArraySpec((batch,) + env.action_shape, env.action_dtype.name, batch_axis=0),
            "target": ArraySpec((batch,), "float32", batch_axis=0),
            "version": ArraySpec((batch,), "int64", batch_axis=0),
            "valid": ArraySpec((batch,), "bool", batch_axis=0)}


TARGET_FIELDS = ("obs", "action", "target", "version")


def target_item_spec(spec: dict[str, ArraySpec]) -> dict[str, ArraySpec]:
    """One item of the training buffer (one labelled transition), from an updater output's spec."""
    return {k: ArraySpec(spec[k].shape[1:], spec[k].dtype) for k in TARGET_FIELDS}


def target_items(output: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], None]:
    """An updater output's labelled transitions, for the training buffer (uniform: no priorities)."""
    valid = output["valid"]
    return {k: output[k][valid] for k in TARGET_FIELDS}, None


class TransitionSource:
    """Draws an updater batch: ``offline_ratio`` of it from the offline rows once the online replay holds
    ``min_replay`` transitions, all of it from them before; with no offline data, online only (or nothing yet)."""

    def __init__(self, online, offline, layout: Layout, offline_ratio: float, min_replay: int, seed: int):
        self.online, self.offline, self.layout = online, offline, layout
        self.ratio, self.min_replay = offline_ratio, min_replay
        self.rng = np.random.default_rng(seed)
        self.ready = False  # the online replay only grows: once it holds min_replay, no need to ask again

    def sample(self, n: int) -> tuple[dict[str, np.ndarray] | None, int]:
        """(transitions, how many came from the offline data), or (None, 0) when there is nothing to draw yet."""
        self.ready = self.ready or (self.online is not None and self.online.size >= self.min_replay)
        ready = self.ready
        if self.offline is None:
            return (self.online.sample(n, self.rng), 0) if ready else (None, 0)
        k = int(round(self.ratio * n)) if ready else n
        rows = self.offline.get()
        parts = [self.layout.unpack(rows[self.rng.integers(0, len(rows), k)])] if k else []
        if k < n:
            parts.append(self.online.sample(n - k, self.rng))
        return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}, k


class BellmanUpdater(Stateless):
    def __init__(self, cfg, env, seed: int, model, weights, online, offline):
        self.cfg, self.model, self.weights = cfg, model.eval(), weights
        self.source = TransitionSource(online, offline, Layout.of(env), cfg.offline_ratio, cfg.min_replay, seed)
        self.generator = torch.Generator().manual_seed(seed)
        self.version, self.since_sync = -1, cfg.updater_sync_steps
        torch.manual_seed(seed)

    def step(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        if self.since_sync >= self.cfg.updater_sync_steps or self.version < 0:
            self.version = from_weights(self.weights, self.model, self.version)
            self.since_sync = 0
        batch, offline = self.source.sample(self.cfg.updater_batch) if self.version >= 0 else (None, 0)
        if batch is None:
            out["valid"][:] = False
            time.sleep(IDLE_S)
            return {"env_steps": 0, "targets": 0, "idle_s": IDLE_S}  # waiting for data, not labelling
        t0 = time.perf_counter()
        with torch.inference_mode():
            nxt = torch.from_numpy(batch["next_obs"])
            best, q_polyak = self.model.polyak.argmax(nxt, self.generator)
            q_lagged = self.model.lagged.q(nxt, best)
            y = clipped_double_q_target(torch.from_numpy(batch["reward"]), torch.from_numpy(batch["discount"]),
                                        q_polyak, q_lagged)
        out["obs"][:] = batch["obs"]
        out["action"][:] = batch["action"]
        out["target"][:] = y.numpy()
        out["version"][:] = self.version
        out["valid"][:] = True
        self.since_sync += 1
        return {"env_steps": 0, "version": self.version, "targets": len(y), "offline_share": offline / len(y),
                "learn_s": time.perf_counter() - t0}  # labelling is the learning half the trainer does not do
