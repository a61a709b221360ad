"""Replay storage for R2D2's overlapping sequences that keeps every env step once.

R2D2 (Kapturowski et al. 2019, section 2.3) replays sequences of m steps that overlap by m/2, so storing
each sequence whole keeps every step twice (and, with 4-frame stacks, every frame 8 times: the memory
blow-up peers' users report). Here an actor's chunk carries its steps once ([T, E] of them, time-major)
and, for each sequence it completed, only where it ends: (env, last step, length) and its stored state.
The storage writes the steps into a ring of steps and keeps, per sequence, the ring positions of its
steps (``int32``, 4 bytes per step of the sequence); a sequence reaching back into an earlier chunk of the
same env stream takes those steps from the stream's history (the ids of its last m - 1 steps).
Pixel stacks go into a :class:`FrameStackStorage`, so each distinct frame is kept once as well.

Streams are (actor, env) pairs numbered by the actor; a chunk also carries the actor's chunk counter, so
a sequence is only built from history when the stream's previous chunk is the one just before it (a
restarted actor, or chunks arriving out of order, never splice steps of another episode), and only while
those steps are still in the ring (a stream that lags a whole ring behind gets its sequence dropped, not
the replay emptied). Sequences whose steps the ring overwrites later are reported by :meth:`stale_items`
and evicted oldest first; a cached lower bound of their first steps makes that O(1) until one may be stale.
"""

from __future__ import annotations

import numpy as np

from distrl.core.types import ArraySpec
from distrl.replay.frame_storage import FrameStackStorage
from distrl.replay.storage import OverItemRing, RingStorage

DESCRIPTOR_FIELDS = ("seq_env", "seq_end", "seq_length")


