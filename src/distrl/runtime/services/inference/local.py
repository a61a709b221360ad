"""The inference service on ``local``: env-actor processes talk to the inference thread through shared memory.

    actor i (process)                            learner process
      writes obs/reward/flags into slot i  ---->  inference thread: batches ready slots, one forward,
      1 byte on its pipe                          writes actions into slot i, 1 byte back
      reads actions from slot i            <----  completed unrolls -> queue -> learner (this thread)

The observation is never pickled: both sides map the same request and action arrays, and the
pipes carry one byte each way per step, which is all the signalling a step needs. An actor that
dies shows up as end-of-file on its pipe: the server drops its partial unroll at once, and the
backend starts a new actor in the same slot with a fresh seed (and a new pipe).
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from multiprocessing.connection import wait

import numpy as np

from distrl.core.types import ArraySpec
from distrl.runtime.services.base import OwnsSpawnedCopies
from distrl.runtime.services.inference.loop import ThreadedInference
from distrl.runtime.services.inference.server import RequestSpec
from distrl.runtime.shared_memory import SharedArrays

_GO = b"\x01"


class SharedMemoryTransport:
    """Server end: request and action arrays in shared memory, one pipe per slot for signalling."""

    def __init__(self, request: RequestSpec, action: ArraySpec, num_slots: int):
        specs = dict(request.arrays())
        specs["actions"] = ArraySpec((request.num_envs,) + action.shape, action.dtype)
        self.shared = SharedArrays.create(specs, (num_slots,))
        self.requests = self.shared.arrays
        self.actions = self.shared.arrays["actions"]
        self.conns: dict[int, object] = {}
        self._attach: queue.SimpleQueue = queue.SimpleQueue()
        self.on_disconnect = lambda slot: None

    def attach(self, slot: int, conn) -> None:
        """Thread-safe: the backend hands over a new actor's pipe; the loop adopts it on its next poll."""
        self._attach.put((slot, conn))

    def poll(self, timeout: float) -> list[int]:
        while not self._attach.empty():
            slot, conn = self._attach.get()
            if slot in self.conns:  # a restarted actor: whatever its predecessor left is dropped first
                self._lost(slot)
            self.conns[slot] = conn
        if not self.conns:
            time.sleep(min(timeout, 0.01))
            return []
        slot_of = {id(c): s for s, c in self.conns.items()}
        ready = []
        for conn in wait(list(self.conns.values()), timeout):
            slot = slot_of[id(conn)]
            try:
                conn.recv_bytes()
                ready.append(slot)
            except (EOFError, OSError):
                self._lost(slot)
        return ready

    def respond(self, slots: np.ndarray) -> None:
        for slot in slots.tolist():
            conn = self.conns.get(slot)
            if conn is None:
                continue
            try:
                conn.send_bytes(_GO)
            except (BrokenPipeError, OSError):
                self._lost(slot)

    def _lost(self, slot: int) -> None:
        conn = self.conns.pop(slot, None)
        if conn is not None:
            conn.close()
        self.on_disconnect(slot)

    def close(self) -> None:
        for conn in self.conns.values():
            conn.close()
        self.conns = {}
        self.shared.close()


class SharedMemoryLink:
    """Client end, in the actor process: write the request into our slot, signal, wait for the answer.
    Picklable (it travels to the actor's process); attaches to the shared arrays on first use. ``bytes``:
    what its requests and answers moved between processes (the runtime's bytes per env step)."""

    bytes = 0

    def __init__(self, handle, slot: int, conn):
        self.handle, self.slot, self.conn = handle, slot, conn
        self.arrays = None

    def __getstate__(self):
        return {"handle": self.handle, "slot": self.slot, "conn": self.conn}

    def __setstate__(self, state):
        self.__init__(state["handle"], state["slot"], state["conn"])

    def request(self, arrays: dict[str, np.ndarray], timings: np.ndarray):
        if self.arrays is None:
            self.shared = SharedArrays.attach(self.handle)
            self.arrays = self.shared.view(self.slot)
            # a request and its answer: the same sizes every time
            self._moved = sum(v.nbytes for v in arrays.values()) + timings.nbytes + self.arrays["actions"].nbytes
        a = self.arrays
        for k, v in arrays.items():
            a[k][...] = v
        a["timings"][...] = timings
        try:
            self.conn.send_bytes(_GO)
            self.conn.recv_bytes()
        except (EOFError, OSError):
            return None  # the server is gone: stop
        self.bytes += self._moved
        return a["actions"]

    def close(self) -> None:
        self.conn.close()


class SharedMemoryInference(ThreadedInference, OwnsSpawnedCopies):
    """The adapter: one slot per env actor; each (re)started actor gets a fresh pipe to its slot."""

    def __init__(self, spec, offsets: dict[str, int], num_slots: int, queue_size: int):
        super().__init__(spec, num_slots, SharedMemoryTransport, queue_size)
        self.offsets = offsets  # role -> its first slot
        self._ctx = mp.get_context("spawn")
        self._child_ends: dict[int, object] = {}

    def worker_handle(self, role: str, index: int):
        slot = self.offsets[role] + index
        parent_end, child_end = self._ctx.Pipe(duplex=True)
        self.transport.attach(slot, parent_end)
        self._child_ends[slot] = child_end
        return SharedMemoryLink(self.transport.shared.handle(), slot, child_end)

    def spawned(self, role: str, index: int) -> None:
        """The actor's process has its end of the pipe: close ours, so its death reads as end-of-file."""
        end = self._child_ends.pop(self.offsets[role] + index, None)
        if end is not None:
            end.close()
