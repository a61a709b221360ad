"""The ``ray`` runtime: every component a Ray actor, outputs through the object store.

``--runtime ray`` starts a local Ray instance; ``ray_address`` (or ``RAY_ADDRESS``) joins an existing
cluster instead. Components are spread over the cluster's nodes. A component whose process dies or
whose step raises is replaced by the backend, as on ``local``: a new actor with the same index, a
fresh seed from its restart count (``component_seed``), and the crash-loop limit (``process.Restarts``).
Each keeps ``role.in_flight`` step calls queued, so it starts its next step while the trainer is
still busy with the last one. What a call carries besides its result comes from the services: the
weights' object reference (one ``ray.put`` per version), hyperparameters the run changed. A role that
emits into a replay inserts its output into the replay's Ray actor itself; the result says how many.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections import deque
from dataclasses import dataclass, field

from distrl.core.program import Program
from distrl.core.protocols import Finishes
from distrl.core.types import allocate
from distrl.runtime.backends.batching import concatenate
from distrl.runtime.backends.host import ServiceHost
from distrl.runtime.backends.placement import (
    ServiceFactories,
    Worker,
    component_seed,
    counted_uses,
    drain_into_replays,
    emits_to_channel,
    emits_to_replay,
    inference_queue_size,
    timed_uses,
    users,
)
from distrl.runtime.backends.process import Restarts
from distrl.runtime.compute import setup_compute
from distrl.runtime.services.base import SendsCallArgs
from distrl.runtime.services.constant import RayConstant
from distrl.runtime.services.inference.ray import GrpcInference
from distrl.runtime.services.param_server import RayParamServer
from distrl.runtime.services.replay import RayPartitionedReplay, RayReplay
from distrl.runtime.services.weights import RayWeights

INLINE_OBJECT_BYTES = 1 << 20


STARTUP_TIMEOUTS = ("timed out during startup", "Timed out waiting for file")  # a busy machine: start again
START_ATTEMPTS = 3
GCS_PORT_WAIT_S = 120


def connect_ray(address: str | None, num_cpus: int, timeout_s: float = 10.0) -> bool:
    """Join the cluster at ``address``, or start a local Ray instance; True when we started it.

    A local instance requires Ray's token authentication (``RAY_AUTH_MODE=token``, Ray generates the token
    in ``~/.ray/auth_token``): Ray's servers listen on this machine's network address (Ray turns a loopback
    ``_node_ip_address`` into that address on Linux, so it cannot be kept on 127.0.0.1), and the token is
    what keeps other peers out. A ``HOST:PORT`` nobody answers is a one-line error after ``timeout_s``, not
    a hang.

    A local instance passes objects up to ``INLINE_OBJECT_BYTES`` inside the call messages instead of
    through the object store (Ray's default limit is 100 KiB): a GORILA exchange (four gradients per
    shard, ~140 KiB) then takes one hop instead of a store write and a fetch, 1.5x the exchanges per
    second measured here. A cluster a user starts keeps its own setting
    (``RAY_max_direct_call_object_size`` when it is started)."""
    import ray

    if ray.is_initialized():
        return False
    kwargs = dict(include_dashboard=False, logging_level="ERROR", configure_logging=True)
    if "RAY_AUTH_MODE" not in os.environ:  # a user's explicit choice stands
        os.environ["RAY_AUTH_MODE"] = "token"  # the docs' clusters are started so, and a local instance is
        _refresh_ray_config()
    if address:
        check_reachable(address, timeout_s)
        with _stderr_held() as held:  # Ray's client logs a line per retry (~20) before it gives up
            try:
                ray.init(address=address, **kwargs)
            except Exception as e:  # a refused token (or none), another Ray version: one line, not Ray's 80
                ray.shutdown()
                held.drop()
                raise _refused(address, e) from None
        return False
    for attempt in range(1, START_ATTEMPTS + 1):
        before = _child_pids()
        try:
            # "local": a new instance of our own even where a cluster runs on this machine (ray start, another
            # run): without it Ray would join that cluster and refuse num_cpus
            with _gcs_wait(GCS_PORT_WAIT_S):
                ray.init(address="local", num_cpus=max(os.cpu_count() or 1, num_cpus),
                         _system_config={"max_direct_call_object_size": INLINE_OBJECT_BYTES}, **kwargs)
            return True
        except Exception as e:  # a plain Exception when the raylet misses its 30-s start-up window, a RuntimeError
            ray.shutdown()  # when the GCS misses its own
            _stop_new_children(before)
            if attempt == START_ATTEMPTS or not any(m in str(e) for m in STARTUP_TIMEOUTS):
                raise
    return True


def _is_ray(process) -> bool:
    """Ray's own processes (its binaries and Python daemons run from the ``ray`` package's folder, its workers
    titled ``ray::...``), not another thread's child that happened to start meanwhile."""
    import psutil
    import ray

    package = os.path.dirname(ray.__file__) + os.sep
    try:
        line = process.cmdline()
    except psutil.Error:
        return False
    return bool(line) and (line[0].startswith("ray::") or any(part.startswith(package) for part in line))


