"""R2D2 actor: an epsilon-greedy recurrent policy over a vector env, emitting overlapping sequences.

Each env copy carries its own LSTM state, zeroed at episode starts. Every vector step goes into a
``SequenceAdder`` together with the state the core had *before* the step, so every emitted sequence
knows the state it started from (the paper's "stored state"). A chunk holds the ``unroll_length``
vector steps once and, for the sequences completed during them (at most one per env and step), only
where they end and their stored states, with a ``valid`` mask: overlapping sequences neither travel
nor sit in the replay twice (``SequenceStorage``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from distrl.agents.common.exploration import EpsilonGreedy
from distrl.core.protocols import Stateless, WeightsReader
from distrl.core.types import ArraySpec
from distrl.envs import EnvSpec, EpisodeTracker, make_vec_env
from distrl.models import FlatParameters, RecurrentQNetwork
from distrl.ops import (
    advantage_learning_target,
    sequence_priority,
    trainable_steps,
    transformed_n_step_q_target,
)
from distrl.replay import SequenceAdder

STEP_FIELDS = ("obs", "action", "reward", "discount")
STATE_FIELDS = ("initial_state", "burn_in_state", "episode_start")
SEQUENCE_FIELDS = ("seq_env", "seq_end", "seq_length", *STATE_FIELDS)


def chunk_spec(env: EnvSpec, cfg, state_size: int) -> dict[str, ArraySpec]:
    """An actor's chunk: its ``unroll_length x num_envs`` steps once (time-major), its env streams and chunk
    counter, and where each sequence it completed ends (at most one per env and step), with the priority the actor
    gave it where ``initial_priority`` is ``actor``."""
    E, T = cfg.num_envs, cfg.unroll_length
    K = E * T
    scored = {"priority": ArraySpec((K,), "float32", batch_axis=0)} if cfg.initial_priority == "actor" else {}
    return {**scored, "step.obs": ArraySpec((K,) + env.obs_shape, env.obs_dtype.name, batch_axis=0),
            "step.action": ArraySpec((K,) + env.action_shape, env.action_dtype.name, batch_axis=0),
            "step.reward": ArraySpec((K,), "float32", batch_axis=0),
            "step.discount": ArraySpec((K,), "float32", batch_axis=0),
            "stream": ArraySpec((E,), "int64", batch_axis=0),
            "chunk": ArraySpec((E,), "int64", batch_axis=0),
            "seq_env": ArraySpec((K,), "int64", batch_axis=0),
            "seq_end": ArraySpec((K,), "int64", batch_axis=0),
            "seq_length": ArraySpec((K,), "int64", batch_axis=0),
            "initial_state": ArraySpec((K, 2 * state_size), "float32", batch_axis=0),
            "burn_in_state": ArraySpec((K, 2 * state_size), "float32", batch_axis=0),
            "episode_start": ArraySpec((K,), "bool", batch_axis=0),
            "valid": ArraySpec((K,), "bool", batch_axis=0)}


def step_spec(spec: dict[str, ArraySpec]) -> dict[str, ArraySpec]:
    """One env step as the replay stores it."""
    return {k: ArraySpec(spec[f"step.{k}"].shape[1:], spec[f"step.{k}"].dtype) for k in STEP_FIELDS}


def state_spec(spec: dict[str, ArraySpec]) -> dict[str, ArraySpec]:
    """What a sequence stores besides its steps."""
    return {k: ArraySpec(spec[k].shape[1:], spec[k].dtype) for k in STATE_FIELDS}


def sequences_to_insert(chunk: dict[str, np.ndarray]):
    """A chunk for ``Replay.add``: all its steps and its real sequences, with the priorities its actor gave them
    (``initial_priority=actor``) or none: then they enter at the highest seen (the learner's |delta| replaces it at
    the first sample)."""
    valid = chunk["valid"]
    items = {k: chunk[k] for k in ("stream", "chunk", *(f"step.{f}" for f in STEP_FIELDS))}
    items.update({k: chunk[k][valid] for k in SEQUENCE_FIELDS})
    return items, chunk["priority"][valid] if "priority" in chunk else None


class SequenceScorer:
    """Initial priorities of an actor's sequences from the Q values it acted with (Ape-X, arXiv:1803.00933, section
    3: actors compute initial priorities, which R2D2 keeps): the learner's eta max |delta| + (1 - eta) mean |delta|
    over the steps the learner would train, with the actor's copy standing in for the online and the target network
    (the double-Q argmax is then the max) and its Q values those of the state it carried (the stored state: for the
    same weights the learner's replay computes the same values; burn-in refreshes the state for newer weights). The
    default (``initial_priority=max``) enters a fresh sequence at the highest priority seen so far instead (PER's
    rule): it is sampled first whatever its error.

    The last ``sequence_length + unroll_length`` vector steps are kept in a ring: a sequence spans at most
    ``sequence_length`` of them and is scored at the end of the chunk it ends in, at most ``unroll_length`` steps
    later; as in the adder, a sequence is its env's last ``length`` steps at the step it ends (an autoreset step,
    which the adder skips, ends no sequence and starts none)."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.size = cfg.sequence_length + cfg.unroll_length
        self.ring: dict[str, np.ndarray] = {}
        self.t = 0
        self.ended: list[tuple[np.ndarray, ...]] = []  # (ring position, env, length, episode start) per step

    def record(self, q, action, reward, discount, ended: dict[str, np.ndarray]) -> None:
        """One vector step: the Q values ``[E, A]`` it acted on, what it did and got, the sequences it ended."""
        if not self.ring:
            self.ring = {"q": np.zeros((self.size,) + q.shape, np.float32),
                         "action": np.zeros((self.size, len(q)), np.int64),
                         "reward": np.zeros((self.size, len(q)), np.float32),
                         "discount": np.zeros((self.size, len(q)), np.float32)}
        p = self.t % self.size
        self.ring["q"][p], self.ring["action"][p] = q, action
        self.ring["reward"][p], self.ring["discount"][p] = reward, discount
        self.t += 1
        if len(ended["env"]):
            self.ended.append((np.full(len(ended["env"]), p), ended["env"], ended["length"], ended["episode_start"]))

    def scores(self) -> np.ndarray:
        """The priorities of the sequences ended since the last call, in the order they ended."""
        if not self.ended:
            return np.zeros(0, np.float32)
        end, env, length, start = (np.concatenate(x) for x in zip(*self.ended))
        self.ended.clear()
        cfg = self.cfg
        k = np.arange(cfg.sequence_length)[:, None]
        mask = k < length  # [L, B]: real steps first, as the replay hands them to the learner
        rows = (end - length + 1 + k) % self.size
        q = torch.from_numpy(self.ring["q"][rows, env])  # [L, B, A]
        action = torch.from_numpy(self.ring["action"][rows, env])
        reward = torch.from_numpy(self.ring["reward"][rows, env] * mask)
        discount = torch.from_numpy(self.ring["discount"][rows, env] * mask)
        mask_t = torch.from_numpy(mask)
        values = q.max(-1).values
        values_tp1 = torch.cat([values[1:], values.new_zeros(1, len(env))])
        target = transformed_n_step_q_target(reward, discount, values_tp1, cfg.n_step, cfg.value_rescale_eps)
        target = advantage_learning_target(target, q, action, cfg.advantage_learning, cfg.value_rescale_eps)
        train = trainable_steps(mask_t, discount, cfg.n_step, cfg.burn_in, torch.from_numpy(start))
        delta = (target - q.gather(-1, action.unsqueeze(-1)).squeeze(-1)) * train
        return sequence_priority(delta, cfg.priority_eta, mask=train).numpy()


