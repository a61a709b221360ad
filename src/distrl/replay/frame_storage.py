"""Replay storage that keeps each distinct pixel frame once, however many frame stacks hold it.

An Atari transition carries ``obs`` and ``next_obs``, each a stack of 4 frames: 8 frames, 56 KB,
of which consecutive transitions share all but one. This storage keeps frames in their own ring
and stores, per item, the ring positions of its stacks' frames, so a transition costs about one
84x84 frame (~7 KB) plus a few integers (the issue's target; Ape-X compresses at the actor instead).

Frames are de-duplicated within each inserted batch (an actor's chunk: its envs' consecutive steps)
and against the previous batch (the next chunk repeats an env's last frames), or with ``recent_frames``
against every frame written that recently (chunks of several actors interleave), by content: a 64-bit hash of every byte
of each frame (vectorised, no per-frame loop), with equal hashes then checked byte for byte, so two frames that differ
in one pixel are never merged.

Frames outlive the items that use them: the frame ring is ``frames_per_item`` times the item
capacity, and when it wraps over frames that live items still use, those items are reported by
:meth:`stale_items` and evicted by the replay, oldest first, before anything can read them.
"""

from __future__ import annotations

import numpy as np

from distrl.core.types import ArraySpec
from distrl.replay.memory import check_fits
from distrl.replay.storage import OverItemRing, RingStorage, load_prefix