def _child_pids() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


def _stop_new_children(before: set[int], grace_s: float = 10.0) -> None:
    """Ends the processes a failed ``ray.init`` started (its GCS, a raylet still coming up): Ray keeps no handle
    on them when the start gives up, so ``ray.shutdown()`` leaves them running, and a CI run here saw the next
    start's GCS never come up beside them. SIGTERM, then SIGKILL for what is left after ``grace_s``."""
    import psutil

    new = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and _is_ray(p)]
    for p in new:
        with contextlib.suppress(psutil.Error):
            p.terminate()
    _, alive = psutil.wait_procs(new, timeout=grace_s)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=grace_s)


@contextlib.contextmanager
def _gcs_wait(seconds: int):
    """Ray's GCS server has 30 s by default to write its port file before ``ray.init`` gives up (missed once here:
    a fresh install's first start under a test suite's load); Ray's own value where its GCS starts slowly is 120.
    Only for our local start: a user's value stands, and a later connection to a cluster keeps Ray's default."""
    name = "RAY_gcs_server_port_wait_time_s"
    if name in os.environ:
        yield
        return
    os.environ[name] = str(seconds)
    try:
        yield
    finally:
        os.environ.pop(name, None)


class _stderr_held:
    """Holds what is written to file descriptor 2 (C++ logging included) while it is open, and writes it out at the
    end unless ``drop()`` was called."""

    def __enter__(self):
        import tempfile

        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        self._keep = True
        return self

    def drop(self) -> None:
        self._keep = False

    def __exit__(self, *exc) -> None:
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        if self._keep:
            self._file.seek(0)
            os.write(2, self._file.read())
        self._file.close()


def _refused(address: str, e: Exception):
    """The one line for a cluster that answered but would not take us: with token authentication (the docs'
    recipe) this machine needs the cluster's token, in ``~/.ray/auth_token`` or ``RAY_AUTH_TOKEN``."""
    from distrl.errors import ConfigError

    first = next((line.strip() for line in str(e).splitlines() if line.strip()), type(e).__name__)[:200]
    return ConfigError(f"the Ray cluster at {address} did not accept this machine ({first}): a cluster started with "
                       "RAY_AUTH_MODE=token needs its token here, in ~/.ray/auth_token or RAY_AUTH_TOKEN (copy it "
                       "from the head node); one started without token authentication needs RAY_AUTH_MODE=disabled")


def _refresh_ray_config() -> None:
    """Ray reads its settings (the auth mode among them) when it is imported: a process that imported Ray
    before this point would start a cluster whose servers want a token its own client does not send.
    Re-reading them is what Ray does itself when it turns token mode on (``_enable_token_auth``)."""
    try:
        from ray._raylet import Config
    except ImportError:
        return
    Config.initialize("")


