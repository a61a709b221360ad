"""The streaming (gRPC) transport: actors in threads here, as they would be on other machines."""

import threading
import time

import numpy as np
import pytest

from distrl.core.types import ArraySpec
from distrl.runtime.services.inference.client import run_env_actor
from distrl.runtime.services.inference.grpc import GrpcLink, GrpcTransport
from distrl.runtime.services.inference.loop import InferenceLoop
from distrl.runtime.services.inference.server import InferenceServer, RequestSpec
from tests.runtime.services.inference.fakes import (
    OBS,
    CheckingEnvActor,
    E,
    EchoPolicy,
    expected_action,
)

pytest.importorskip("grpc")
pytestmark = pytest.mark.timeout(60)
T = 4


@pytest.fixture
def served():
    made = []

    def make(slots, max_batch, max_wait_s=0.001):
        server = InferenceServer(EchoPolicy(), OBS, slots, E, T)
        transport = GrpcTransport(RequestSpec(OBS, E), ArraySpec((), "int64"), slots, "127.0.0.1:0",
                                  lambda slot: {"env_id": "CartPole-v1", "num_envs": E, "seed": 100 + slot})
        loop = InferenceLoop(server, transport, max_batch, max_wait_s, queue_size=1000)
        loop.start()
        made.append((loop, transport))
        return loop, transport

    yield make
    for loop, transport in made:
        loop.stop()
        loop.join(timeout=5)
        transport.close()


def actor_thread(address, index, stop, errors):
    def body():
        link = GrpcLink(address)
        try:
            run_env_actor(CheckingEnvActor(index, 0), link, stop.is_set)
        except Exception as e:  # an action meant for another actor
            errors.append(e)
        finally:
            link.close()
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


def wait_for(loop, n, deadline_s=20):
    out, end = [], time.monotonic() + deadline_s
    while len(out) < n:
        assert time.monotonic() < end, f"only {len(out)} unrolls"
        try:
            out.append(loop.unrolls.get(timeout=0.1))
        except Exception:
            pass
    return out


def test_concurrent_streams_each_get_their_own_actions(served):
    loop, transport = served(slots=4, max_batch=4)
    stop, errors = threading.Event(), []
    threads = [actor_thread(transport.address, i, stop, errors) for i in range(4)]
    unrolls = wait_for(loop, 24)
    stop.set()
    for t in threads:
        t.join(timeout=10)
    assert not errors, errors
    assert {int(u["obs"][0, 0, 0]) for u, _ in unrolls} == {0, 1, 2, 3}
    for u, _ in unrolls:
        np.testing.assert_array_equal(u["actions"], expected_action(u["obs"][:-1]))


def test_handshake_tells_a_joining_actor_what_to_run(served):
    _, transport = served(slots=1, max_batch=1)
    link = GrpcLink(transport.address)
    assert link.config["env_id"] == "CartPole-v1" and link.config["num_envs"] == E and link.config["slot"] == 0
    assert link.action_spec.shape == (E,)
    link.close()


def test_a_disconnected_stream_frees_its_slot_and_a_new_actor_starts_clean(served):
    loop, transport = served(slots=1, max_batch=1)
    first = GrpcLink(transport.address)
    actor = CheckingEnvActor(7, 0)
    req, timings = actor.reset(), np.zeros(2)
    for _ in range(T + 2):  # one unroll and part of the next
        req = actor.advance(first.request(req, timings))
    first.close()  # leaves mid-unroll
    second = GrpcLink(transport.address, timeout_s=10)  # gets the freed slot once the server noticed
    assert second.config["slot"] == 0
    fresh = CheckingEnvActor(8, 0)
    req = fresh.reset()
    for _ in range(T + 1):
        req = fresh.advance(second.request(req, timings))
    second.close()
    (u1, _), (u2, _) = wait_for(loop, 2)
    assert int(u1["obs"][0, 0, 0]) == 7 and int(u2["obs"][0, 0, 0]) == 8
    np.testing.assert_array_equal(u2["obs"][:, 0, 1], np.arange(T + 1))  # its own steps from 0
    assert loop.server.unrolls_dropped == 2  # each left with a partial unroll (the second 1 step into its next)


def test_a_full_server_refuses_an_extra_actor(served):
    import grpc

    _, transport = served(slots=1, max_batch=1)
    first = GrpcLink(transport.address)
    with pytest.raises(grpc.RpcError, match="every actor slot is taken"):  # after a 2 s grace for reconnects
        GrpcLink(transport.address)
    first.close()