def write_step(out: dict[str, np.ndarray], t: int, filled: int, adder: SequenceAdder, obs, action, reward, terminated,
               truncated, valid, state, gamma: float, q=None, scorer: SequenceScorer | None = None) -> int:
    """Vector step ``t`` of a chunk (taken from ``obs`` with recurrent ``state``, acting on Q values ``q``) into
    ``out``, with the sequences it ends; returns how many sequences ``out`` holds now. Shared by the actor and SEED's
    server-side emitter; a ``scorer`` records the step for the sequences' initial priorities."""
    E = len(valid)
    rows = slice(t * E, (t + 1) * E)
    out["step.obs"][rows], out["step.action"][rows], out["step.reward"][rows] = obs, action, reward
    out["step.discount"][rows] = gamma * (1.0 - terminated.astype(np.float32))
    ended = adder.step(terminated, truncated, valid, state)
    if scorer is not None:
        scorer.record(q, action, out["step.reward"][rows], out["step.discount"][rows], ended)
    k = len(ended["env"])
    seqs = slice(filled, filled + k)
    out["seq_env"][seqs], out["seq_end"][seqs], out["seq_length"][seqs] = ended["env"], t, ended["length"]
    out["initial_state"][seqs], out["burn_in_state"][seqs] = ended["initial_state"], ended["burn_in_state"]
    out["episode_start"][seqs] = ended["episode_start"]
    out["valid"][seqs] = True
    return filled + k


