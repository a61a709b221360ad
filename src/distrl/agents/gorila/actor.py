"""A GORILA bundle: an actor, its replay and a learner, in one process (paper, section 4).

The actor (the Ape-X transition actor with the epsilon ladder, sharing the learner's network) writes
transitions into the bundle's replay (prioritized by default, or uniform), or into its partition of the
global replay service; after each chunk the learner (``learner.py``) computes ``updates_per_unroll``
gradients and exchanges them with the parameter server. The bundle reports counts, not arrays.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from distrl.agents.common.exploration import EpsilonGreedy
from distrl.agents.common.transition_actor import (
    TransitionActor,
    TransitionSettings,
    chunk_items,
    chunk_spec,
    item_spec,
)
from distrl.agents.gorila.learner import BundleLearner
from distrl.core.protocols import ParamServerHandle, Stateless
from distrl.core.types import allocate
from distrl.envs import EnvSpec
from distrl.replay import PartitionWriter, Replay


class GorilaBundle(Stateless):
    def __init__(self, env_id: str, env: EnvSpec, cfg, index: int, seed: int, params: ParamServerHandle, model,
                 global_replay=None):
        self.cfg, self.index = cfg, index
        # interleaved: a bundle's learner samples its own replay, and a block of neighbouring rungs would leave
        # the last bundle's almost all greedy (eps 0.013 down to 0.0007 of 16 rungs): no failures to learn from
        explore = EpsilonGreedy.ladder(index, cfg.num_actors, cfg.num_envs, cfg.epsilon, cfg.epsilon_alpha,
                                       env.action_space.n, interleaved=True)
        # acts with the learner's network: the weights of the learner's last exchange (no priorities: the
        # bundle's replay gives new items the highest priority seen)
        self.actor = TransitionActor(env_id, env, TransitionSettings.of(cfg), seed, model, explore)
        spec = chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step)
        self.chunk = allocate(spec)
        if global_replay is not None:  # one replay for all bundles (a service): write our partition, sample all
            self.replay = PartitionWriter(global_replay, index, seed)
        elif cfg.prioritized:  # new items enter at the highest priority seen (Schaul et al. 2016)
            self.replay = Replay.prioritized(item_spec(spec), cfg.replay_capacity, alpha=cfg.priority_alpha, seed=seed)
        else:
            self.replay = Replay.uniform(item_spec(spec), cfg.replay_capacity, seed=seed)
        self.learner = BundleLearner(cfg, model, params, self.replay)

    def step(self, out=None) -> dict[str, Any]:
        cfg = self.cfg
        info = self.actor.unroll(self.chunk)
        if self.chunk["valid"].any():
            self.replay.add(chunk_items(self.chunk))
        applied = dropped = 0
        staleness = []
        t0 = time.perf_counter()
        if self.replay.size >= cfg.min_replay:
            applied, dropped, staleness = self.learner.gradients(cfg.updates_per_unroll)
        info.pop("transitions", None)
        losses = self.learner.take_losses()
        return {**info, "version": self.learner.version, "actor_index": self.index,
                "staleness": float(np.mean(staleness)) if staleness else 0.0, "shards_applied": applied,
                "shards_dropped": dropped, "learn_s": time.perf_counter() - t0,
                "nonfinite_skipped": self.learner.nonfinite,
                # the metrics' loss column, as Ape-X's learner writes it (the mean over the bundles' gradients)
                **({"metrics": {"loss": float(np.mean(losses))}} if losses else {})}

    def close(self) -> None:
        self.actor.close()
