"""The ``local`` runtime (default): actor processes on one machine, data through shared memory.

    coordinator + learner (this process)
        | -- slot index -->  actor i (private pipe)  writes an unroll into shared slot
        | <-- slot index + small info --
        | weights: one shared buffer + version (seqlock), pulled by actors between unrolls

The coordinator owns the slots: each actor holds at most ``slots_per_actor`` of them (credit-based
flow control, so a fast actor cannot starve the others). An actor that dies (killed, segfault,
env exception) is noticed by ``poll`` and replaced with the same index and a fresh seed; the slots
it held go back to the free pool, so nothing leaks and nothing is handed out twice.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections import deque
from multiprocessing.connection import wait

from distrl.core.types import Topology
from distrl.runtime.sharded_params import shared_params
from distrl.runtime.batching import concatenate
from distrl.runtime.local_worker import actor_main
from distrl.runtime.process import count_restart, interrupts_blocked, main_module_hidden, stop_processes
from distrl.runtime.shared_memory import SharedArrays
from distrl.runtime.weights import SharedWeights



class LocalBackend:
    name = "local"

    def __init__(self, topology: Topology, seed: int, torch_threads: int = 1):
        self.topology = topology
        self.seed = seed
        self.torch_threads = torch_threads
        self.ctx = mp.get_context("spawn")
        n = topology.num_actors
        self.procs: list = [None] * n
        self.conns: list = [None] * n
        self.outstanding: list[set[int]] = [set() for _ in range(n)]
        self.restarts = [0] * n
        self.free: deque[int] = deque()
        self.ready: deque = deque()
        self._pending_restarts = 0
        self._last_poll = 0.0
        self._closed = False
        self.slots = self.weights = None

    def start(self, learner) -> None:
        topo, ctx = self.topology, self.ctx
        n_slots = max(topo.num_actors * topo.slots_per_actor, topo.batch_unrolls + topo.num_actors)
        self.slots = SharedArrays.create(topo.unroll_spec, (n_slots,))
        flat = learner.get_weights()
        self.weights = SharedWeights.create(flat.shape[0])
        self.weights.publish(flat, learner.version)
        self.stop = ctx.Array("b", [0], lock=False)
        self.stats = ctx.Array("d", 2 * topo.num_actors, lock=False)
        # Hogwild systems: the learner's model and optimizer statistics live in shared memory and
        # every actor process gets handles to them (torch sends shared tensors as file descriptors)
        self.shared = shared_params(learner) if topo.shared_model else None
        self.free.extend(range(n_slots))
        for i in range(topo.num_actors):
            self._spawn(i)
        self._dispatch()

    def _spawn(self, i: int) -> None:
        seed = self.seed + 1000 * i + 7919 * self.restarts[i]
        parent_end, child_end = self.ctx.Pipe(duplex=True)
        args = (i, seed, self.topology.make_actor, self.slots.handle(), self.weights.handle(), child_end,
                self.stop, self.stats, self.torch_threads, self.shared)
        p = self.ctx.Process(target=actor_main, args=args, name=f"distrl-actor-{i}", daemon=True)
        with interrupts_blocked(), main_module_hidden():
            p.start()
        child_end.close()
        self.procs[i], self.conns[i] = p, parent_end

    def _dispatch(self) -> None:
        """Hand free slots to the actors holding the fewest, up to ``slots_per_actor`` each."""
        cap = self.topology.slots_per_actor
        while self.free:
            live = [i for i in range(len(self.conns)) if self.conns[i] is not None and len(self.outstanding[i]) < cap]
            if not live:
                return
            i = min(live, key=lambda k: len(self.outstanding[k]))
            slot = self.free.popleft()
            try:
                self.conns[i].send(slot)
                self.outstanding[i].add(slot)
            except (BrokenPipeError, OSError):
                self.free.appendleft(slot)
                self._handle_death(i)

    def publish(self, weights_fn, version: int) -> None:
        if not self.topology.shared_model:  # Hogwild actors read the shared model directly
            self.weights.publish(weights_fn(), version)

    def next_batch(self):
        want = self.topology.batch_unrolls
        if len(self.ready) < want:
            conns = [c for c in self.conns if c is not None]
            for conn in wait(conns, timeout=0.05):
                i = self.conns.index(conn)
                try:
                    while conn.poll():
                        slot, info = conn.recv()
                        self.outstanding[i].discard(slot)
                        self.ready.append((slot, info))
                except (EOFError, OSError):
                    self._handle_death(i)
            if len(self.ready) < want:
                self._check_processes()
                return None
        items = [self.ready.popleft() for _ in range(want)]
        slots = [s for s, _ in items]
        batch = concatenate(self.topology.unroll_spec, [self.slots.view(s) for s in slots])
        return batch, [info for _, info in items], slots

    def release(self, slots) -> None:
        self.free.extend(slots)
        self._dispatch()

    def _handle_death(self, i: int) -> None:
        if self._closed or self.conns[i] is None:
            return
        p = self.procs[i]
        p.join(timeout=1.0)
        if p.is_alive():
            p.kill()
            p.join(timeout=1.0)
        self.conns[i].close()
        self.conns[i] = None
        self.free.extend(self.outstanding[i])  # the dead actor's slots come back
        self.outstanding[i].clear()
        count_restart(self.restarts, i, p.exitcode)
        self._spawn(i)
        self._pending_restarts += 1
        self._dispatch()

    def _check_processes(self) -> None:
        now = time.perf_counter()
        if now - self._last_poll < 0.1:
            return
        self._last_poll = now
        for i, p in enumerate(self.procs):
            if p is not None and self.conns[i] is not None and not p.is_alive():
                self._handle_death(i)

    def poll(self) -> int:
        """How many actors were restarted since the last call."""
        self._check_processes()
        n, self._pending_restarts = self._pending_restarts, 0
        return n

    def actor_stats(self) -> dict:
        if self.slots is None:
            return {}
        n = self.topology.num_actors
        return {"block_s": sum(self.stats[2 * i] for i in range(n)),
                "transport_s": sum(self.stats[2 * i + 1] for i in range(n))}

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p is not None and p.is_alive()]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.slots is None:
            return
        self.stop[0] = 1
        stop_processes(self.procs)
        for c in self.conns:
            if c is not None:
                c.close()
        self.ready.clear()
        self.slots.close()
        self.weights.close()
