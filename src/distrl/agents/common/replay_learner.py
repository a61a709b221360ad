"""The learner side of Ape-X-style systems (Ape-X DQN, Ape-X DDPG): sample the replay service as far as
its rate limiter allows, update, write |delta| priorities back.

The replay is a service the program owns (``runtime/services/replay.py``): actors feed it with their
initial priorities, its handle keeps the samples-per-insert ratio and counts its own inserts, and the
same handle works whether the replay lives in this process or in a Ray actor. Subclasses supply only
``update(batch) -> (loss, |delta|)``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
import torch

from distrl.agents.common.demos import DemoMixer
from distrl.agents.common.on_device import OnDevice
from distrl.agents.common.transition_actor import chunk_items
from distrl.core.protocols import ReplayHandle
from distrl.replay import SampledBatch


class ReplayLearner(OnDevice):
    max_updates_per_step = 64  # then the trainer gets a turn (metrics, checkpoints, weights to actors)
    _sampler: ThreadPoolExecutor | None = None  # overlap_transfers: draws and stages the next batch meanwhile
    _staged = None  # (the batch being updated on, its tensors already on the device)

    def __init__(self, cfg, replay: ReplayHandle, optimizers: Mapping[str, torch.optim.Optimizer],
                 demos: ReplayHandle | None = None):
        """``optimizers``: each optimizer under the hyperparameter name of its learning rate; ``demos``: a demo
        replay mixed into every batch (R2D3, ``agents/common/demos.py``)."""
        self.cfg = cfg
        self.replay = replay
        self.mixer = None if demos is None else DemoMixer(demos, cfg.demo_ratio, cfg.demo_mix, cfg.batch_size,
                                                          cfg.priority_beta)
        self.optimizers = dict(optimizers)
        self.lrs = {name: opt.param_groups[0]["lr"] for name, opt in self.optimizers.items()}
        self.version = 0
        self.updates = 0
        self.nonfinite = 0  # updates skipped because the loss or the gradient was not finite

    def update(self, batch: SampledBatch) -> tuple[float | None, np.ndarray | None]:
        """One update from ``batch``: (loss, |delta| as new priorities, or None for a uniform replay), or
        (None, None) if it was not applied."""
        raise NotImplementedError

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        for name, opt in self.optimizers.items():
            if name in values:
                self.lrs[name] = values[name]
                for group in opt.param_groups:
                    group["lr"] = values[name]

    def prefetch(self, on: bool) -> None:
        """The trainer's ``overlap_transfers`` for a learner that samples its replays: within a step, the next
        batch is drawn and sent to the device on a thread while the current update runs (Ape-X's learner
        prefetches its samples the same way: a draw may miss the priorities the update in flight will write).
        Draws and priority writes take turns under one lock; no draw is out between steps, when the backend
        inserts into the replays."""
        if self._sampler is not None:
            self._sampler.shutdown(wait=True)
        self._sampler = ThreadPoolExecutor(1, thread_name_prefix="distrl-sample") if on else None
        self._lock = threading.Lock()

    def _sample(self):
        """(batch, which elements are demos or None, their demo slots or None), or None if the replay (its rate
        limiter) has none to give. The demo slots travel with the batch: with prefetch, the mixer's own record of
        them is the next batch's by the time this one's priorities are written."""
        sampled = self.replay.sample(self.cfg.batch_size, beta=getattr(self.cfg, "priority_beta", 1.0))
        if sampled is None:
            return None
        if self.mixer is None:
            return sampled, None, None
        sampled, is_demo = self.mixer.mix(sampled)
        return sampled, is_demo, self.mixer.taken()

    def _draw(self):
        """What :meth:`_sample` gives, with the batch's tensors staged on the device (the prefetch thread)."""
        with self._lock:
            drawn = self._sample()
        if drawn is None:
            return None
        sampled = drawn[0]
        return *drawn, self.stage(dict(sampled.items, weights=sampled.weights))

    def step(self, batch=None) -> dict[str, float] | None:
        losses, tried, ahead = [], 0, None
        try:
            while tried < self.max_updates_per_step:
                if self._sampler is None:
                    drawn = self._sample()
                    if drawn is None:
                        break
                    sampled, is_demo, taken = drawn
                else:
                    drawn = ahead.result() if ahead is not None else self._draw()
                    ahead = None
                    if drawn is None:
                        break
                    sampled, is_demo, taken, staged = drawn
                    self._staged = (sampled, staged)
                    if tried + 1 < self.max_updates_per_step:
                        ahead = self._sampler.submit(self._draw)
                tried += 1
                try:
                    loss, td_abs = self.update(sampled)
                finally:
                    self._staged = None
                if loss is None:  # a non-finite loss or gradient: not applied, priorities left as they were
                    self.nonfinite += 1
                    continue
                if self._sampler is not None:
                    with self._lock:
                        self._write_priorities(sampled, is_demo, td_abs, taken)
                else:
                    self._write_priorities(sampled, is_demo, td_abs, taken)
                self.updates += 1
                self.version += 1
                losses.append(loss)
        finally:
            if ahead is not None:  # an update raised with a draw out: it ends before the error leaves the step
                wait([ahead])  # (the trainer then checkpoints and closes: nothing may sample meanwhile)
        if not tried:
            return None
        out = {**self.lrs, "nonfinite_skipped": float(self.nonfinite)}
        if losses:
            out["loss"] = float(np.mean(losses))
        if self.mixer is not None:
            out.update(self.mixer.metrics())
        return out

    def _write_priorities(self, sampled: SampledBatch, is_demo, td_abs, taken) -> None:
        """``taken``: the batch's demo slots, as the mixer gave them right after its mix (with prefetch, the
        mixer has mixed the next batch since)."""
        if td_abs is None:  # a uniform replay (QT-Opt's training buffer): no priorities to write
            return
        if is_demo is not None:
            agent = self.mixer.update(is_demo, td_abs, taken)
            self.replay.update_priorities(sampled.slots[agent], td_abs[agent])
        else:
            self.replay.update_priorities(sampled.slots, td_abs)

    def tensors(self, batch: SampledBatch) -> dict[str, torch.Tensor]:
        """The sampled items and their importance weights on the learner's device (already sent there, when
        the batch was drawn ahead)."""
        if self._staged is not None and self._staged[0] is batch:
            return self.batch_tensors(self._staged[1])
        return self.batch_tensors(dict(batch.items, weights=batch.weights))

    def finite_step(self, loss: torch.Tensor, params, optimizer: torch.optim.Optimizer) -> bool:
        """Back-propagate ``loss``, clip, and step ``optimizer`` only if the loss and the gradient are finite."""
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        loss = self.reduce_gradients(loss, params)  # several learners: the mean over them
        norm = float(torch.nn.utils.clip_grad_norm_(params, self.cfg.max_grad_norm, foreach=True))
        if not (math.isfinite(norm) and math.isfinite(float(loss.detach()))):
            optimizer.zero_grad(set_to_none=True)
            return False
        optimizer.step()
        return True

    def counters(self) -> dict:
        out = {"updates": self.updates, "version": self.version, "nonfinite_skipped": self.nonfinite}
        if self.mixer is not None:  # a resumed run continues the same demo draws
            out["demo_rng"] = self.mixer.rng.bit_generator.state
        return out

    def load_counters(self, c: dict) -> None:
        self.updates, self.version = c.get("updates", 0), c.get("version", 0)
        self.nonfinite = c.get("nonfinite_skipped", 0)
        if self.mixer is not None and isinstance(c.get("demo_rng"), dict):
            try:
                self.mixer.rng.bit_generator.state = c["demo_rng"]
            except (TypeError, ValueError, KeyError):
                pass  # not a generator state this numpy reads: the draws start afresh (only their pattern differs)


def chunk_to_insert(chunk: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """A chunk's real transitions and the priorities its actor gave them, ready for ``Replay.add``."""
    return chunk_items(chunk), chunk["priority"][chunk["valid"]]

