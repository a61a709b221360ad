"""Served unrolls into R2D2's chunks, on the inference server's side (SEED with a replay learner).

The server completes, per actor slot, unrolls of ``unroll_length`` steps of its ``num_envs`` envs with the
action and the LSTM state each step started from (the policy's ``core_state`` output). The emitter keeps a
``SequenceAdder`` per slot and writes each unroll as the chunk an R2D2 actor would have sent: its steps
once, and where each completed sequence ends with its stored state. The replay's streams are the slots'
envs; an unroll that opens a new stream (an actor joined, or came back after a crash) starts a new adder
and skips a chunk number, so no sequence ever spans two actors' lives.
"""

from __future__ import annotations

import numpy as np

from distrl.agents.r2d2.actor import SequenceScorer, write_step
from distrl.core.types import allocate
from distrl.replay import SequenceAdder


class SequenceEmitter:
    def __init__(self, cfg, spec, state_size: int):
        self.cfg, self.spec, self.state_size = cfg, spec, state_size
        self.adders: dict[int, SequenceAdder] = {}
        self.chunks: dict[int, int] = {}
        self.scorers: dict[int, SequenceScorer] = {}  # initial_priority=actor: from the Q values the server acted on

    def __call__(self, unroll: dict[str, np.ndarray], info: dict):
        cfg, slot = self.cfg, info["slot"]
        E = cfg.num_envs
        if info.get("restarted") or slot not in self.adders:
            self.adders[slot] = SequenceAdder(E, cfg.sequence_length, cfg.overlap, 2 * self.state_size, cfg.burn_in)
            self.chunks[slot] = self.chunks.get(slot, -1) + 1  # one number skipped: nothing is spliced onto it
            if cfg.initial_priority == "actor":
                self.scorers[slot] = SequenceScorer(cfg)
        self.chunks[slot] += 1
        out = allocate(self.spec)
        out["valid"][:] = False
        out["stream"][:], out["chunk"][:] = slot * E + np.arange(E), self.chunks[slot]
        reward = unroll["rewards"]
        if cfg.reward_clip is not None:
            reward = np.clip(reward, -cfg.reward_clip, cfg.reward_clip)
        filled, scorer = 0, self.scorers.get(slot)
        q_values = unroll["q_values"] if scorer is not None else [None] * cfg.unroll_length
        for t in range(cfg.unroll_length):
            filled = write_step(out, t, filled, self.adders[slot], unroll["obs"][t], unroll["actions"][t], reward[t],
                                unroll["terminated"][t], unroll["truncated"][t], unroll["valid"][t],
                                unroll["core_state"][t], cfg.gamma, q_values[t], scorer)
        if scorer is not None:
            out["priority"][:filled] = scorer.scores()
        return out, {**info, "sequences": filled}
