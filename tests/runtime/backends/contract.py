"""The runtime contract, written once and run against every backend (inline, local, ray): a channel
delivers intact, in order, with weights that advance; each service kind behaves the same; periodic roles
step when asked; hyperparameters reach components; a killed component is replaced; nothing is left behind."""

from __future__ import annotations

import os
import signal
import time

from tests.procfs import alive
from tests.runtime.backends.fakes import (
    CheckingLearner,
    Tally,
    constant_program,
    counting_program,
    param_program,
    program_with_probe,
    replay_program,
    sharing_program,
)

# Every wait here is on an event (data arrives, a component reports, a replacement runs), bounded by WAIT_S: the
# bound costs nothing where the event comes, and on a loaded machine a cold Ray worker on another node has been seen to
# take over a minute to start (a CI run beside two training runs on the 2 cores). A loop's drive() calls share the
# loop's deadline, so the wait that fails (normally the first, for a cold start) ends in its assertion well within
# pytest's 300-s timeout.
WAIT_S = 120.0


def started(make_backend, program, learner=None):
    backend = make_backend()
    handles = backend.open(program)
    learner = learner or program.make_learner(handles)
    backend.start((learner.get_weights(), learner.version))
    return backend, learner


def drive(backend, learner, n_batches: int, until: float | None = None):
    """The trainer's iteration, stripped down: the infos of ``n_batches`` batches and the restarts, before the
    ``time.monotonic()`` deadline ``until`` (default: WAIT_S from now)."""
    infos, restarts = [], 0
    deadline = time.monotonic() + WAIT_S if until is None else until
    done = 0
    while done < n_batches:
        assert time.monotonic() < deadline, "backend produced no data in time"
        _, r = backend.poll(0.0)
        restarts += r
        item = backend.next_batch(0.05)
        if item is None:
            continue
        batch, batch_infos, token = item
        version = learner.version
        learner.step(batch)
        # publish before release, as the trainer does: a release may start producers' next steps at once, and a
        # service that makes a version's array when a call carries it (ray's weights) would otherwise label the
        # learner's newer weights with the version published before this step
        backend.publish(learner.get_weights, learner.version)
        backend.release(token)
        infos += [dict(info, learner_version=version) for info in batch_infos]
        done += 1
    return infos, restarts


def check_intact_and_ordered(make_backend):
    backend, learner = started(make_backend, counting_program(num_actors=2, batch=2))
    try:
        infos, _ = drive(backend, learner, 30)  # CheckingLearner asserts every payload is intact
        deadline = time.monotonic() + WAIT_S  # a cold worker (another Ray node) may take a while to start
        while {i["actor_index"] for i in infos} != {0, 1} and time.monotonic() < deadline:
            infos += drive(backend, learner, 1, deadline)[0]
    finally:
        backend.close()
    by_producer = {}
    for info in infos:
        by_producer.setdefault((info["pid"], info["seed"]), []).append(info)
    # both actors delivered, seeds from the one formula
    assert {s for _, s in by_producer} >= {0, 1000}, list(by_producer)
    for producer_infos in by_producer.values():
        versions = [i["version"] for i in producer_infos]
        assert versions == sorted(versions), versions  # weights never go back in time
        for i in producer_infos:
            assert i["weight0"] == float(i["version"])  # the weights an actor used match their version
            assert i["learner_version"] >= i["version"]  # data never comes from weights the learner has not made
    assert max(i["version"] for i in infos) > 0  # weight versions advanced


def check_hyperparameters_reach_components(make_backend):
    program = counting_program(num_actors=2, batch=1, hyper_to_components=True)
    backend, learner = started(make_backend, program)
    try:
        backend.set_hyperparameters({"epsilon": 0.25}, {"epsilon": 0.25})
        deadline = time.monotonic() + WAIT_S
        seen = set()
        while seen != {0, 1}:
            assert time.monotonic() < deadline, "components never saw the new value"
            for info in drive(backend, learner, 1, deadline)[0]:
                if info["hyper_epsilon"] == 0.25:
                    seen.add(info["actor_index"])
    finally:
        backend.close()


def check_replay_service(make_backend):
    """Producers emit into a replay service; the learner samples it through its handle; the handle counts
    every insert; the rate limiter keeps samples per insert near the ratio (never far above it)."""
    program = replay_program(num_actors=2, samples_per_insert=1.0)
    backend, learner = started(make_backend, program)
    replay = backend.services()["replay"]
    try:
        deadline = time.monotonic() + WAIT_S
        reported = 0
        while learner.version < 40 or learner.seen != {0, 1}:
            assert time.monotonic() < deadline, (learner.version, learner.seen)
            reports, _ = backend.poll(0.02)
            reported += sum(i["transitions"] for i in reports)
            learner.step(None)
        reports, _ = backend.poll(0.0)
        reported += sum(i["transitions"] for i in reports)
        assert replay.limiter.inserts == reported  # every reported output was inserted, counted by the handle
        over = replay.limiter.samples - 1.0 * (replay.limiter.inserts - 32)
        assert over <= 8 + 8, over  # at most the error buffer (and one batch) ahead of the ratio
    finally:
        backend.close()