def episodes_to_chunks(episodes, cfg, state_size: int) -> list[dict]:
    """Whole recorded episodes (demonstrations) as chunks, one stream each, cut into sequences as an actor
    would; a recording carries no recurrent state, so every stored state is zero (the learner's burn-in
    refreshes it; at an episode's first step zero is the exact state, and that sequence trains its burn-in
    steps too). An episode that stops with neither flag is closed as truncated."""
    out = []
    for i, (obs, actions, rewards, term, trunc) in enumerate(episodes.closed(cfg.reward_clip)):
        T = len(actions)
        chunk = {
            "step.obs": np.zeros_like(obs[:T]),
            "step.action": np.zeros_like(actions),
            "step.reward": np.zeros(T, np.float32),
            "step.discount": np.zeros(T, np.float32),
            "stream": np.array([i]),
            "chunk": np.array([0]),
            "seq_env": np.zeros(T, np.int64),
            "seq_end": np.zeros(T, np.int64),
            "seq_length": np.zeros(T, np.int64),
            "initial_state": np.zeros((T, 2 * state_size), np.float32),
            "burn_in_state": np.zeros((T, 2 * state_size), np.float32),
            "episode_start": np.zeros(T, bool),
            "valid": np.zeros(T, bool),
        }
        adder = SequenceAdder(1, cfg.sequence_length, cfg.overlap, 2 * state_size, cfg.burn_in)
        filled, zero = 0, np.zeros((1, 2 * state_size), np.float32)
        for t in range(T):
            filled = write_step(chunk, t, filled, adder, obs[t:t + 1], actions[t:t + 1], rewards[t:t + 1],
                                term[t:t + 1], trunc[t:t + 1], np.ones(1, bool), zero, cfg.gamma)
        out.append(chunk)
    return out


class SequenceActor(Stateless):
    def __init__(self, env_id: str, env: EnvSpec, cfg, seed: int, model: RecurrentQNetwork, explore: EpsilonGreedy,
                 weights: WeightsReader, index: int = 0):
        self.cfg, self.model, self.explore, self.weights = cfg, model, explore, weights
        self.flat = FlatParameters(model)
        # whole Atari games: a lost life is no episode end (Kapturowski et al. 2019, section 2.3)
        self.env = make_vec_env(env_id, cfg.num_envs, seed, life_loss_ends=False)
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        self.adder = SequenceAdder(cfg.num_envs, cfg.sequence_length, cfg.overlap, 2 * model.state_size, cfg.burn_in)
        self.scorer = SequenceScorer(cfg) if cfg.initial_priority == "actor" else None
        self.streams = index * cfg.num_envs + np.arange(cfg.num_envs)  # (actor, env) pairs: the replay's step streams
        self.chunks = 0
        self.state = model.initial_state(cfg.num_envs)
        self.obs, _ = self.env.reset(seed=seed)
        self.prev_done = np.zeros(cfg.num_envs, dtype=bool)
        self.tracker = EpisodeTracker(cfg.num_envs)
        self.version, self.since_sync = -1, 0

    def step(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        if self.version < 0 or self.since_sync >= self.cfg.actor_sync_steps:
            newer = self.weights.pull(self.version)
            if newer is not None:
                self.flat.load(newer[0])
                self.version, self.since_sync = newer[1], 0
        cfg = self.cfg
        out["valid"][:] = False
        out["stream"][:], out["chunk"][:] = self.streams, self.chunks
        self.chunks += 1
        filled, env_s, infer_s = 0, 0.0, 0.0
        returns, lengths = [], []
        for t in range(cfg.unroll_length):
            t0 = time.perf_counter()
            state_in = torch.cat(self.state, dim=1).numpy()
            with torch.inference_mode():
                q, state = self.model.step(torch.from_numpy(self.obs), self.state)
            action = self.explore.choose(q.numpy(), self.rng)
            t1 = time.perf_counter()
            next_obs, reward, terminated, truncated, _ = self.env.step(action)
            env_s += time.perf_counter() - t1
            infer_s += t1 - t0
            if cfg.reward_clip is not None:
                reward = np.clip(reward, -cfg.reward_clip, cfg.reward_clip)
            valid = ~self.prev_done
            done = (terminated | truncated) & valid
            finished_returns, finished_lengths = self.tracker.step(reward, done, valid)
            returns.extend(finished_returns.tolist())
            lengths.extend(finished_lengths.tolist())
            filled = write_step(out, t, filled, self.adder, self.obs, action, reward, terminated, truncated, valid,
                                state_in, cfg.gamma, q.numpy(), self.scorer)
            keep = torch.from_numpy(~(done | ~valid)).float().unsqueeze(1)  # a new episode starts from zeros
            self.state = (state[0] * keep, state[1] * keep)
            self.prev_done = done
            self.obs = next_obs
        if self.scorer is not None:
            out["priority"][:filled] = self.scorer.scores()
        self.since_sync += cfg.unroll_length
        return {"env_steps": int(cfg.unroll_length * cfg.num_envs), "version": self.version, "episode_returns": returns,
                "episode_lengths": lengths, "env_s": env_s, "infer_s": infer_s, "sequences": filled}

    def close(self) -> None:
        self.env.close()
