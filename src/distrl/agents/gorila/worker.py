"""A GORILA bundle: an actor, its local replay and a learner, in one process (paper, section 4).

The actor (the Ape-X transition actor with epsilon-greedy exploration, sharing the learner's
network) writes transitions into the bundle's replay; the learner samples from it, computes a DQN
gradient against its target network, and sends it to the sharded parameter server, which applies
it or drops it as too stale. The target network is refreshed from the server every C global updates.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from distrl.agents.apex_dqn.actor import EpsilonGreedy
from distrl.agents.common.transition_actor import TransitionActor, chunk_items, chunk_spec, item_spec
from distrl.envs import EnvSpec
from distrl.ops import double_q_target, td_error
from distrl.replay import Replay
from distrl.runtime.batching import allocate
from distrl.runtime.shared_replay import PartitionWriter


class _NoPriorities(EpsilonGreedy):
    def td_errors(self, model, out, count: int) -> np.ndarray:
        return np.zeros(count, np.float32)  # a uniform local replay needs none


class GorilaBundle:
    def __init__(self, env_id: str, env: EnvSpec, cfg, index: int, seed: int, params, model):
        self.cfg = cfg
        self.params = params  # SharedShards (local) or RemoteShards (ray)
        self.model = model
        self.target = copy.deepcopy(model)
        self.actor = TransitionActor(env_id, env, cfg, index, seed, model, _NoPriorities(cfg, index, env.action_space.n))
        spec = chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step)
        self.chunk = allocate(spec)
        if cfg.replay == "global":  # one replay for all bundles, in shared memory: write ours, sample all
            self.replay = PartitionWriter(params.replay, index, seed)
        elif cfg.prioritized:  # new items enter at the highest priority seen (Schaul et al. 2016)
            self.replay = Replay.prioritized(item_spec(spec), cfg.replay_capacity, alpha=cfg.priority_alpha, seed=seed)
        else:
            self.replay = Replay.uniform(item_spec(spec), cfg.replay_capacity, seed=seed)
        self.versions = self.params.pull(self.model)
        self.target.load_state_dict(self.model.state_dict())
        self.last_target_sync = int(np.sum(self.versions))
        self.index = index

    def set_weights(self, flat, version) -> None:
        pass  # a bundle pulls from the parameter server itself

    def unroll(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        cfg = self.cfg
        info = self.actor.unroll(self.chunk)  # acts with self.model: the weights of the learner's last exchange
        if self.chunk["valid"].any():
            self.replay.add(chunk_items(self.chunk))
        applied = dropped = 0
        staleness = []
        t0 = time.perf_counter()
        if self.replay.size >= cfg.min_replay:
            for _ in range(cfg.updates_per_unroll):
                a, d, s = self._gradient()
                applied, dropped = applied + a, dropped + d
                staleness.append(s)
        out["steps"][0] = info["env_steps"]
        info.pop("transitions", None)
        return {**info, "version": int(np.sum(self.versions)), "actor_index": self.index,
                "staleness": float(np.mean(staleness)) if staleness else 0.0, "shards_applied": applied,
                "shards_dropped": dropped, "learn_s": time.perf_counter() - t0}

    def _gradient(self) -> tuple[int, int, float]:
        """One DQN gradient (Mnih et al. 2015 target, as GORILA; or double Q) from the current weights,
        sent to the parameter server, whose reply carries its latest weights: the next gradient's (and
        the actor's), in the same round trip. Staleness counts what others applied in between."""
        cfg = self.cfg
        if int(np.sum(self.versions)) - self.last_target_sync >= cfg.target_update_period:
            self.target.load_state_dict(self.model.state_dict())
            self.last_target_sync = int(np.sum(self.versions))
        batch = self.replay.sample(cfg.batch_size, beta=cfg.priority_beta) if cfg.prioritized else \
            self.replay.sample(cfg.batch_size)
        b = {k: torch.from_numpy(v) for k, v in batch.items.items()}
        with torch.no_grad():
            q_next = self.target(b["next_obs"])
            if cfg.double_q:
                y = double_q_target(b["reward"], b["discount"], self.model(b["next_obs"]), q_next)
            else:
                y = b["reward"] + b["discount"] * q_next.max(1).values
        delta = td_error(self.model(b["obs"]), b["action"], y)
        loss = (torch.from_numpy(batch.weights) * F.huber_loss(delta, torch.zeros_like(delta), reduction="none")).mean()
        self.model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm, foreach=True)
        if cfg.prioritized:
            self.replay.update_priorities(batch.slots, delta.detach().abs().numpy())
        applied, dropped, staleness, self.versions = self.params.exchange(self.model, self.versions)
        return applied, dropped, staleness

    def close(self) -> None:
        self.actor.close()
