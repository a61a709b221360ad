"""The inference server over shared memory with real actor processes: no mix-ups, batching, max wait,
and an actor that dies mid-unroll."""

import os
import signal
import time
from functools import partial

import numpy as np
import pytest

from distrl.runtime.backends import make_backend
from tests.runtime.services.inference.fakes import (
    expected_action,
    make_checking_actor,
    program,
)

pytestmark = pytest.mark.timeout(60)


def collect(backend, n, deadline_s=20.0):
    """Run the backend until ``n`` unrolls came out; fail (not hang) after ``deadline_s``."""
    out, restarts, end = [], 0, time.monotonic() + deadline_s
    while len(out) < n:
        assert time.monotonic() < end, f"only {len(out)} unrolls in {deadline_s}s"
        restarts += backend.poll(0.0)[1]
        item = backend.next_batch(0.05)
        if item is not None:
            out.extend(zip([item[0]], item[1]))
    return out, restarts


@pytest.fixture
def backend_of():
    made = []

    def make(prog):
        b = make_backend("local", seed=0)
        made.append(b)
        b.open(prog)
        b.start((np.zeros(4, np.float32), 0))
        return b

    yield make
    for b in made:
        b.close()
        assert not b.pids()


def test_concurrent_actors_each_get_their_own_actions(backend_of):
    backend = backend_of(program(num_actors=4, max_batch=4, max_wait_s=0.001))
    unrolls, restarts = collect(backend, 40)
    end = time.monotonic() + 30
    while {int(u["obs"][0, 0, 0]) for u, _ in unrolls} != {0, 1, 2, 3} and time.monotonic() < end:
        more, r = collect(backend, 1)  # a busy machine may start one actor late
        unrolls, restarts = unrolls + more, restarts + r
    assert restarts == 0  # an actor handed someone else's actions raises and would have been restarted
    actors = {int(u["obs"][0, 0, 0]) for u, _ in unrolls}
    assert actors == {0, 1, 2, 3}
    for u, _ in unrolls:
        np.testing.assert_array_equal(u["actions"], expected_action(u["obs"][:-1]))


def test_batches_fill_up_to_max_batch(backend_of):
    backend = backend_of(program(num_actors=4, max_batch=4, max_wait_s=1.0))
    deadline = time.monotonic() + 20
    while len(backend.services()["inference"].loop.connected) < 4:  # an actor still starting is not waited for
        assert time.monotonic() < deadline
        collect(backend, 1)
    backend.services()["inference"].stats()  # from here on: every actor up
    collect(backend, 20)
    s = backend.services()["inference"].stats()
    assert s["inference_batch_p50"] == 4 * 3  # every forward pass takes all four actors' envs
    assert s["inference_batch_mean"] > 0.9 * 4 * 3


def test_a_slow_actor_does_not_hold_a_batch_beyond_max_wait(backend_of):
    slow = partial(make_checking_actor, slow=(1,), delay_s=0.05)
    backend = backend_of(program(num_actors=2, max_batch=2, max_wait_s=0.002, make_actor=slow))
    unrolls, _ = collect(backend, 20)
    by_actor = np.bincount([int(u["obs"][0, 0, 0]) for u, _ in unrolls], minlength=2)
    # the fast actor steps ~25x as often as the slow one (it would be held to the same pace otherwise)
    assert by_actor[0] >= 5 * max(by_actor[1], 1), by_actor
    assert backend.services()["inference"].stats()["latency_p50_ms"] < 20


def test_an_actor_that_dies_mid_unroll_is_dropped_and_replaced(backend_of):
    backend = backend_of(program(num_actors=2, max_batch=2, max_wait_s=0.001))
    end = time.monotonic() + 20
    while not any(int(u["obs"][0, 0, 0]) == 0 for u, _ in collect(backend, 1)[0]):  # actor 0 is up and mid-stream
        assert time.monotonic() < end
    victim = backend.workers[0].handle.pid
    os.kill(victim, signal.SIGKILL)
    seen_restart, fresh_start, end = 0, False, time.monotonic() + 20
    while not (seen_restart and fresh_start):
        assert time.monotonic() < end, "the killed actor was not replaced"
        seen_restart += backend.poll(0.0)[1]
        item = backend.next_batch(0.05)
        if item is not None and seen_restart:
            u = item[0]
            if int(u["obs"][0, 0, 0]) == 0 and u["obs"][0, 0, 1] == 0:
                fresh_start = True  # the replacement's first unroll starts at its own step 0
    assert backend.workers[0].handle.pid != victim and seen_restart == 1
    assert backend.services()["inference"].server.unrolls_dropped == 1