def check_reachable(address: str, timeout_s: float) -> None:
    import socket

    from distrl.config import split_address
    from distrl.errors import ConfigError

    hostport = split_address(address.removeprefix("ray://"))
    if hostport is None:  # "auto" and other forms Ray resolves itself
        return
    try:
        socket.create_connection(hostport, timeout=timeout_s).close()
    except OSError as e:
        why = f"within {timeout_s:g} s" if isinstance(e, TimeoutError) else f"({e.strerror or e})"
        raise ConfigError(f"no Ray cluster answered at {address} {why}; start one with 'RAY_AUTH_MODE=token ray start "
                          "--head' (every node of the cluster with RAY_AUTH_MODE=token) or leave ray_address unset "
                          "for a local instance") from None


# A component whose output goes nowhere makes several steps per call, so a call lasts at least MIN_CALL_S:
# SEED's env actors (8 round trips to the inference server a step) went from ~92k to ~110k env steps/s.
MIN_CALL_S = 0.05
FINISH_TIMEOUT_S = 5.0  # the most a retired component's last words may take
MAX_STEPS_PER_CALL = 64


class _ComponentHost:
    """Wraps any distrl component; the only Ray-aware code a component ever runs in."""

    def __init__(
        self,
        name: str,
        make,
        index: int,
        seed: int,
        handles: dict,
        uses: tuple[tuple[str, ...], tuple[str, ...]],
        output,
        inserter,
        torch_threads: int,
        shared: dict,
    ):
        import ray

        from distrl.core.shared import register
        from distrl.runtime.backends.process import set_process_name

        set_process_name(f"distrl-{name}-{index}")
        setup_compute(torch_threads)
        self.node_id = ray.get_runtime_context().get_node_id()
        self.handles, self.output, self.inserter = handles, output, inserter
        self.output_bytes = sum(spec.nbytes for spec in output.values()) if output is not None else 0
        timed, counting = uses  # (placement.timed_uses, placement.counted_uses)
        self.readers = [handles[n] for n in timed]
        self.counted = [handles[n] for n in counting]  # handles that count the bytes they move between processes
        register(shared)  # services shared with other programs, by name: before the component (its envs reach them)
        self.component = make(index, seed, handles)

    def step(self, updates: dict, hyperparameters: dict | None):
        """One step: (output or None, info, items inserted into a replay)."""
        self._receive(updates, hyperparameters)
        out = allocate(self.output) if self.output is not None else None
        pulled, moved = sum(r.seconds for r in self.readers), sum(h.bytes for h in self.counted)
        info = self.component.step(out)
        info["transport_s"] = sum(r.seconds for r in self.readers) - pulled
        # bytes between processes: what the handles moved and the output (to the trainer or the replay's actor)
        info["transport_bytes"] = (sum(h.bytes for h in self.counted) - moved
                                   + self.output_bytes)
        info["node_id"] = self.node_id
        inserted = 0
        if self.inserter is not None:
            inserted, out = self.inserter.insert(out), None
        return out, info, inserted

    def steps(self, updates: dict, hyperparameters: dict | None, count: int) -> list[dict]:
        """``count`` steps of a component whose output goes nowhere (its work travels through services:
        env actors, gradient workers): only the infos come back, in one result."""
        self._receive(updates, hyperparameters)
        infos = []
        for _ in range(count):
            t0 = time.perf_counter()
            moved = sum(h.bytes for h in self.counted)
            info = self.component.step(None)
            info["step_s"] = time.perf_counter() - t0
            info["transport_bytes"] = sum(h.bytes for h in self.counted) - moved
            info["node_id"] = self.node_id
            infos.append(info)
        return infos

    def _receive(self, updates: dict, hyperparameters: dict | None) -> None:
        for name, value in updates.items():
            self.handles[name].receive(value)
        if hyperparameters:
            self.component.set_hyperparameters(hyperparameters)

    def finish(self) -> None:
        """A retired component's last words (``core.protocols.Finishes``), before its actor is ended."""
        if isinstance(self.component, Finishes):
            self.component.finish()

    def pid(self) -> int:
        return os.getpid()