class FrameStackStorage(OverItemRing):
    def __init__(self, spec: dict[str, ArraySpec], capacity: int, stack_fields: tuple[str, ...] = ("obs", "next_obs"),
                 frames_per_item: float = 1.25, prefault: bool = True, recent_frames: int | None = None):
        """``recent_frames``: how far back (in frames written) a new batch is checked against, for writers
        whose consecutive batches interleave (several actors); by default only the previous batch."""
        stacks = [spec[f] for f in stack_fields]
        if len({(s.shape, s.dtype) for s in stacks}) != 1 or len(stacks[0].shape) != 3:
            raise ValueError("frame-stack fields must share one [stack, height, width] shape and dtype")
        self.spec = spec
        self.stack_fields = stack_fields
        self.depth, *frame_shape = stacks[0].shape
        self.frame_shape = tuple(frame_shape)
        self.frame_dtype = np.dtype(stacks[0].dtype)
        self.frame_capacity = int(np.ceil(capacity * frames_per_item))
        inner = {k: s for k, s in spec.items() if k not in stack_fields}
        inner.update({f"{f}_frames": ArraySpec((self.depth,), "int64") for f in stack_fields})
        inner["chunk_first_frame"] = ArraySpec((), "int64")  # frame counter when the item's batch was written
        self.items = RingStorage(inner, capacity, prefault=prefault)
        check_fits(self.frame_capacity * int(np.prod(self.frame_shape)) * self.frame_dtype.itemsize,
                   f"a frame ring of {self.frame_capacity:,} frames")
        self.frames = np.empty((self.frame_capacity,) + self.frame_shape, dtype=self.frame_dtype)
        if prefault:
            self.frames.fill(0)
        self.frames_written = 0  # frames ever written; frame id f lives at f % frame_capacity
        words = int(np.prod(self.frame_shape)) * self.frame_dtype.itemsize
        if words % 8:
            raise ValueError("frame byte size must be a multiple of 8")
        self.recent_frames = recent_frames
        self._min_first = np.inf  # with recent_frames: a lower bound of the live items' oldest frames
        self._recent_hashes = np.zeros(0, dtype=np.uint64)  # frames of the last batch(es), by hash (sorted)
        self._recent_ids = np.zeros(0, dtype=np.int64)
        self._hash_weights = np.random.default_rng(12345).integers(1, 2**63, words // 8, dtype=np.uint64) | np.uint64(1)

    @property
    def bytes_per_item(self) -> float:
        """Item fields plus the frame ring's share per item slot (frame ring bytes / item capacity)."""
        frame_bytes = self.frames.nbytes / self.capacity
        return sum(s.nbytes for s in self.items.spec.values()) + frame_bytes

    @property
    def nbytes(self) -> int:
        return self.items.nbytes + self.frames.nbytes

    def write(self, items: dict[str, np.ndarray]) -> np.ndarray:
        n = len(items[self.stack_fields[0]])
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        stacked = np.concatenate([items[f].reshape((n * self.depth,) + self.frame_shape) for f in self.stack_fields])
        words = stacked.reshape(len(stacked), -1).view(np.uint64)
        hashes = np.einsum("ij,j->i", words, self._hash_weights)  # wraps mod 2^64: a hash of every byte
        ids = self._known_ids(words, hashes)
        new = np.flatnonzero(ids < 0)
        first, inverse = _distinct(words[new], hashes[new])
        if len(first) > self.frame_capacity:
            raise ValueError(f"a batch of {len(first)} distinct frames does not fit {self.frame_capacity}")
        new_ids = self.frames_written + np.arange(len(first))
        start = int(new_ids[0] % self.frame_capacity) if len(first) else 0
        head = min(len(first), self.frame_capacity - start)
        self.frames[start:start + head] = stacked[new[first[:head]]]
        self.frames[:len(first) - head] = stacked[new[first[head:]]]
        self.frames_written += len(first)
        ids[new] = new_ids[inverse]
        self._remember(hashes, ids)
        frame_ids = ids.reshape(len(self.stack_fields), n, self.depth)
        row = {k: v for k, v in items.items() if k not in self.stack_fields}
        for i, f in enumerate(self.stack_fields):
            row[f"{f}_frames"] = frame_ids[i]
        row["chunk_first_frame"] = np.full(n, ids.min(), dtype=np.int64)  # the oldest frame these items use
        self._min_first = min(self._min_first, int(ids.min()))
        return self.items.write(row)

    def _remember(self, hashes: np.ndarray, ids: np.ndarray) -> None:
        """Keep this batch's frames (and, with ``recent_frames``, the recent ones before it) for the next batch."""
        if self.recent_frames is not None:
            keep = self._recent_ids >= self.frames_written - self.recent_frames
            hashes = np.concatenate([hashes, self._recent_hashes[keep]])  # this batch first: its ids win
            ids = np.concatenate([ids, self._recent_ids[keep]])
        self._recent_hashes, where = np.unique(hashes, return_index=True)
        self._recent_ids = ids[where]

    def _known_ids(self, words: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """Ids of frames the previous batch already stored (an env's next chunk repeats its last frames),
        checked byte for byte and still in the ring; -1 for the others."""
        ids = np.full(len(hashes), -1, dtype=np.int64)
        if self._recent_hashes.size == 0:
            return ids
        pos = np.minimum(np.searchsorted(self._recent_hashes, hashes), self._recent_hashes.size - 1)
        candidate = self._recent_ids[pos]
        hit = np.flatnonzero((self._recent_hashes[pos] == hashes)
                             & (candidate >= self.frames_written - self.frame_capacity))
        if hit.size == 0:
            return ids
        stored = self.frames[candidate[hit] % self.frame_capacity].reshape(len(hit), -1).view(np.uint64)
        same = (stored == words[hit]).all(axis=1)
        ids[hit[same]] = candidate[hit[same]]
        return ids

    def stale_items(self) -> int:
        """How many of the oldest items use frames the ring has since overwritten (evict them before sampling)."""
        oldest_live_frame = self.frames_written - self.frame_capacity
        if self.size == 0 or oldest_live_frame <= 0:
            return 0
        starts_of = self.items.arrays["chunk_first_frame"]
        if self.recent_frames is not None:  # a batch may reuse frames older than the batch before: not ordered
            if oldest_live_frame <= self._min_first:
                return 0  # O(1) until an item may be stale
            starts = starts_of[self.items.oldest_slots(self.size)]
            stale = np.flatnonzero(starts < oldest_live_frame)
            count = int(stale[-1]) + 1 if stale.size else 0
            self._min_first = int(starts[count:].min()) if count < len(starts) else np.inf
            return count
        if starts_of[self.items.oldest_slots(1)[0]] >= oldest_live_frame:
            return 0  # the common case, checked in O(1)
        order = self.items.oldest_slots(self.size)
        starts = starts_of[order]  # non-decreasing, oldest first
        return int(np.searchsorted(starts, oldest_live_frame, side="left"))

    def read(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        rows = self.items.read(slots)
        out = {k: v for k, v in rows.items() if k in self.spec}
        for f in self.stack_fields:
            ids = rows[f"{f}_frames"] % self.frame_capacity
            out[f] = np.take(self.frames, ids.reshape(-1), axis=0).reshape(ids.shape + self.frame_shape)
        return out

    def state(self) -> tuple[dict[str, np.ndarray], dict]:
        arrays, counters = self.items.state()
        arrays = {f"item.{k}": v for k, v in arrays.items()}
        frames = self.frames[:min(self.frames_written, self.frame_capacity)]  # those ever written, as the item ring's
        arrays.update(frames=frames, recent_hashes=self._recent_hashes, recent_ids=self._recent_ids)
        return arrays, {**counters, "frames_written": self.frames_written}

    def load(self, arrays: dict[str, np.ndarray], counters: dict) -> None:
        self.items.load({k.split(".", 1)[1]: v for k, v in arrays.items() if k.startswith("item.")}, counters)
        load_prefix(self.frames, arrays["frames"], counters["frames_written"], "frames")
        self._recent_hashes, self._recent_ids = arrays["recent_hashes"].copy(), arrays["recent_ids"].copy()
        self.frames_written = counters["frames_written"]
        self._min_first = -np.inf  # unknown: the next check scans once

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """Names of the saved arrays (Replay.load asks for them)."""
        names = {f"item.{k}": None for k in self.items.arrays}
        names.update(frames=None, recent_hashes=None, recent_ids=None)
        return names


def _distinct(words: np.ndarray, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the distinct frames (first occurrences, in batch order) and each frame's index among them.
    Equal hashes are checked byte for byte, so frames that differ in one pixel are never merged."""
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    same = (words == words[first[inverse]]).all(axis=1)
    if not same.all():  # a hash collision between different frames: keep those frames apart
        extra = np.flatnonzero(~same)
        inverse = inverse.copy()
        inverse[extra] = len(first) + np.arange(len(extra))
        first = np.concatenate([first, extra])
    order = np.argsort(first, kind="stable")  # keep the batch's frame order in the ring
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse]
