"""A replay: ring storage + a sampler (+ importance weights), with soft capacity and checkpoints.

Uniform, prioritized and FIFO replays are the same class with a different sampler (TorchRL's
storage/sampler/writer split); writers (adders) live on the actor side, in ``adders.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from distrl.core.types import ArraySpec
from distrl.ops import importance_weights
from distrl.replay.frame_storage import FrameStackStorage
from distrl.replay.samplers import FifoSampler, PrioritizedSampler, UniformSampler
from distrl.replay.storage import RingStorage


@dataclass
class SampledBatch:
    items: dict[str, np.ndarray]
    slots: np.ndarray  # where the items live, for priority updates
    probabilities: np.ndarray  # P(i) of each draw
    weights: np.ndarray  # importance weights (N P(i))^-beta / max (ones for uniform/FIFO)


class Replay:
    """``capacity`` is the hard size of the ring; ``soft_capacity`` (Ape-X) is the size :meth:`trim`
    brings it back to by evicting the oldest items, so actors can overfill it between trims."""

    def __init__(self, spec: dict[str, ArraySpec], capacity: int, sampler, soft_capacity: int | None = None,
                 seed: int = 0, prefault: bool = True, frame_stacks: tuple[str, ...] | None = None, storage=None,
                 bounds: dict[str, int] | None = None):
        """``frame_stacks`` names pixel frame-stack fields (e.g. ``("obs", "next_obs")``) to store with each
        distinct frame kept once (:class:`FrameStackStorage`, ~7 KB instead of 56 KB per Atari transition);
        ``storage`` is a ready one instead (e.g. a :class:`SequenceStorage`). ``bounds``: integer fields whose
        values lie in ``[0, bound)`` (a Discrete action), checked when a checkpoint is loaded: a stored value outside
        would fail the learner mid-run."""
        self.bounds = dict(bounds or {})
        if storage is not None:
            self.storage = storage
        elif frame_stacks:
            self.storage = FrameStackStorage(spec, capacity, frame_stacks, prefault=prefault)
        else:
            self.storage = RingStorage(spec, capacity, prefault=prefault)
        self.sampler = sampler
        self.soft_capacity = soft_capacity or capacity
        self.rng = np.random.default_rng(seed)
        self.evicted = 0  # items removed by trim (beyond ring overwrites)
        self.samples = 0

    @classmethod
    def prioritized(cls, spec, capacity, alpha=0.6, **kw) -> Replay:
        return cls(spec, capacity, PrioritizedSampler(capacity, alpha), **kw)

    @classmethod
    def uniform(cls, spec, capacity, **kw) -> Replay:
        return cls(spec, capacity, UniformSampler(capacity), **kw)

    @classmethod
    def fifo(cls, spec, capacity, **kw) -> Replay:
        return cls(spec, capacity, FifoSampler(capacity), **kw)

    @property
    def size(self) -> int:
        """Items that can be sampled."""
        return self.storage.size

    def trim(self) -> int:
        """Evict the oldest items beyond ``soft_capacity`` (Ape-X's periodic clean-up); returns how many."""
        excess = self.storage.size - self.soft_capacity
        if excess <= 0:
            return 0
        return self._evict_oldest(excess)

    def _evict_oldest(self, count: int) -> int:
        self.sampler.remove(self.storage.oldest_slots(count))
        self.storage.size -= count
        self.evicted += count
        return count

    def add(self, items: dict[str, np.ndarray], priorities: np.ndarray | None = None) -> np.ndarray:
        """Write ``items`` with one priority each (none: the sampler's rule for new items); returns their slots.
        A storage that may leave some out (``SequenceStorage``: sequences whose steps are gone) says which it
        wrote in ``kept`` (``None`` where it writes them all), and those keep their own priorities."""
        slots = self.storage.write(items)
        if priorities is not None and self.storage.kept is not None:
            priorities = np.asarray(priorities)[self.storage.kept]
        if len(slots):  # a sequence chunk may bring steps and no complete sequence
            self.sampler.insert(slots, priorities)
        stale = self.storage.stale_items()  # items whose shared frames were overwritten (frame storage)
        if stale:
            self._evict_oldest(stale)
        return slots

    def sample(self, batch: int, beta: float = 0.4) -> SampledBatch:
        slots, probs = self.sampler.sample(batch, self.rng, self.storage)
        self.samples += batch
        if isinstance(self.sampler, PrioritizedSampler):
            weights = importance_weights(probs, max(self.storage.size, 1), beta)
        else:
            weights = np.ones(batch)
        return SampledBatch(self.storage.read(slots), slots, probs, weights.astype(np.float32))

    def update_priorities(self, slots: np.ndarray, priorities: np.ndarray) -> None:
        self.sampler.update(slots, priorities)

    @property
    def bytes_per_item(self) -> int:
        return self.storage.bytes_per_item

    @property
    def bytes_per_step(self) -> float:
        """Replay bytes per env step held: one item is one step, except for storages that say otherwise."""
        return getattr(self.storage, "bytes_per_step", self.storage.bytes_per_item)

    @property
    def priority_total(self) -> float:
        """Sum of the sampling priorities (p^alpha); the item count for uniform and FIFO replays."""
        tree = getattr(self.sampler, "tree", None)
        return tree.total if tree is not None else float(self.size)

    # --- checkpoint -------------------------------------------------------------------------
    def save(self, folder: str | Path, name: str = "replay") -> None:
        """Contents, priorities, counters and the sampling RNG: a restored replay continues exactly."""
        folder = Path(folder)
        arrays, counters = self.storage.state()
        payload = {f"storage.{k}": np.ascontiguousarray(v) for k, v in arrays.items()}
        payload.update({f"sampler.{k}": np.ascontiguousarray(v) for k, v in self.sampler.state().items()})
        save_file(payload, str(folder / f"{name}.safetensors"))
        meta = {
            "storage": counters,
            "samples": self.samples,
            "evicted": self.evicted,
            "rng": self.rng.bit_generator.state,
        }
        (folder / f"{name}.json").write_text(json.dumps(meta))

    def load(self, folder: str | Path, name: str = "replay") -> None:
        folder = Path(folder)
        data = load_file(str(folder / f"{name}.safetensors"))
        meta = json.loads((folder / f"{name}.json").read_text())
        # arrays the saved replay lacks are left to the storage (a sequence storage fills per-sequence fields added
        # since; any other storage raises, which the trainer reports as a replay that does not fit the run)
        saved = {k: data[f"storage.{k}"] for k in self.storage.arrays if f"storage.{k}" in data}
        for field, bound in self.bounds.items():
            # a ring's own field, or a frame or sequence storage's
            for key in (field, f"item.{field}", f"step.{field}"):
                counters = meta["storage"].get("steps", {}) if key.startswith("step.") else meta["storage"]
                written = counters.get("inserted") if isinstance(counters, dict) else None
                values = saved.get(key)
                if values is None or not isinstance(written, int):  # (the counters are checked by the storage)
                    continue
                values = values[:written]  # an older checkpoint holds every slot, written or not
                if len(values) and (int(values.min()) < 0 or int(values.max()) >= bound):
                    raise ValueError(f"stored {field} values from {int(values.min())} to {int(values.max())}, where "
                                     f"the action space takes 0..{bound - 1}")
        self.storage.load(saved, meta["storage"])
        self.sampler.load({k.split(".", 1)[1]: v for k, v in data.items() if k.startswith("sampler.")})
        self.samples, self.evicted = meta["samples"], meta["evicted"]
        self.rng.bit_generator.state = meta["rng"]