@dataclass
class RayWorker(Worker):
    """A component as ``ray`` tracks it: its actor (``handle``) and the step calls queued on it."""

    inflight: deque = field(default_factory=deque)  # its calls' object references, oldest first
    held: int = 0  # its outputs waiting in the learner's queue
    hold: int = 0  # how many it may leave there beyond its calls in flight (its share of a batch)
    failed: bool = False
    call_started: float = 0.0  # when its oldest call in flight began (the stuck-step watch)
    step_s: float | None = None  # a running mean of its step time, measured where it runs
    idle_since: float | None = None  # since when it has had no call (it waits for one: blocked)
    blocked_s: float = 0.0  # time it waited for a call, over its spans alive
    alive_since: float | None = None  # since when its actor runs (None: parked)
    alive_s: float = 0.0  # its actors' time alive before the current one


class RayBackend(ServiceHost):
    name = "ray"
    elastic = True
    worker_record = RayWorker

    def __init__(self, seed: int, torch_threads: int = 1, address: str | None = None, step_timeout_s: float = 300.0,
                 max_restarts: int = 10, token: str = ""):
        super().__init__(seed)
        self.torch_threads, self.step_timeout_s = torch_threads, step_timeout_s
        self.token = token  # what peers reaching this run over the network must present (SEED's streams)
        self.max_restarts = max_restarts
        self._errors_seen: dict[str, int] = {}  # tracebacks the components sent, printed once per run
        self.address = address or os.environ.get("RAY_ADDRESS")
        self.started_ray = False
        self.requested = self.request_refused = False  # resources asked of an autoscaling cluster (``scale``)
        self._finishing: list = []  # retired actors saying their last words: (handle, the call, when to end it anyway)
        self.ready: list = []  # (arrays, info) in the consumed channel
        self.node_ids: set[str] = set()
        self.transport_s = 0.0
        self._restarts = 0

    @staticmethod
    def share(service, token: str, bind: str | None = None):
        """The components are Ray actors, on any node: a token-admitted gRPC server at this node's address (Ray's own),
        its handle travelling to each actor with the actor's arguments."""
        from ray.util import get_node_ip_address

        from distrl.runtime.services.shared import SharedServer

        return SharedServer(service, token, bind or f"{get_node_ip_address()}:0")

    def open(self, program: Program) -> dict:
        import ray

        program.check()  # before Ray starts (open_program checks again: cheap, and the same for every backend)
        self.ray = ray
        self.started_ray = connect_ray(self.address, sum(r.count for r in program.roles if r.cpus >= 1))
        return self.open_program(
            program,
            ServiceFactories(
                weights=lambda name, spec: RayWeights(ray),
                param_server=lambda name, spec: RayParamServer(ray, spec),
                replay=lambda name, spec: RayReplay(ray, name, spec),
                partitioned_replay=lambda name, spec: RayPartitionedReplay(ray, name, spec),
                constant=lambda name, spec: RayConstant(ray, spec),
                inference=lambda name, spec: GrpcInference(
                    ray,
                    spec,
                    users(program, name),
                    self.seed,
                    queue_size=inference_queue_size(program, name),
                    token=self.token,
                ),
            ),
        )

    def start(self, weights) -> None:
        for w in self.start_services(weights):
            w.restart_log = Restarts(self.max_restarts, errors=self._errors_seen)
        consumes = self.program.consumes
        batch = self.program.services[consumes].batch if consumes else 1
        for w in self.workers:
            w.inflight, w.held, w.failed, w.call_started = deque(), 0, False, time.monotonic()
            w.step_s = None  # a running mean of its step time, measured where it runs
            # outputs a channel producer may hold in the learner's queue without losing its calls in flight:
            # its share of a batch (the learner must be able to fill one) and one more; none where the program
            # counts batches per version (ES): there a step must wait for the trainer's release, as on local
            w.hold = max(1, -(-batch // w.role.count)) \
                if emits_to_channel(self.program, w.role) and not self.program.batches_per_version else 0
            if not w.parked:
                self._spawn(w)
        self._grant_steps()

    # (``scaling``: ServiceHost's; an actor the cluster has no free CPU for waits in Ray's queue until one frees, and
    # its move, adding nothing, is undone)
    def scale(self, role: str, active: int) -> None:
        super().scale(role, active)
        self._request_resources()

    def _request_resources(self) -> None:
        """Ask an autoscaling cluster for the CPUs of every component now running, one bundle each (Ray's
        ``request_resources``, which replaces the request before: the autoscaler adds nodes until they fit, and may
        remove them once a smaller request leaves them idle). A cluster without an autoscaler keeps the request
        and nothing reads it."""
        from ray.autoscaler.sdk import request_resources

        try:
            request_resources(bundles=[{"CPU": float(w.role.cpus)} for w in self.workers
                                       if not w.parked and w.role.cpus > 0])
            self.requested = True
        except Exception as e:  # the request is a hint to an autoscaler: a run goes on without it, said once
            if not self.request_refused:
                print(f"distrl: the Ray cluster took no resource request ({type(e).__name__}: {e}); actors are added "
                      "within its CPUs", file=sys.stderr)
            self.request_refused = True

    def _in_flight(self, w: RayWorker) -> int:
        return len(w.inflight)

    def _park(self, w: RayWorker) -> None:
        now = time.monotonic()
        retired = w.retiring
        if retired:  # retired by the autoscaler, its calls all back: what it still holds goes out first, and the actor
            # is ended once it has (``_end_finished``), never waited for here: its last words may need the learner
            # to take an unroll first
            self._finishing.append((w.handle, w.handle.finish.remote(), now + FINISH_TIMEOUT_S))
        else:
            try:
                self.ray.kill(w.handle, no_restart=True)
            except Exception:
                pass
        w.inflight.clear()
        w.alive_s += now - w.alive_since
        w.blocked_s += now - w.idle_since if w.idle_since is not None else 0.0
        w.handle = w.alive_since = w.idle_since = None
        w.parked, w.retiring = True, False
        if retired and self.requested:  # one CPU fewer to ask of an autoscaling cluster
            self._request_resources()

    def role_activity(self, role: str) -> tuple[float, float]:
        """(seconds blocked, seconds busy) of ``role``'s components so far, as seen from here: a component is
        blocked while it has no call, busy while it has one (its round trips included)."""
        now, blocked, alive = time.monotonic(), 0.0, 0.0
        for w in (w for w in self.workers if w.role.name == role):
            blocked += w.blocked_s + (now - w.idle_since if w.idle_since is not None else 0.0)
            alive += w.alive_s + (now - w.alive_since if w.alive_since is not None else 0.0)
        return blocked, max(alive - blocked, 0.0)

    def _spawn(self, w: RayWorker) -> None:
        """A Ray actor for ``w`` with the one seed formula; restarts are the backend's, as on ``local`` (not
        Ray's): a restarted component gets a fresh seed from its restart count, and a crash loop is stopped."""
        role = w.role
        host = self.ray.remote(num_cpus=role.cpus, max_restarts=0, max_task_retries=0)(_ComponentHost)
        handles = {name: self.adapters[name].worker_handle(role.name, w.index) for name in role.uses}
        uses = (timed_uses(self.program, role), counted_uses(self.program, role))
        inserter = (
            self.adapters[role.emits].worker_handle(role.name, w.index) if emits_to_replay(self.program, role) else None
        )
        now = time.monotonic()  # a new actor has no call yet: waiting for one from now (a restart keeps its spans)
        w.alive_since = w.alive_since if w.alive_since is not None else now
        w.idle_since = w.idle_since if w.idle_since is not None else now
        w.handle = host.options(scheduling_strategy="SPREAD").remote(
            role.name, role.make, w.index, component_seed(self.seed, w.position, w.index, w.restarts), handles, uses,
            role.output if role.emits else None, inserter, self.torch_threads, self.shared)

    def _restart(self, w: RayWorker, error: Exception) -> None:
        """The component's process died, or its step raised: a new actor in its place (outputs already taken
        stay valid; calls still queued on the old one are dropped)."""
        try:
            self.ray.kill(w.handle, no_restart=True)
        except Exception:
            pass
        if w.retiring:  # it was stopping anyway: parked, not restarted
            self._park(w)
            return
        w.inflight.clear()
        text = str(error).strip()
        w.restarts = w.restart_log.record(w.name, f"failed ({type(error).__name__})", text)
        self._restarts += 1
        self._spawn(w)

    def _may_submit(self, w: RayWorker) -> bool:
        # outputs waiting for the learner beyond the component's share count against its in_flight (as held
        # slots do on local): a component runs ahead of the learner by at most in_flight steps and its share
        ahead = max(w.held - w.hold, 0)
        if self.paused or w.parked or w.retiring or w.role.interval_steps is not None \
                or len(w.inflight) + ahead >= w.role.in_flight or w.role.name in self.held:
            return False
        if emits_to_replay(self.program, w.role):
            return self.adapters[w.role.emits].admits()
        return True

    def _submit(self, w: RayWorker) -> None:
        """One step call, carrying what the services send with it (the weights' reference) and the
        components' hyperparameters."""
        if not w.inflight:
            w.call_started = time.monotonic()
            if w.idle_since is not None:
                w.blocked_s += w.call_started - w.idle_since
                w.idle_since = None
        updates = {}
        for name in w.role.uses:
            adapter = self.adapters[name]
            if isinstance(adapter, SendsCallArgs) and (value := adapter.call_args()) is not None:
                updates[name] = value
        if w.role.emits is None:
            w.inflight.append(w.handle.steps.remote(updates, self.hyper or None, self._count(w)))
        else:
            w.inflight.append(w.handle.step.remote(updates, self.hyper or None))

    def _count(self, w: RayWorker) -> int:
        """Steps per call for a component whose output goes nowhere: enough that the call's work, not its
        round trip, dominates (SEED's env actors take a few ms a step: ~0.5 ms a call was a tenth of it)."""
        if w.step_s is None or w.role.interval_steps is not None:
            return 1
        return max(1, min(MAX_STEPS_PER_CALL, math.ceil(MIN_CALL_S / max(w.step_s, 1e-6))))

    def _grant_steps(self) -> None:
        for w in self.workers:
            while self._may_submit(w):
                self._submit(w)

    def set_hyperparameters(self, values, components) -> None:
        for adapter in self.adapters.values():
            adapter.set_hyperparameters(values)
        self.hyper.update(components)

    def _end_finished(self, everyone: bool = False) -> None:
        """End the retired actors whose last words are out (or overdue; with ``everyone``, all of them)."""
        now, waiting = time.monotonic(), []
        for handle, ref, deadline in self._finishing:
            done = everyone or now > deadline or self.ray.wait([ref], timeout=0)[0]
            if not done:
                waiting.append((handle, ref, deadline))
                continue
            try:
                self.ray.kill(handle, no_restart=True)
            except Exception:
                pass
        self._finishing = waiting

    def _receive(self, timeout: float) -> None:
        from ray.exceptions import RayActorError, RayTaskError

        if self._finishing:
            self._end_finished()

        # wait only on each component's oldest call: a Ray actor runs its calls in order, but a later
        # result can reach this node first, and per-component order is part of the contract
        heads = {w.inflight[0]: w for w in self.workers if w.inflight}
        if not heads:
            return
        now = time.monotonic()
        for w in list(heads.values()):  # a call that never finishes: the component is stuck
            if not self.paused and now - w.call_started > self.step_timeout_s:
                del heads[w.inflight[0]]
                self._restart(w, RuntimeError(f"stuck: no step finished in {now - w.call_started:.0f} s"))
        if not heads:
            return
        done, _ = self.ray.wait(list(heads), num_returns=1, timeout=timeout)
        if done:  # take whatever else is ready too, without waiting
            more, _ = self.ray.wait([r for r in heads if r != done[0]], num_returns=len(heads) - 1, timeout=0) \
                if len(heads) > 1 else ([], None)
            done = done + more
        for ref in done:
            w = heads[ref]
            if not w.inflight or w.inflight[0] != ref:  # the component was restarted meanwhile
                continue
            w.inflight.popleft()
            w.call_started = time.monotonic()
            if not w.inflight:
                w.idle_since = w.call_started
            try:
                result = self.ray.get(ref)
            except (RayActorError, RayTaskError) as e:
                self._restart(w, e)
                continue
            w.starting = False
            if isinstance(result, list):  # several steps of a component that emits nothing
                for info in result:
                    step_s = info.pop("step_s")
                    w.step_s = step_s if w.step_s is None else 0.8 * w.step_s + 0.2 * step_s
                    self.node_ids.add(info.pop("node_id", "?"))
                    self.reports.append(info)
                continue
            out, info, inserted = result
            self.node_ids.add(info.pop("node_id", "?"))
            self.transport_s += info.pop("transport_s", 0.0)
            if emits_to_channel(self.program, w.role):
                self.ready.append((out, info, w))
                w.held += 1
                continue
            if inserted:
                self.adapters[w.role.emits].record_inserts(inserted)
            self.reports.append(info)
        for w in self.workers:
            if w.retiring and not w.inflight:
                self._park(w)
        self._grant_steps()

    def poll(self, timeout: float) -> tuple[list[dict], int]:
        drain_into_replays(self.routes, self.adapters, self.reports)
        if not self.reports:
            self._receive(0.0 if self.ready else timeout)
        self._grant_steps()
        reports, self.reports = self.reports, []
        n, self._restarts = self._restarts, 0
        return reports, n

    def next_batch(self, timeout: float):
        spec = self.program.services[self.program.consumes]
        for source in self.sources:
            while len(self.ready) < spec.batch:
                item = source.take(timeout)
                if item is None:
                    break
                self.ready.append((*item, None))
        if len(self.ready) < spec.batch:
            self._receive(timeout)
            if len(self.ready) < spec.batch:
                return None
        items, self.ready = self.ready[:spec.batch], self.ready[spec.batch:]
        return (
            concatenate(spec.spec, [a for a, _, _ in items]),
            [info for _, info, _ in items],
            [w for _, _, w in items],
        )

    def release(self, token) -> None:
        for w in token:
            if w is not None:
                w.held -= 1
        self._grant_steps()

    def request(self, role: str) -> None:
        for w in self.workers:
            if w.role.name == role and not w.inflight and not w.parked:
                self._submit(w)

    def pause(self, paused: bool) -> None:
        self.paused = paused
        if not paused:
            for w in self.workers:  # time spent paused is not time stuck
                w.call_started = time.monotonic()
        self._grant_steps()

    def hold(self, roles: frozenset[str]) -> None:
        self.held = frozenset(roles)
        self._grant_steps()

    def stats(self) -> dict:
        return {"nodes": len(self.node_ids), "transport_s": self.transport_s}

    def pids(self) -> list[int]:
        return self.ray.get([w.handle.pid.remote() for w in self.workers if w.handle is not None], timeout=30)

    def close(self) -> None:
        self.release_shared()
        if self.program is None:
            return
        self._end_finished(everyone=True)
        for w in self.workers:
            try:
                if w.handle is not None:
                    self.ray.kill(w.handle, no_restart=True)
            except Exception:
                pass
        for adapter in self.adapters.values():
            adapter.close()
        self.workers = []
        if self.requested:  # what this run asked an autoscaling cluster for, given back: its nodes may go
            self._request_resources()
        if self.started_ray:
            self.ray.shutdown()
            self.started_ray = False
        self.program = None