def check_param_server(make_backend, with_replay=False):
    """Workers push gradients of ones (SGD, lr 0.1) to a 2-shard parameter server: every applied one moves
    its shard's parameters by -lr, and the trainer's copy (after ``sync``) shows it; ``lr`` set through
    the backend reaches the shards (0 freezes the model while versions go on). With a partitioned
    replay every worker's writes land in its own partition."""
    import torch

    from tests.runtime.backends.fakes import tiny_model

    backend = make_backend()
    backend.open(param_program(num_workers=2, with_replay=with_replay, lr=0.1))
    backend.start(None)
    params = backend.services()["params"]
    try:
        counts = {0: 0, 1: 0}

        def until(n_each: int) -> None:
            deadline = time.monotonic() + WAIT_S
            while min(counts.values()) < n_each:
                assert time.monotonic() < deadline, counts
                for info in backend.poll(0.05)[0]:
                    counts[info["actor_index"]] += 1

        until(17)  # 17 steps x 4 items fill each worker's 64-item partition
        params.sync()
        init = [p.detach() for p in tiny_model().parameters()]
        # Workers go on pushing while this reads (on local the model is the shared one): the versions read
        # before and after the weights bracket what the weights show, give or take the pushes under way.
        before = params.shards.versions.tolist()
        moved = [(init[i] - p.detach().clone()) / 0.1 for i, p in enumerate(params.shards.model.parameters())]
        after = params.shards.versions.tolist()
        for i, m in enumerate(moved):
            shard = next(s for s, members in enumerate(params.shards.shards) if i in members)
            assert float(m.min()) > before[shard] - 2.5 and float(m.max()) < after[shard] + 2.5, (m, before, after)
            assert float(m.max() - m.min()) < 2.5 + after[shard] - before[shard], m  # one step moves all alike
        backend.set_hyperparameters({"lr": 0.0}, {})
        until(min(counts.values()) + 4)  # pushes already under way may still carry the old rate
        params.sync()
        frozen, before = (
            [p.detach().clone() for p in params.shards.model.parameters()],
            sum(params.shards.versions.tolist()),
        )
        until(min(counts.values()) + 4)
        params.sync()
        assert sum(params.shards.versions.tolist()) > before
        assert all(torch.equal(a, b.detach()) for a, b in zip(frozen, params.shards.model.parameters()))
        if with_replay:
            assert backend.services()["replay"].stats()["replay_size"] > 64  # both partitions written
    finally:
        backend.close()


def check_constant_array(make_backend):
    """Every worker reads the same table, read-only; the learner's view holds the same values."""
    backend, learner = started(make_backend, constant_program())
    try:
        infos, _ = drive(backend, learner, 8)  # TableLearner asserts each read matches its own view
        deadline = time.monotonic() + WAIT_S
        while {i["actor_index"] for i in infos} != {0, 1} and time.monotonic() < deadline:
            infos += drive(backend, learner, 1, deadline)[0]
    finally:
        backend.close()
    assert {i["actor_index"] for i in infos} == {0, 1}
    assert all(i["read_only"] == 1.0 for i in infos)


def check_periodic_role(make_backend):
    program = program_with_probe()
    backend, learner = started(make_backend, program)
    try:
        drive(backend, learner, 3)
        backend.request("probe")
        deadline = time.monotonic() + WAIT_S
        while True:
            assert time.monotonic() < deadline, "the periodic role never reported"
            reports, _ = backend.poll(0.05)
            probes = [i for i in reports if "metrics" in i]
            if probes:
                assert probes[0]["metrics"]["probe_version"] >= 1  # it pulled weights the learner made
                break
            item = backend.next_batch(0.0)  # keep the actor's channel moving
            if item is not None:
                backend.release(item[2])
    finally:
        backend.close()


def check_kill_restarts(make_backend):
    """Kill actor 1's process: a replacement with the same index (and a fresh seed) keeps delivering."""
    backend, learner = started(make_backend, counting_program(num_actors=2, batch=1))
    try:
        infos, deadline = [], time.monotonic() + WAIT_S
        while not any(i["actor_index"] == 1 for i in infos):
            infos += drive(backend, learner, 1, deadline)[0]
        victim = next(i for i in infos if i["actor_index"] == 1)
        os.kill(victim["pid"], signal.SIGKILL)
        restarts, later = 0, []
        deadline = time.monotonic() + WAIT_S
        while not any(i["actor_index"] == 1 and i["pid"] != victim["pid"] for i in later):
            assert time.monotonic() < deadline, "actor 1 was not replaced in time"
            more, r = drive(backend, learner, 1, deadline)
            later += more
            restarts += r
        assert restarts >= 1
        replacement = next(i for i in later if i["actor_index"] == 1 and i["pid"] != victim["pid"])
        assert replacement["seed"] != victim["seed"]
    finally:
        backend.close()


