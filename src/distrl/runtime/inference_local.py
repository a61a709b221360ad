"""SEED on the ``local`` runtime: env-actor processes talk to the inference thread through shared memory.

    actor i (process)                            learner process
      writes obs/reward/flags into slot i  ---->  inference thread: batches ready slots, one forward,
      1 byte on its pipe                          writes actions into slot i, 1 byte back
      reads actions from slot i            <----  completed unrolls -> queue -> learner (this thread)

The observation is never pickled: both sides map the same request and action arrays, and the
pipes carry one byte each way per step, which is all the signalling a step needs. An actor that
dies shows up as end-of-file on its pipe: the server drops its partial unroll at once, and the
coordinator starts a new actor in the same slot with a fresh seed.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import sys
import time
import traceback
from multiprocessing.connection import wait

import numpy as np

from distrl.core.types import ArraySpec, Topology
from distrl.runtime.inference_client import run_env_actor
from distrl.runtime.inference_loop import ServedBackend
from distrl.runtime.inference_server import RequestSpec
from distrl.runtime.process import (count_restart, die_with_parent, ignore_interrupts, interrupts_blocked,
                                    main_module_hidden, set_process_name, stop_processes)
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
        self.dead: queue.SimpleQueue = queue.SimpleQueue()  # slots whose actor left, for the coordinator
        self.on_disconnect = lambda slot: None

    def attach(self, slot: int, conn) -> None:
        """Thread-safe: the coordinator hands over a new actor's pipe; the loop adopts it on its next poll."""
        self._attach.put((slot, conn))

    def poll(self, timeout: float) -> list[int]:
        while not self._attach.empty():
            slot, conn = self._attach.get()
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
        self.dead.put(slot)

    def close(self) -> None:
        for conn in self.conns.values():
            conn.close()
        self.conns = {}
        self.shared.close()


class SharedMemoryLink:
    """Client end, in the actor process: write the request into our slot, signal, wait for the answer."""

    def __init__(self, handle, slot: int, conn):
        self.shared = SharedArrays.attach(handle)
        self.slot = slot
        self.conn = conn
        self.arrays = self.shared.view(slot)

    def request(self, arrays: dict[str, np.ndarray], timings: np.ndarray):
        a = self.arrays
        for k, v in arrays.items():
            a[k][...] = v
        a["timings"][...] = timings
        try:
            self.conn.send_bytes(_GO)
            self.conn.recv_bytes()
        except (EOFError, OSError):
            return None  # the server is gone: stop
        return a["actions"]


def env_actor_main(index: int, seed: int, make_actor, handle, conn) -> None:
    ignore_interrupts()
    die_with_parent()
    set_process_name(f"distrl-actor-{index}")
    try:
        actor = make_actor(index, seed, None)
        run_env_actor(actor, SharedMemoryLink(handle, index, conn))
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return
    except Exception:
        traceback.print_exc()
        sys.exit(1)


class LocalInferenceBackend(ServedBackend):
    """The coordinator's backend for topologies with an inference server (SEED) on ``local``."""

    name = "local"

    def __init__(self, topology: Topology, seed: int, torch_threads: int = 1):
        super().__init__(topology, seed)
        self.ctx = mp.get_context("spawn")
        n = topology.num_actors
        self.procs: list = [None] * n
        self.restarts = [0] * n
        self._pending_restarts = 0

    def start(self, learner) -> None:
        self._make_loop(learner, SharedMemoryTransport)
        for i in range(self.topology.num_actors):
            self._spawn(i)
        self.loop.start()

    def _spawn(self, i: int) -> None:
        seed = self.seed + 1000 * i + 7919 * self.restarts[i]
        parent_end, child_end = self.ctx.Pipe(duplex=True)
        args = (i, seed, self.topology.make_actor, self.transport.shared.handle(), child_end)
        p = self.ctx.Process(target=env_actor_main, args=args, name=f"distrl-actor-{i}", daemon=True)
        with interrupts_blocked(), main_module_hidden():
            p.start()
        child_end.close()
        self.procs[i] = p
        self.transport.attach(i, parent_end)

    def poll(self) -> int:
        while not self.transport.dead.empty():
            i = self.transport.dead.get()
            p = self.procs[i]
            p.join(timeout=1.0)
            if p.is_alive():
                p.kill()
                p.join(timeout=1.0)
            count_restart(self.restarts, i, p.exitcode, how="disconnected")
            self._spawn(i)
            self._pending_restarts += 1
        n, self._pending_restarts = self._pending_restarts, 0
        return n

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p is not None and p.is_alive()]

    def close(self) -> None:
        if self.loop is None:
            return
        self._stop_loop()
        for conn in list(self.transport.conns.values()):
            conn.close()  # actors blocked on their pipe see end-of-file and leave
        stop_processes(self.procs)
        self.transport.close()
        self.loop = None