class SequenceStorage(OverItemRing):
    def __init__(self, step_spec: dict[str, ArraySpec], state_spec: dict[str, ArraySpec], length: int,
                 capacity: int, step_capacity: int, frame_stacks: tuple[str, ...] = (), prefault: bool = True):
        """``step_spec``: one env step's fields; ``state_spec``: per-sequence fields (the stored states);
        ``capacity`` sequences backed by a ring of ``step_capacity`` steps (``frame_stacks``: pixel fields)."""
        self.L, self.step_spec, self.state_spec = length, step_spec, state_spec
        self.spec = {**{k: ArraySpec((length,) + s.shape, s.dtype) for k, s in step_spec.items()},
                     "mask": ArraySpec((length,), "bool"), **state_spec}  # what read() returns per sequence
        if frame_stacks:
            self.steps = FrameStackStorage(
                step_spec,
                step_capacity,
                frame_stacks,
                frames_per_item=1.1,
                prefault=prefault,
                recent_frames=min(step_capacity, 16384),
            )  # chunks of several actors interleave
        else:
            self.steps = RingStorage(step_spec, step_capacity, prefault=prefault)
        self.frame_stacks = frame_stacks
        inner = {"positions": ArraySpec((length,), "int32"), "first_step": ArraySpec((), "int64"),
                 "length": ArraySpec((), "int32"), **state_spec}
        self.items = RingStorage(inner, capacity, prefault=prefault)
        self.history = np.full((0, length - 1), -1, dtype=np.int64)  # per stream: ids of its last L - 1 steps
        self.last_chunk = np.zeros(0, dtype=np.int64)  # per stream: the chunk counter its history comes from
        self.dropped = 0  # sequences whose earlier steps were not in the stream's history (or the ring)
        self.kept: np.ndarray | None = None  # which sequences of the last chunk written were kept
        self._min_first = np.inf  # a lower bound of the live sequences' first steps

    @property
    def nbytes(self) -> int:
        return self.items.nbytes + self.steps.nbytes

    @property
    def bytes_per_item(self) -> float:
        return self.nbytes / self.capacity

    @property
    def bytes_per_step(self) -> float:
        """All the storage's bytes over the env steps it holds when full (the step ring's capacity)."""
        return self.nbytes / self.steps.capacity

    @property
    def step_bytes(self) -> int:
        """One env step's fields stored once, a pixel stack counted as its one new frame: the baseline."""
        return sum(s.nbytes // (s.shape[0] if k in self.frame_stacks else 1) for k, s in self.step_spec.items())

    def write(self, chunk: dict[str, np.ndarray]) -> np.ndarray:
        """Write a chunk's steps (``step.<field>`` [T * E, ...], time-major), then its sequences."""
        streams = chunk["stream"].astype(np.int64)
        E = len(streams)
        steps = {k: chunk[f"step.{k}"] for k in self.step_spec}
        T = len(next(iter(steps.values()))) // E
        first_id = self.steps.inserted
        self.steps.write(steps)
        ids = (first_id + np.arange(T * E, dtype=np.int64)).reshape(T, E).T  # [E, T]: each env's steps in order
        self._grow(int(streams.max()) + 1)
        counter = chunk["chunk"].astype(np.int64)
        follows = self.last_chunk[streams] == counter - 1
        history = np.where(follows[:, None], self.history[streams], -1)
        extended = np.concatenate([history, ids], axis=1)  # [E, L - 1 + T]
        self.history[streams], self.last_chunk[streams] = extended[:, -(self.L - 1):], counter

        env, end, n = (chunk[k].astype(np.int64) for k in DESCRIPTOR_FIELDS)
        offsets = np.arange(self.L)
        real = offsets[None, :] < n[:, None]
        columns = np.where(real, (self.L - 1) + end[:, None] - n[:, None] + 1 + offsets[None, :],
                           (self.L - 1) + end[:, None])  # padding points at the last real step (masked on read)
        step_ids = extended[env[:, None], columns]
        complete = (step_ids >= max(self._oldest_live(), 0)).all(axis=1)  # all in the stream and still in the ring
        self.dropped += int((~complete).sum())
        keep = np.flatnonzero(complete)
        self.kept = keep  # which of the chunk's sequences were written: ``Replay.add`` keeps their priorities alone
        row = {"positions": (step_ids[keep] % self.steps.capacity).astype(np.int32), "first_step": step_ids[keep, 0],
               "length": n[keep].astype(np.int32), **{k: chunk[k][keep] for k in self.state_spec}}
        if keep.size:
            self._min_first = min(self._min_first, int(step_ids[keep, 0].min()))
        return self.items.write(row)

    def _oldest_live(self) -> int:
        """The oldest step id still in the step ring (frames included)."""
        return self.steps.inserted - self.steps.size + self.steps.stale_items()

    def _grow(self, streams: int) -> None:
        if streams > len(self.last_chunk):
            extra = streams - len(self.last_chunk)
            self.history = np.concatenate([self.history, np.full((extra, self.L - 1), -1, dtype=np.int64)])
            self.last_chunk = np.concatenate([self.last_chunk, np.full(extra, -2, dtype=np.int64)])

    def stale_items(self) -> int:
        """How many of the oldest sequences use steps the step ring has overwritten (evict before sampling).
        Sequences of different streams are not ordered by their first step, so this counts up to the
        newest stale one: a few older, still intact sequences may go with it."""
        if self.size == 0:
            return 0
        oldest_live = self._oldest_live()
        if oldest_live <= self._min_first:
            return 0  # the common case, in O(1)
        first = self.items.arrays["first_step"][self.items.oldest_slots(self.size)]
        stale = np.flatnonzero(first < oldest_live)
        count = int(stale[-1]) + 1 if stale.size else 0
        self._min_first = int(first[count:].min()) if count < len(first) else np.inf
        return count

    def read(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        rows = self.items.read(slots)
        positions = rows["positions"].astype(np.int64)
        steps = self.steps.read(positions.reshape(-1))
        mask = np.arange(self.L)[None, :] < rows["length"][:, None]
        out = {}
        for k in self.step_spec:
            values = steps[k].reshape(positions.shape + steps[k].shape[1:])
            values[~mask] = 0  # padding reads as zeros, as a padded sequence would
            out[k] = values
        out["mask"] = mask
        out.update({k: rows[k] for k in self.state_spec})
        return out

    def state(self) -> tuple[dict[str, np.ndarray], dict]:
        items, item_counters = self.items.state()
        steps, step_counters = self.steps.state()
        arrays = {**{f"item.{k}": v for k, v in items.items()}, **{f"step.{k}": v for k, v in steps.items()},
                  "history": self.history, "last_chunk": self.last_chunk}
        return arrays, {**item_counters, "steps": step_counters, "dropped": self.dropped}

    def load(self, arrays: dict[str, np.ndarray], counters: dict) -> None:
        """``arrays`` as :meth:`state` gave them. A per-sequence field added since the replay was saved (R2D2's
        ``episode_start``) is filled with zeros: what the version that saved it did not have, it did not do."""
        items = {k[5:]: v for k, v in arrays.items() if k.startswith("item.")}
        written = len(next(iter(items.values())))
        for name, array in self.items.arrays.items():
            if name not in items and name in self.state_spec:
                items[name] = np.zeros((written,) + array.shape[1:], dtype=array.dtype)
        self.items.load(items, counters)
        self.steps.load({k[5:]: v for k, v in arrays.items() if k.startswith("step.")}, counters["steps"])
        self.history, self.last_chunk = arrays["history"].copy(), arrays["last_chunk"].copy()
        self.dropped = counters["dropped"]
        self._min_first = -np.inf  # unknown: the next check scans once

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """Names of the saved arrays (Replay.load asks for them)."""
        names = {f"item.{k}": None for k in self.items.arrays}
        names.update({f"step.{k}": None for k in self.steps.arrays})
        names.update(history=None, last_chunk=None)
        return names