def check_step_error_restarts(make_backend):
    """A component whose step raises (an env bug) is replaced, with a fresh seed, and the run goes on."""
    from tests.runtime.backends.fakes import failing_program

    backend, learner = started(make_backend, failing_program())
    try:
        infos, restarts, deadline = [], 0, time.monotonic() + WAIT_S
        while not any(i["actor_index"] == 1 and i["seed"] != 1000 for i in infos):
            assert time.monotonic() < deadline, "the failed component was not replaced"
            more, r = drive(backend, learner, 1, deadline)
            infos, restarts = infos + more, restarts + r
        assert restarts == 1
    finally:
        backend.close()


def check_stuck_component_is_replaced(make_backend):
    """A component that stops answering (SIGSTOP: a deadlock, a hung env) is killed and replaced once its step
    has taken longer than the step timeout."""
    backend, learner = started(make_backend, counting_program(num_actors=2, batch=1))
    try:
        infos, deadline = [], time.monotonic() + WAIT_S
        while not any(i["actor_index"] == 1 for i in infos):
            infos += drive(backend, learner, 1, deadline)[0]
        victim = next(i for i in infos if i["actor_index"] == 1)["pid"]
        os.kill(victim, signal.SIGSTOP)
        later, restarts, deadline = [], 0, time.monotonic() + WAIT_S
        while not any(i["actor_index"] == 1 and i["pid"] != victim for i in later):
            assert time.monotonic() < deadline, "the stuck component was not replaced"
            more, r = drive(backend, learner, 1, deadline)
            later, restarts = later + more, restarts + r
        assert restarts >= 1 and not alive(victim)
    finally:
        backend.close()


def check_shutdown_leaves_nothing(make_backend):
    backend, learner = started(make_backend, counting_program(num_actors=2, batch=1))
    drive(backend, learner, 3)
    pids = backend.pids()
    backend.close()
    deadline = time.monotonic() + WAIT_S
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if alive(p)]




__all__ = ["CheckingLearner", "check_hyperparameters_reach_components", "check_intact_and_ordered",
           "check_kill_restarts", "check_param_server", "check_step_error_restarts",
           "check_stuck_component_is_replaced", "check_periodic_role", "check_replay_service",
           "check_shared_service", "check_shutdown_leaves_nothing", "drive", "started"]


def check_adapters_declare_their_contracts(make_backend):
    """Every adapter a backend builds meets ``core.protocols.ServiceAdapter``, and a service kind's adapters declare
    the smaller contracts the runtime calls on that kind (by subclassing them, so the runtime never probes): a
    replay's checkpointed state and its intake, a parameter server's state and applied updates."""
    from distrl.core import protocols
    from distrl.core.program import ParamServer, PartitionedReplayService, ReplayService, Weights
    from distrl.runtime.services.base import AppliesUpdates, SendsCallArgs, Stateful

    needs = {ReplayService: (Stateful, protocols.ReplayIntake), ParamServer: (Stateful, AppliesUpdates),
             PartitionedReplayService: (Stateful,)}
    seen = set()
    for program in (replay_program(), param_program(with_replay=True), counting_program(), constant_program()):
        backend = make_backend()
        if backend.name == "ray":  # no shared memory: the weights' reference goes with every step call
            needs[Weights] = (SendsCallArgs,)
        try:
            backend.open(program)
            for name, adapter in backend.services().items():
                mro = type(adapter).__mro__
                assert protocols.ServiceAdapter in mro, type(adapter)
                kind = type(program.services[name])
                missing = [c.__name__ for c in needs.get(kind, ()) if c not in mro]
                assert not missing, (type(adapter).__name__, missing)
                seen.add(kind)
        finally:
            backend.close()
    assert set(needs) <= seen  # (every kind with a need was built)


def check_shared_service(runtime: str, make_backend, num_actors: int = 2):
    """One service shared by two programs under one controller (a league's coordinator): hosted for ``runtime``
    (``runtime.backends.share``), its handle given to both, every component of both reaches it by name, from the
    processes its backend placed it in, and every request reaches the one service (its count never repeats); closing
    a program releases the name, closing the host closes the service."""
    from distrl.core import shared
    from distrl.errors import ConfigError
    from distrl.runtime.backends import share

    service = Tally()
    host = share(runtime, service, "the-token")
    backends, answers = [], []
    try:
        for name in ("a", "b"):  # both programs run at once, as a league's players on Ray do
            backend = make_backend()
            backend.shared = {"tally": host.handle}
            handles = backend.open(sharing_program(name, num_actors))
            learner = CheckingLearner(handles)
            backend.start((learner.get_weights(), learner.version))
            backends.append((backend, learner))
        deadline = time.monotonic() + WAIT_S
        while {(p, a) for p, a, _ in service.seen} != {(p, a) for p in "ab" for a in range(num_actors)}:
            for backend, learner in backends:
                answers += [i["tally"] for i in drive(backend, learner, 1, deadline)[0]]
    finally:
        for backend, _ in backends:
            backend.close()
        host.close()
    assert service.closed and len(answers) == len(set(answers))  # one service: each request its own count
    pids = {pid for _, _, pid in service.seen}
    assert (pids == {os.getpid()}) == (runtime == "inline"), pids  # elsewhere: the components' own processes
    try:
        shared.handle("tally")
        raise AssertionError("the name outlived the programs that registered it")
    except ConfigError:  # released by both backends' close
        pass
