"""Transfers that overlap the learner's updates (``overlap_transfers``): where the learner computes on a GPU, the
newest weights leave the device without a wait and the next batch is staged on it while the current update runs.

A replay learner that samples its own batches draws ahead itself (``prefetch``), only when asked for: on this
2-core CPU the extra thread made Ape-X DQN's CartPole run 20.2 -> 25.7 s, and it is not yet measured on a GPU.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from distrl.models.device import WeightsToHost


def overlaps(setting: str, device, runtime: str) -> bool:
    """``overlap_transfers``: ``auto`` is on where the learner computes on a GPU and its components run beside it
    (local, ray). On ``inline`` they step in the learner's thread, between its iterations: nothing runs meanwhile that
    the transfers could overlap, and a program that is on-policy there (A2C: policy lag 0) must find each
    update's weights published before its actors step again, which the delayed publish would not guarantee."""
    return setting == "on" or (setting == "auto" and device.type == "cuda" and runtime != "inline")


class Transfers:
    """How a trainer takes batches and publishes weights: plainly, or overlapped with the updates."""

    def __init__(self, learner, program, cfg, device):
        self.learner = learner
        self.to_host: WeightsToHost | None = None
        self.stager: ThreadPoolExecutor | None = None
        self.ahead = None  # the next batch's staging (a future), taken by the iteration after
        self.prefetching = False
        if learner is None or not overlaps(cfg.overlap_transfers, device, cfg.runtime):
            return
        self.to_host = WeightsToHost(device)
        if program.consumes is not None and cfg.num_learners == 1:
            self.stager = ThreadPoolExecutor(1, thread_name_prefix="distrl-stage")
        elif cfg.num_learners == 1 and cfg.overlap_transfers == "on":
            self.prefetching = True
            learner.prefetch(True)

    def next_batch(self, backend, timeout: float):
        """(batch, infos, token) from the consumed channel, or None. Overlapped, the batch after it, if already
        delivered, is handed to the staging thread to be copied to the learner's device while this one's update
        runs (its slots held until its own update, like this one's); the next call takes it staged. A batch nobody
        staged ahead is staged in the update, as without overlap (learner time)."""
        if self.stager is None:
            return backend.next_batch(timeout)
        if self.ahead is not None:
            item, self.ahead = self.ahead.result(), None
        else:
            item = backend.next_batch(timeout)
            if item is None:
                return None
        after = backend.next_batch(0.0)
        if after is not None:
            self.ahead = self.stager.submit(lambda: (self.learner.stage(after[0]), *after[1:]))
        return item

    def publish(self, backend) -> None:
        """The learner's newest weights to the components (overlapped: the previous copy first, then this one's
        copy starts; it is published by a later iteration, once on the host)."""
        if self.to_host is None:
            backend.publish(self.learner.get_weights, self.learner.version)
            return
        self.publish_copied(backend, wait=True)
        self.to_host.start(self.learner.device_weights(), self.learner.version)

    def publish_copied(self, backend, wait: bool = False) -> None:
        """Publish the last update's weights if they reached the host (or once they do, with ``wait``)."""
        copied = self.to_host.ready(wait) if self.to_host is not None else None
        if copied is not None:
            backend.publish(lambda: copied[0], copied[1])

    def close(self) -> None:
        if self.stager is not None:  # a batch being staged finishes first (its arrays are slot views)
            self.stager.shutdown(wait=True)
            self.stager = self.ahead = None
        elif self.prefetching:
            self.learner.prefetch(False)
            self.prefetching = False
