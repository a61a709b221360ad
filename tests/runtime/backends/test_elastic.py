"""An elastic role on ``local`` (autoscale): parked components start, retired ones hand back their steps in flight
first and stop; the other backends refuse a program that starts only some of a role's components."""

from __future__ import annotations

import dataclasses
import time

import pytest

from distrl.runtime.backends import make_backend
from distrl.runtime.backends.placement import slot_count
from tests.runtime.backends.contract import WAIT_S, drive, started
from tests.runtime.backends.fakes import E, counting_program


def elastic_program(count: int, active: int, batch: int = 1):
    program = counting_program(num_actors=count, batch=batch)
    actor = dataclasses.replace(program.roles[0], elastic=True)
    return dataclasses.replace(program, roles=(actor,)).starting(active)


def _drive_until(backend, learner, infos: list, done) -> None:
    deadline = time.monotonic() + WAIT_S
    while not done():
        infos += drive(backend, learner, 1, deadline)[0]


def _running(backend) -> set[int]:
    return {w.index for w in backend.workers if not w.parked}


def test_local_scales_an_elastic_role_up_and_down_and_no_step_in_flight_is_lost():
    backend, learner = started(lambda: make_backend("local", seed=0), elastic_program(count=4, active=1))
    infos: list = []
    try:
        assert len(backend.pids()) == 1 and _running(backend) == {0}
        infos += drive(backend, learner, 5)[0]
        assert {i["actor_index"] for i in infos} == {0}
        assert not backend.scaling("actor")
        backend.scale("actor", 3)
        assert _running(backend) == {0, 1, 2}
        assert backend.scaling("actor")  # 1 and 2 not stepped yet: no window of the autoscaler counts them
        _drive_until(backend, learner, infos, lambda: {i["actor_index"] for i in infos} == {0, 1, 2})
        assert not backend.scaling("actor")
        assert len(backend.pids()) == 3
        backend.scale("actor", 1)  # 1 and 2 retire: their steps in flight still arrive, then they stop
        _drive_until(backend, learner, infos, lambda: _running(backend) == {0})
        deadline = time.monotonic() + WAIT_S
        while len(backend.pids()) > 1:  # their processes end once their pipes close
            assert time.monotonic() < deadline
            time.sleep(0.01)
        infos += drive(backend, learner, 4 * 2)[0]  # what they made before they stopped, queued in its 8 slots
        before = len(infos)
        infos += drive(backend, learner, 10)[0]
        assert {i["actor_index"] for i in infos[before:]} == {0}  # parked: no step granted
        backend.scale("actor", 2)  # actor 1 starts again, with a fresh seed (it must not replay its episodes)
        _drive_until(backend, learner, infos, lambda: sum(i["actor_index"] == 1 for i in infos[before:]) >= 2)
    finally:
        backend.close()
    seeds_of_1 = {i["seed"] for i in infos if i["actor_index"] == 1}
    assert len(seeds_of_1) == 2, seeds_of_1  # before it retired, and after it started again
    assert backend.pids() == []


def _held(backend) -> int:
    return backend.slots["actor"].leading[0] - len(backend.free["actor"])


def test_the_running_actors_hold_only_their_share_of_the_slots_made_for_the_most():
    """An autoscaled role's slots are made for ``max_actors``; 2 running actors filling 8 actors' slots while the
    learner lags would put 4x as many steps between the actors' policy and the learner's (APPO's policy lag on
    CartPole measured 186 -> 722 updates). Each release grants steps only within the running actors' share."""
    backend, learner = started(lambda: make_backend("local", seed=0), elastic_program(count=8, active=2, batch=1))
    try:
        role = backend.program.roles[0]
        share = slot_count(backend.program, role, 2)
        assert backend.slots["actor"].leading[0] == slot_count(backend.program, role, 8) > share
        for _ in range(12):  # a batch of one unroll per release, while two actors make two steps each
            drive(backend, learner, 1)
            assert _held(backend) <= share
        backend.scale("actor", 4)
        wider = slot_count(backend.program, role, 4)
        infos: list = []
        _drive_until(backend, learner, infos, lambda: {i["actor_index"] for i in infos} >= {2, 3})
        for _ in range(12):
            drive(backend, learner, 1)
            assert _held(backend) <= wider
    finally:
        backend.close()


def test_a_retiring_components_outputs_all_reach_the_learner_in_order():
    """Every step a retired actor was granted comes back: its outputs' step counts have no gap from 0 to its last."""
    backend, learner = started(lambda: make_backend("local", seed=0), elastic_program(count=2, active=2, batch=1))
    seqs: dict[int, list[int]] = {0: [], 1: []}
    step = learner.step

    def recording(batch):
        for actor, seq in zip(batch["actor"][::E], batch["seq"][::E]):  # one unroll each E env columns
            seqs[int(actor)].append(int(seq))
        return step(batch)

    learner.step = recording
    try:
        _drive_until(backend, learner, [], lambda: len(seqs[1]) >= 3)
        backend.scale("actor", 1)
        _drive_until(backend, learner, [], lambda: _running(backend) == {0})
        drive(backend, learner, 5)
    finally:
        backend.close()
    assert seqs[1] == list(range(len(seqs[1])))  # none lost, none twice, in order
    assert seqs[0] == list(range(len(seqs[0])))


@pytest.mark.parametrize("runtime", ["inline"])
def test_a_backend_that_cannot_scale_refuses_a_program_that_starts_some_of_a_role(runtime):
    backend = make_backend(runtime, seed=0)
    try:
        with pytest.raises(ValueError, match="needs local"):
            backend.open(elastic_program(count=3, active=1))
    finally:
        backend.close()


def test_a_retired_seed_env_actor_finishes_its_unroll_and_the_servers_batch_follows_the_actors_that_run():
    """SEED's env actors are elastic: one retired after some unrolls sends its last step's outcome before it stops
    (``EnvActor.finish``), so the server completes that unroll and drops none, and the server's loop no longer waits
    for the retired actor's requests."""
    from distrl.api import plan_run

    program = plan_run("seed", "CartPole-v1", num_actors=2, num_envs=2, unroll_length=8, batch_unrolls=1)[-1]
    backend, learner = started(lambda: make_backend("local", seed=0), program.starting(2))
    server = backend.adapters["inference"].server
    slots: list[int] = []
    try:
        _drive_until(backend, learner, slots, lambda: {i["slot"] for i in slots} == {0, 1})
        backend.scale("actor", 1)
        _drive_until(backend, learner, slots, lambda: _running(backend) == {0})
        deadline = time.monotonic() + WAIT_S
        while len(backend.pids()) > 1 or server.pending[1]:  # gone, and its slot dropped by the server
            assert time.monotonic() < deadline
            infos, _ = drive(backend, learner, 1)
            slots += infos
        assert server.unrolls_dropped == 0  # its last unroll was completed, not dropped
        # its final request took it off the loop's connected actors: actor 0's requests are not held for its (the
        # loop's rule, without a clock: test_loop.py)
        assert backend.adapters["inference"].loop.connected == {0}
        drive(backend, learner, 3)
    finally:
        backend.close()
