"""The inference server's thread: dynamic batching over any transport.

SEED runs inference next to the learner, on its device, in threads of the learner's process
(the paper's "inference threads"); this is one such thread. It waits for the first request, then
keeps collecting until a request from every connected actor is in (at most ``max_batch``) or
``max_wait_s`` has passed since that first one, so a slow actor never holds the others' actions beyond
the wait. An actor counts as connected from its first request until its transport says it left, so the
batch follows the actors that run (an autoscaled run's, remote actors that joined), and slots no actor
holds cost no wait. New weights published by the
learner are swapped in between batches, never during one. Completed unrolls go to a bounded queue:
when the learner falls behind, the loop stops serving and the actors wait (back-pressure instead of
unbounded memory).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np

from distrl.core.protocols import ChannelSource
from distrl.runtime.services.base import ServiceAdapter
from distrl.runtime.services.inference.server import InferenceServer
from distrl.runtime.streams import put_until


class ServerTransport(Protocol):
    """How requests reach the loop: ``requests`` arrays ``[slot, ...]`` (see ``RequestSpec``) filled
    by the transport, ``actions`` ``[slot, E, ...]`` read by it."""

    requests: dict[str, np.ndarray]
    actions: np.ndarray

    def poll(self, timeout: float) -> list[int]:
        """Slots whose request has fully arrived (each at most once until answered)."""

    on_disconnect: Callable[[int], None]  # set by the loop; called from poll/respond when an actor leaves

    def respond(self, slots: np.ndarray) -> None: ...


class InferenceLoop(threading.Thread):
    def __init__(self, server: InferenceServer, transport: ServerTransport, max_batch: int, max_wait_s: float,
                 queue_size: int):
        super().__init__(name="distrl-inference", daemon=True)
        self.server = server
        self.transport = transport
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.queue_size = queue_size  # completed unrolls held at the least; at most one per actor connected beyond
        self.unrolls: queue.Queue = queue.Queue(maxsize=queue_size)
        self.error: BaseException | None = None
        self._stop_event = threading.Event()
        self._weights = None  # the newest published (flat, version); only the publisher writes it
        self._loaded = None  # the one the policy was last handed; only this thread writes it
        self._ready: list[int] = []  # slots whose request is in, not yet answered
        self._connected: set[int] = set()  # slots heard from since their actor last left
        transport.on_disconnect = self.disconnect

    @property
    def connected(self) -> set[int]:
        """The slots the batch waits for: heard from since their actor last left."""
        return set(self._connected)

    def set_weights(self, flat: np.ndarray, version: int) -> None:
        self._weights = (flat, version)  # picked up between batches by the loop

    def disconnect(self, slot: int) -> None:
        """An actor left (called in this thread by the transport): forget its request and partial unroll."""
        self.server.drop(slot)
        self._connected.discard(slot)
        if slot in self._ready:
            self._ready.remove(slot)

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        try:
            while not self._stop_event.is_set():
                self._step()
        except BaseException as e:  # surfaced to the learner by the backend
            self.error = e

    def _step(self) -> None:
        # read once, never cleared here: clearing after the read would lose a set published in between
        pending = self._weights
        if pending is not None and pending is not self._loaded:
            self.server.policy.set_weights(*pending)
            self._loaded = pending
        if not self._ready:
            self._ready.extend(self.transport.poll(0.05))
            if not self._ready:
                return
        self._connected.update(self._ready)
        deadline = time.perf_counter() + self.max_wait_s
        while len(self._ready) < min(self.max_batch, len(self._connected)):
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            arrived = self.transport.poll(left)
            self._ready.extend(arrived)
            self._connected.update(arrived)
        ready, self._ready = self._ready[:self.max_batch], self._ready[self.max_batch:]
        slots = np.asarray(ready, dtype=np.int64)
        req = self.transport.requests
        final = req["final"][slots, 0]
        if final.any():  # retired actors' last words: their unrolls completed, no new step served
            done = slots[final]
            self.server.finish(done, req["obs"][done], req["rewards"][done], req["terminated"][done],
                               req["truncated"][done])
            self._connected.difference_update(done.tolist())
            slots = slots[~final]
        if len(slots):
            out = self.server.serve(slots, req["obs"][slots], req["rewards"][slots], req["terminated"][slots],
                                    req["truncated"][slots], req["timings"][slots])
            self.transport.actions[slots] = out["actions"]
        self.transport.respond(np.asarray(ready, dtype=np.int64))
        # the bound follows the actors that run, not the slots made for the most an autoscaled run may start: 2
        # actors holding 8 actors' unrolls ran twice as far behind the learner (SEED's policy lag 277 -> 630)
        self.unrolls.maxsize = max(self.queue_size, len(self._connected))  # only this thread puts: read in put
        for item in self.server.take():
            put_until(self.unrolls, item, self._stop_event, 0.1)


class ThreadedInference(ServiceAdapter, ChannelSource):
    """The inference service where actors live in other processes (``local``, ``ray``): the server and
    its loop thread in the trainer's process on one side of a transport, completed unrolls out to the
    backend's channel (:meth:`take`), the learner's weights in (:meth:`publish`)."""

    def __init__(self, spec, num_slots: int, make_transport, queue_size: int):
        from distrl.runtime.services.inference.server import RequestSpec

        self.spec = spec
        self.emits = spec.emits
        policy = spec.make_policy()
        self.server = InferenceServer(policy, spec.obs, num_slots, spec.num_envs, spec.unroll_length,
                                      spec.make_emitter() if spec.make_emitter is not None else None)
        self.transport = make_transport(RequestSpec(spec.obs, spec.num_envs), policy.outputs["actions"], num_slots)
        self.loop = InferenceLoop(self.server, self.transport, spec.max_batch, spec.max_wait_s, queue_size=queue_size)
        self._started = False

    def publish(self, weights_fn, version: int) -> None:
        # a copy: the loop thread loads it between batches, later than this call, and the array handed over
        # may be a buffer the trainer writes again (a GPU learner's host copy, models/device.WeightsToHost)
        self.loop.set_weights(np.array(weights_fn(), copy=True), version)
        if not self._started:  # the first weights are in: serve
            self.loop.start()
            self._started = True

    def take(self, timeout: float):
        """One completed ``(unroll, info)``, or ``None`` after ``timeout``; the loop's error, if it died."""
        if self.loop.error is not None:
            raise self.loop.error
        try:
            return self.loop.unrolls.get(timeout=timeout)
        except queue.Empty:
            return None

    def stats(self, whole_run: bool = False) -> dict:
        out = dict(self.server.stats(whole_run))
        if whole_run:
            out.update(actor_wait_s=self.server.totals.wait_s, unrolls_dropped=self.server.unrolls_dropped)
        return out

    def close(self) -> None:
        if self._started:
            self.loop.stop()
            self.loop.join(timeout=2.0)
        self.transport.close()
