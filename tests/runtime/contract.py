"""Runtime contract checks, written once and run against every backend (inline, local, ray)."""

from __future__ import annotations

import os
import signal
import time

from tests.runtime.fakes import CheckingLearner, counting_topology


def drive(backend, learner, n_batches: int, timeout: float = 60.0, on_batch=None):
    """The coordinator's loop, stripped down: returns the infos of ``n_batches`` batches and the restarts."""
    infos, restarts = [], 0
    deadline = time.monotonic() + timeout
    backend.publish(learner.get_weights, learner.version)
    while len(infos) < n_batches * backend.topology.batch_unrolls:
        assert time.monotonic() < deadline, "backend produced no data in time"
        item = backend.next_batch()
        restarts += backend.poll()
        if item is None:
            continue
        batch, batch_infos, handle = item
        version = learner.version
        learner.step(batch)
        backend.release(handle)
        backend.publish(learner.get_weights, learner.version)
        for info in batch_infos:
            infos.append(dict(info, learner_version=version))
        if on_batch:
            on_batch(len(infos))
    return infos, restarts


def check_intact_and_ordered(make_backend):
    topo = counting_topology(num_actors=2, batch_unrolls=2)
    backend = make_backend(topo)
    learner = CheckingLearner()
    backend.start(learner)
    try:
        infos, _ = drive(backend, learner, 30)  # CheckingLearner asserts every payload is intact
        deadline = time.monotonic() + 60  # a cold worker (another Ray node) may take a while to start
        while {i["actor_index"] for i in infos} != {0, 1} and time.monotonic() < deadline:
            infos += drive(backend, learner, 1)[0]
    finally:
        backend.close()
    by_producer = {}
    for info in infos:
        by_producer.setdefault((info["pid"], info["seed"]), []).append(info)
    assert {s for _, s in by_producer} >= {0, 1000}, list(by_producer)  # both actors delivered
    for producer_infos in by_producer.values():
        versions = [i["version"] for i in producer_infos]
        assert versions == sorted(versions), versions  # weights never go back in time
        for i in producer_infos:
            assert i["weight0"] == float(i["version"])  # the weights an actor used match their version
            assert i["learner_version"] >= i["version"]  # data never comes from weights the learner has not made
    assert max(i["version"] for i in infos) > 0  # weight versions advanced


def check_kill_restarts(make_backend):
    """Kill actor 1's process: a replacement with the same index (and a fresh seed) keeps delivering."""
    topo = counting_topology(num_actors=2, batch_unrolls=1)
    backend = make_backend(topo)
    learner = CheckingLearner()
    backend.start(learner)
    try:
        infos = []
        while not any(i["actor_index"] == 1 for i in infos):
            infos += drive(backend, learner, 1)[0]
        victim = next(i for i in infos if i["actor_index"] == 1)
        os.kill(victim["pid"], signal.SIGKILL)
        restarts, later = 0, []
        deadline = time.monotonic() + 90
        while not any(i["actor_index"] == 1 and i["pid"] != victim["pid"] for i in later):
            assert time.monotonic() < deadline, "actor 1 was not replaced in time"
            more, r = drive(backend, learner, 1, timeout=90)
            later += more
            restarts += r
        assert restarts >= 1
        replacement = next(i for i in later if i["actor_index"] == 1 and i["pid"] != victim["pid"])
        assert replacement["seed"] != victim["seed"]
    finally:
        backend.close()


def check_shutdown_leaves_nothing(make_backend):
    topo = counting_topology(num_actors=2, batch_unrolls=1)
    backend = make_backend(topo)
    learner = CheckingLearner()
    backend.start(learner)
    drive(backend, learner, 3)
    pids = backend.pids()
    backend.close()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if _alive(p)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False
