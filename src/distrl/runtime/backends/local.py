"""The ``local`` runtime (default): one process per component on one machine, data through shared memory.

    trainer + learner (this process)
        | -- step grant (+ a free slot index) -->  component (private pipe)  writes its output into the slot
        | <-- slot index + small info --
        | services: weights in one shared buffer (seqlock), parameter shards and partitioned replays
        |           as shared tensors, an inference server's request/action arrays in shared memory

The backend owns the slots: a component holds at most ``role.in_flight`` grants (credit-based flow
control, so a fast actor cannot starve the others). Where a role's output goes is the program's
business: a channel (the learner takes batches of slots, then releases them), a replay (inserted here
when the replay's rate limiter admits it, then the slot is free again), or nowhere (the info is a
report). A component that dies (killed, segfault, env exception) is noticed and replaced with the same
index and a fresh seed; the slots it held go back to the pool, so nothing leaks and nothing is handed
out twice.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

from distrl.core.program import Channel, Program
from distrl.core.types import ArraySpec
from distrl.runtime.backends.batching import concatenate
from distrl.runtime.backends.host import ServiceHost
from distrl.runtime.backends.local_worker import ERROR, FINISH, GO, SET, worker_main
from distrl.runtime.backends.placement import (
    ServiceFactories,
    Worker,
    component_seed,
    counted_uses,
    drain_into_replays,
    emits_to_channel,
    emits_to_replay,
    inference_queue_size,
    slot_count,
    slot_offsets,
    timed_uses,
    users,
)
from distrl.runtime.backends.process import (
    Restarts,
    process_context,
    start_process,
    stop_processes,
)
from distrl.runtime.services.base import OwnsSpawnedCopies
from distrl.runtime.services.constant import SharedMemoryConstant
from distrl.runtime.services.inference.local import SharedMemoryInference
from distrl.runtime.services.param_server import SharedParamServer
from distrl.runtime.services.replay import LocalReplay, SharedPartitionedReplay
from distrl.runtime.services.shared import on_loopback
from distrl.runtime.services.weights import SharedMemoryWeights
from distrl.runtime.shared_memory import SharedArrays


@dataclass
class LocalWorker(Worker):
    """A component as ``local`` tracks it: its process (``handle``), its pipe and its row of the stats."""

    conn: Any = None  # the backend's end of its private pipe; None while it has no process (parked)
    row: int = 0  # its row of the shared ``stats`` array
    outstanding: list = field(default_factory=list)  # steps granted and not yet back (slots, or None)
    granted_at: float = 0.0  # when its oldest outstanding step was granted (the stuck-step watch)
    last_error: str = ""  # the traceback it sent before it died


class LocalBackend(ServiceHost):
    name = "local"
    elastic = True
    worker_record = LocalWorker

    @staticmethod
    def refuses(program: Program, num_learners: int) -> str | None:
        """A producer is granted new steps when the learner releases a batch's slots (up to ``in_flight``
        outstanding each), not when an output arrives, so a first batch larger than the producers' steps in flight
        never forms and nothing is ever released: the run would wait forever (measured: 0 env steps). (``inline``
        steps producers as needed; on ``ray`` a batch that large fills.) Granting on arrival, bounded by the free
        slots, would lift this; it changes when every local producer steps, so it waits for a measured change of its
        own."""
        if program.consumes is None:
            return None
        batch = program.services[program.consumes].batch * num_learners
        producers = program.producers(program.consumes)  # (none where a service writes them: SEED's inference)
        room = sum(r.count * r.in_flight for r in producers)
        if not producers or batch <= room:
            return None
        role = producers[0]
        need = -(-batch // role.in_flight)
        learners = f" ({num_learners} learners x {batch // num_learners})" if num_learners > 1 else ""
        per = " per learner" if num_learners > 1 else ""
        return (f"a learner batch of {batch} {program.consumes}{learners} never fills on local: {role.count} "
                f"{role.name}(s) keep at most {role.in_flight} steps each in flight ({room} in all); use num_actors >= "
                f"{need} or a batch of at most {room // num_learners}{per}")

    def __init__(self, seed: int, torch_threads: int = 1, step_timeout_s: float = 300.0,
                 max_restarts: int = 10):
        super().__init__(seed)
        self.torch_threads, self.step_timeout_s = torch_threads, step_timeout_s
        self.max_restarts = max_restarts
        self._errors_seen: dict[str, int] = {}  # tracebacks the components sent, printed once per run
        self.ctx = process_context()
        self.slots: dict[str, SharedArrays] = {}  # per emitting role
        self.free: dict[str, deque] = {}
        self.ready: deque = deque()  # (role name, slot, info) in the consumed channel
        self.pending: deque = deque()  # (worker, slot, info) waiting for their replay to admit them
        self._pending_restarts = 0
        self._last_check = 0.0
        self._closed = False
        self.control = None
        self._reaping: list = []  # (process, since when) of parked components, until they have exited

    # --- services --------------------------------------------------------------------------------
    share = staticmethod(on_loopback)

    def open(self, program: Program) -> dict:
        return self.open_program(program, ServiceFactories(
            weights=lambda name, spec: SharedMemoryWeights(),
            param_server=lambda name, spec: SharedParamServer(spec),
            replay=LocalReplay,
            partitioned_replay=SharedPartitionedReplay,
            constant=lambda name, spec: SharedMemoryConstant(spec),
            inference=lambda name, spec: SharedMemoryInference(spec, slot_offsets(program, name), users(program, name),
                                                               queue_size=inference_queue_size(program, name)),
        ))

    def set_hyperparameters(self, values, components) -> None:
        for adapter in self.adapters.values():
            adapter.set_hyperparameters(values)
        if components:
            self.hyper.update(components)  # a restarted component gets them too
            for w in self.workers:
                self._send(w, (SET, dict(components)))

    # --- components ------------------------------------------------------------------------------
    def start(self, weights) -> None:
        program = self.program
        for w in self.start_services(weights):
            w.restart_log = Restarts(self.max_restarts, errors=self._errors_seen)
        for role in program.roles:
            if role.emits is not None:
                n = slot_count(program, role, role.count)
                self.slots[role.name] = SharedArrays.create(role.output, (n,))
                self.free[role.name] = deque(range(n))
        self.control = SharedArrays.create({"stop": ArraySpec((1,), "int8"),
                                            "stats": ArraySpec((len(self.workers), 3), "float64")})
        for row, w in enumerate(self.workers):
            w.row = row
            if not w.parked:
                self._spawn(w)
        self._grant_steps()

    def _in_flight(self, w: LocalWorker) -> int:
        return len(w.outstanding)

    def _park(self, w: LocalWorker) -> None:
        """Stop a retired component: told to finish (``core.protocols.Finishes``: what it still holds goes out), its
        pipe closes, so it exits once it has (as when the backend goes, where it says nothing more); its process is
        reaped later (``_check_processes``), not waited for here."""
        if w.retiring:
            try:
                w.conn.send((FINISH, None))
            except (BrokenPipeError, OSError):
                pass
        w.conn.close()
        w.conn = None
        self._reaping.append((w.handle, time.monotonic()))
        w.handle, w.parked, w.retiring = None, True, False

    def role_activity(self, role: str) -> tuple[float, float]:
        """(seconds blocked, seconds busy) of ``role``'s components so far, as they measure themselves: blocked
        waiting for a grant, busy in ``step``."""
        if self.control is None:
            return 0.0, 0.0
        rows = [w.row for w in self.workers if w.role.name == role]
        s = self.control.arrays["stats"]
        return float(s[rows, 0].sum()), float(s[rows, 2].sum())

    def _spawn(self, w: LocalWorker) -> None:
        role = w.role
        seed = component_seed(self.seed, w.position, w.index, w.restarts)
        handles = {name: self.adapters[name].worker_handle(role.name, w.index) for name in role.uses}
        uses = (timed_uses(self.program, role), counted_uses(self.program, role))
        parent_end, child_end = self.ctx.Pipe(duplex=True)
        slots = self.slots[role.name].handle() if role.name in self.slots else None
        args = (role.name, w.index, seed, role.make, handles, uses, slots, self.control.handle(), w.row, child_end,
                self.torch_threads, self.shared)
        p = start_process(self.ctx, worker_main, args, f"distrl-{w.name}")
        child_end.close()
        for name in role.uses:
            adapter = self.adapters[name]
            if isinstance(adapter, OwnsSpawnedCopies):
                adapter.spawned(role.name, w.index)
        w.handle, w.conn, w.outstanding = p, parent_end, []
        if self.hyper:
            self._send(w, (SET, dict(self.hyper)))

    def _roles_with_room(self) -> set[str]:
        """The emitting roles with a free slot within what their running components may hold: an autoscaled role's
        slots are made for ``max_actors``, and 2 actors filling 8 actors' slots would run 4x as far ahead of the
        learner (measured: APPO's policy lag on CartPole 186 -> 722 updates, twice the env steps to 475)."""
        if not any(role.active is not None for role in self.program.roles):  # every component runs: as before
            return {name for name, free in self.free.items() if free}
        running: dict[str, int] = {}
        for w in self.workers:
            if w.role.active is not None and not w.parked:
                running[w.role.name] = running.get(w.role.name, 0) + 1
        return {role.name for role in self.program.roles if self.free.get(role.name)
                and (role.active is None  # every component runs: the slots are its own
                     or self.slots[role.name].leading[0] - len(self.free[role.name])
                     < slot_count(self.program, role, running.get(role.name, 0)))}

    def _send(self, w: LocalWorker, message) -> bool:
        if w.conn is None:
            return False
        try:
            w.conn.send(message)
            return True
        except (BrokenPipeError, OSError):
            self._handle_death(w)
            return False

    def _grant(self, w: LocalWorker) -> bool:
        """One more step for ``w`` (with a free slot if its role emits); False if none can be given."""
        if w.role.name in self.free:
            if not self.free[w.role.name]:
                return False
            slot = self.free[w.role.name].popleft()
            if not self._send(w, (GO, slot)):
                self.free[w.role.name].appendleft(slot)
                return False
        elif not self._send(w, (GO, None)):
            return False
        if not w.outstanding:
            w.granted_at = time.monotonic()
        w.outstanding.append(slot if w.role.name in self.free else None)
        return True

    def _grant_steps(self) -> None:
        """Grant steps to the components holding the fewest, up to their role's ``in_flight`` each
        (periodic roles only on :meth:`request`; emitting roles only while their role has a free slot, within its
        running components' share)."""
        if self.paused or self._closed:
            return
        while True:
            room = self._roles_with_room()
            open_ = [w for w in self.workers if w.conn is not None and w.role.interval_steps is None
                     and w.role.name not in self.held and not w.retiring
                     and len(w.outstanding) < w.role.in_flight
                     and (w.role.name in room or w.role.name not in self.free)]
            if not open_ or not self._grant(min(open_, key=lambda k: len(k.outstanding))):
                return  # (a failed grant means a death, whose handling dispatched again)

    def request(self, role: str) -> None:
        for w in self.workers:
            if w.role.name == role and w.conn is not None and not w.outstanding:
                self._grant(w)

    def pause(self, paused: bool) -> None:
        self.paused = paused
        if not paused:
            now = time.monotonic()
            for w in self.workers:  # time spent paused is not time stuck
                w.granted_at = now
            self._grant_steps()

    def hold(self, roles: frozenset[str]) -> None:
        released = bool(self.held - set(roles))
        self.held = frozenset(roles)
        if released:
            self._grant_steps()

    # --- data ------------------------------------------------------------------------------------
    def _receive(self, timeout: float) -> None:
        conns = {id(w.conn): w for w in self.workers if w.conn is not None}
        for conn in wait([w.conn for w in conns.values()], timeout):
            w = conns[id(conn)]
            if w.conn is not conn:  # replaced while this loop ran (its death was handled): not the new one's
                continue
            try:
                while conn.poll():
                    slot, info = conn.recv()
                    if slot == ERROR:  # its last words, before it exits
                        w.last_error = info
                        continue
                    self._arrived(w, slot, info)
                    if w.conn is not conn:  # parked by that arrival: its pipe is closed
                        break
            except (EOFError, OSError):
                self._handle_death(w)
        self._check_processes()

    def _arrived(self, w: LocalWorker, slot, info: dict) -> None:
        w.outstanding.remove(slot)
        w.granted_at = time.monotonic()  # a step finished: the watch restarts for the next one
        w.starting = False
        if w.retiring and not w.outstanding:
            self._park(w)
        program, role = self.program, w.role
        if emits_to_channel(program, role):
            self.ready.append((role.name, slot, info))
        elif emits_to_replay(program, role):
            self.pending.append((w, slot, info))
        else:
            self.reports.append(info)
            self._grant_steps()

    def _pump(self) -> None:
        """Insert outputs waiting for their replay, in arrival order, as far as its rate limiter admits them."""
        while self.pending:
            w, slot, info = self.pending[0]
            replay = self.adapters[w.role.emits]
            if not replay.admits():
                return
            self.pending.popleft()
            replay.offer(self.slots[w.role.name].view(slot))
            self.free[w.role.name].append(slot)
            self.reports.append(info)
            self._grant_steps()

    def poll(self, timeout: float) -> tuple[list[dict], int]:
        drain_into_replays(self.routes, self.adapters, self.reports)
        self._pump()
        if not self.reports:
            self._receive(timeout if not self.ready else 0.0)
            self._pump()
        reports, self.reports = self.reports, []
        n, self._pending_restarts = self._pending_restarts, 0
        return reports, n

    def next_batch(self, timeout: float):
        spec: Channel = self.program.services[self.program.consumes]
        for source in self.sources:  # an inference server's unrolls (already copies)
            while len(self.ready) < spec.batch:
                item = source.take(timeout)
                if item is None:
                    break
                self.ready.append((None, item[0], item[1]))
        if len(self.ready) < spec.batch:
            self._receive(timeout)
            if len(self.ready) < spec.batch:
                return None
        items = [self.ready.popleft() for _ in range(spec.batch)]
        arrays = [self.slots[r].view(s) if r is not None else s for r, s, _ in items]
        token = [(r, s) for r, s, _ in items if r is not None]
        return concatenate(spec.spec, arrays), [info for _, _, info in items], token

    def release(self, token) -> None:
        for role, slot in token:
            self.free[role].append(slot)
        self._grant_steps()

    # --- faults ----------------------------------------------------------------------------------
    def _handle_death(self, w: LocalWorker, reason: str | None = None) -> None:
        if self._closed or w.conn is None:
            return
        p = w.handle
        p.join(timeout=1.0)
        if p.is_alive():
            p.kill()
            p.join(timeout=1.0)
        w.conn.close()
        w.conn = None
        for slot in w.outstanding:  # the dead component's slots come back
            if slot is not None:
                self.free[w.role.name].append(slot)
        w.outstanding = []
        if w.retiring:  # it was stopping anyway: parked, not restarted (what it said before it died is shown)
            if w.last_error:
                print(f"distrl: {w.name} failed while it was stopping:\n{w.last_error.rstrip()}", file=sys.stderr,
                      flush=True)
            w.handle, w.last_error, w.parked, w.retiring = None, "", True, False
            self._grant_steps()
            return
        w.restarts = w.restart_log.record(w.name, reason or f"died (exit code {p.exitcode})", w.last_error)
        w.last_error = ""
        self._spawn(w)
        self._pending_restarts += 1
        self._grant_steps()

    def _check_processes(self) -> None:
        now = time.perf_counter()
        if now - self._last_check < 0.1:
            return
        self._last_check = now
        for p, since in list(self._reaping):  # a parked component exits on its own when its pipe closes
            if not p.is_alive() or time.monotonic() - since > 5.0:
                if p.is_alive():
                    p.kill()
                p.join(timeout=1.0)
                self._reaping.remove((p, since))
        for w in self.workers:
            if w.conn is not None and not w.handle.is_alive():
                self._handle_death(w)
            elif w.conn is not None and w.outstanding and not self.paused \
                    and time.monotonic() - w.granted_at > self.step_timeout_s:
                w.last_error = ""
                w.handle.kill()  # stopped or deadlocked: SIGKILL works on both
                w.handle.join(timeout=1.0)
                self._handle_death(w, f"was stuck ({time.monotonic() - w.granted_at:.0f} s without finishing a step)")

    # --- the rest --------------------------------------------------------------------------------
    def stats(self) -> dict:
        if self.control is None:
            return {}
        s = self.control.arrays["stats"]
        roles: dict[str, dict[str, float]] = {}
        for w in self.workers:  # per role too: the verdict names the role the learner waits for
            t = roles.setdefault(w.role.name, {"block_s": 0.0, "busy_s": 0.0})
            t["block_s"] += float(s[w.row, 0])
            t["busy_s"] += float(s[w.row, 2])
        return {"block_s": float(s[:, 0].sum()), "transport_s": float(s[:, 1].sum()), "roles": roles}

    def pids(self) -> list[int]:
        return [w.handle.pid for w in self.workers if w.handle is not None and w.handle.is_alive()]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.release_shared()
        if self.control is not None:
            self.control.arrays["stop"][0] = 1
            stop_processes([w.handle for w in self.workers if w.handle is not None] + [p for p, _ in self._reaping])
        for w in self.workers:
            if w.conn is not None:
                w.conn.close()
        self.ready.clear()
        self.pending.clear()
        for adapter in self.adapters.values():
            adapter.close()
        for arrays in self.slots.values():
            arrays.close()
        if self.control is not None:
            self.control.close()
