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
from tests.runtime.services.inference.tls import self_signed

pytest.importorskip("grpc")
pytestmark = pytest.mark.timeout(60)
T = 4


@pytest.fixture
def served():
    made = []

    def make(slots, max_batch, max_wait_s=0.001, **guards):
        server = InferenceServer(EchoPolicy(), OBS, slots, E, T)
        transport = GrpcTransport(RequestSpec(OBS, E), ArraySpec((), "int64"), slots, "127.0.0.1:0",
                                  lambda slot: {"env_id": "CartPole-v1", "num_envs": E, "seed": 100 + slot}, **guards)
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
    """Four actors stream at once; each unroll holds its own actor's observations and the actions meant for them. (The
    server's batch waits only for the actors connected, so a thread that starts late on a busy machine joins late:
    the test takes unrolls until every actor's have come, within a bounded time, not a fixed count.)"""
    loop, transport = served(slots=4, max_batch=4)
    stop, errors = threading.Event(), []
    threads = [actor_thread(transport.address, i, stop, errors) for i in range(4)]
    unrolls = wait_for(loop, 24)
    end = time.monotonic() + 20
    while {int(u["obs"][0, 0, 0]) for u, _ in unrolls} != {0, 1, 2, 3} and time.monotonic() < end:
        unrolls += wait_for(loop, 1)
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
    deadline = time.monotonic() + 30  # the second's end is seen once its stream has closed on the server's side
    while loop.server.unrolls_dropped < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert loop.server.unrolls_dropped == 2  # each left with a partial unroll (the second 1 step into its next)


def test_a_full_server_refuses_an_extra_actor(served):
    import grpc

    _, transport = served(slots=1, max_batch=1)
    first = GrpcLink(transport.address)
    with pytest.raises(grpc.RpcError, match="every actor slot is taken"):  # after a 2 s grace for reconnects
        GrpcLink(transport.address)
    first.close()


@pytest.fixture
def guarded(served):
    """A server that admits only peers with the token 'right', and drops silent ones after 0.5 s."""
    return lambda slots=1: served(slots, 1, token="right", handshake_timeout_s=0.5, idle_timeout_s=0.5)


def test_a_peer_without_the_token_is_refused_and_takes_no_slot(guarded, capfd):
    import grpc

    _, transport = guarded(slots=1)
    for wrong in ("", "wrong", "right "):
        with pytest.raises(grpc.RpcError) as e:
            GrpcLink(transport.address, timeout_s=10, token=wrong)
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    good = GrpcLink(transport.address, timeout_s=10, token="right")  # the one slot is still free
    assert good.config["slot"] == 0 and transport.rejected == 3
    good.close()
    assert "did not present the run's token" in capfd.readouterr().err  # one line per refusal, naming the peer


def _raw_stream(address: str, messages: list[bytes]):
    """A peer that speaks the wire format by hand: sends ``messages``, returns what came back (or the error)."""
    import grpc

    from distrl.runtime.services.inference.grpc import METHOD

    channel = grpc.insecure_channel(address)
    call = channel.stream_stream(METHOD)
    out = []
    try:
        for reply in call(iter(messages)):
            out.append(reply)
    except grpc.RpcError as e:
        out.append(e)
    channel.close()
    return out


@pytest.mark.parametrize("bad", ["short", "nan", "inf-reward", "huge-reward", "bool-0xff"])
def test_malformed_or_non_finite_requests_drop_the_stream_before_the_server_sees_them(guarded, capfd, bad):
    import json

    loop, transport = guarded(slots=1)
    hello = json.dumps({"token": "right"}).encode()
    good = CheckingEnvActor(0, 0).reset()
    arrays = dict(good, timings=np.zeros(2))
    if bad == "nan":
        arrays["obs"] = np.full_like(good["obs"], np.nan)
    if bad == "inf-reward":
        arrays["rewards"] = np.full_like(good["rewards"], np.inf)
    if bad == "huge-reward":  # finite, and an episode's sum of them overflows float32
        arrays["rewards"] = np.full_like(good["rewards"], 3e38)
    payload = b"".join(
        np.ascontiguousarray(arrays[k], dtype=s.dtype).tobytes() for k, s in transport.request_specs.items()
    )
    if bad == "bool-0xff":  # a bool array's bytes other than 0 or 1 (numpy would take them as True, summed as 255)
        name = next(k for k, s in transport.request_specs.items() if np.dtype(s.dtype) == np.bool_)
        _, spec, offset, nbytes = next(entry for entry in transport.layout if entry[0] == name)
        payload = payload[:offset] + b"\xff" * nbytes + payload[offset + nbytes:]
    if bad == "short":
        payload = payload[:-3]
    replies = _raw_stream(transport.address, [hello, payload])
    assert len(replies) == 1  # the handshake, then the stream ended: no action for a bad request
    assert loop.server.totals.requests == 0  # nothing reached the server's arrays
    assert "dropped" in capfd.readouterr().err
    deadline = time.monotonic() + 10
    while not transport.free and time.monotonic() < deadline:  # its slot comes back
        transport.poll(0.05)
    assert transport.free == [0]


def test_silent_peers_are_dropped_and_do_not_starve_real_actors(guarded):
    import grpc

    _, transport = guarded(slots=1)
    channels = []
    for _ in range(4):  # four connections that never say hello
        channel = grpc.insecure_channel(transport.address)
        call = channel.stream_stream("/distrl.Inference/Act")
        never = threading.Event()
        channels.append((channel, call(iter(never.wait, True))))
    deadline = time.monotonic() + 15
    while True:  # a real actor gets in once the silent ones have timed out
        try:
            link = GrpcLink(transport.address, timeout_s=5, token="right")
            break
        except grpc.RpcError:
            assert time.monotonic() < deadline, "silent peers kept a real actor out"
            time.sleep(0.2)
    assert link.config["slot"] == 0
    link.close()
    for channel, _ in channels:
        channel.close()


def test_join_imports_nothing_the_server_names(monkeypatch):
    """A server that says 'run mypkg.evil:Env-v0' gets a refusal unless this side asked for that env."""
    import distrl
    from distrl.errors import ConfigError
    from distrl.runtime.services.inference import grpc as transport_module

    class FakeLink:
        config = {"env_id": "tests.envs.crashing:DistrlAlwaysCrash-v0", "num_envs": 1, "seed": 0, "slot": 0}

        def __init__(self, *a, **k):
            pass

        def close(self):
            pass

    monkeypatch.setattr(transport_module, "GrpcLink", FakeLink)
    with pytest.raises(ConfigError, match="join it only with --env"):
        distrl.join("127.0.0.1:1", token="x")


def test_with_a_certificate_the_stream_is_tls_and_only_clients_that_trust_it_connect(served):
    import grpc

    pytest.importorskip("cryptography")
    cert, key = self_signed()
    loop, transport = served(1, 1, token="right", tls=(cert, key))
    server = loop.server
    with pytest.raises(grpc.FutureTimeoutError):  # plain TCP gets no TLS handshake through
        GrpcLink(transport.address, timeout_s=2, token="right")
    with pytest.raises(grpc.FutureTimeoutError):  # a server this client cannot verify is not trusted
        GrpcLink(transport.address, timeout_s=2, token="right", ca=self_signed()[0])
    link = GrpcLink(transport.address, timeout_s=10, token="right", ca=cert)
    stop = threading.Event()
    errors: list = []

    def body():
        try:
            run_env_actor(CheckingEnvActor(0, 0), link, stop.is_set)
        except Exception as e:  # an action meant for another actor, or a broken stream
            errors.append(e)

    worker = threading.Thread(target=body, daemon=True)
    worker.start()
    deadline = time.monotonic() + 20
    while server.totals.requests < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    worker.join(timeout=10)
    link.close()
    assert server.totals.requests >= 20 and not errors  # CheckingEnvActor raises on a wrong action


@pytest.mark.parametrize("silent", [4, 50])
def test_silent_peers_held_open_never_keep_a_real_actor_out(served, silent):
    """Silent connections that never time out here (a 60-s handshake limit), 4 or 50 held at once: a real actor
    still joins at once, taking the place of the peer that has waited longest for its hello."""
    import grpc

    _, transport = served(1, 1, token="right", handshake_timeout_s=60.0)
    held = []
    for _ in range(silent):
        channel = grpc.insecure_channel(transport.address)
        never = threading.Event()
        held.append((channel, never, channel.stream_stream("/distrl.Inference/Act")(iter(never.wait, True))))
    from distrl.runtime.streams import PRE_HELLO_STREAMS

    deadline = time.monotonic() + 10  # the silent streams are in (as many as are let wait for a hello)
    while transport.gate.waiting < min(silent, PRE_HELLO_STREAMS) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert transport.gate.waiting == min(silent, PRE_HELLO_STREAMS)
    link = GrpcLink(transport.address, timeout_s=10, token="right")  # joins (its timeout bounds the wait)
    assert link.config["slot"] == 0
    link.close()
    for channel, never, _ in held:
        never.set()
        channel.close()


def test_a_hello_too_long_or_too_deep_is_refused_unread(guarded, capfd):
    """A tokenless hello nested 200,000 deep (json would recurse until it fails) or longer than a hello can be is
    refused like any hello without the token, with nothing of the server's exceptions sent back."""
    import grpc

    _, transport = guarded(slots=1)
    for hello in (b"[" * 200_000 + b"]" * 200_000, b'{"token": "' + b"x" * 10_000 + b'"}'):
        channel = grpc.insecure_channel(transport.address)
        call = channel.stream_stream("/distrl.Inference/Act")(iter([hello]))
        with pytest.raises(grpc.RpcError) as e:
            next(call)
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED and "Recursion" not in (e.value.details() or "")
        channel.close()
    assert "did not present the run's token" in capfd.readouterr().err


def test_a_joining_actor_plays_whole_games_where_the_handshake_says_so(monkeypatch):
    """SEED + R2D2's server tells joining actors that a lost Atari life ends no episode (R2D2's whole games): the
    handshake carries the Inference spec's ``whole_games`` and ``distrl join`` builds its env with it."""
    from types import SimpleNamespace

    import distrl
    import distrl.agents.common.env_actor as env_actor
    from distrl.core.program import Inference
    from distrl.runtime.services.inference import client
    from distrl.runtime.services.inference import grpc as transport_module
    from distrl.runtime.services.inference.ray import GrpcInference

    spec = Inference(make_policy=None, obs=OBS, num_envs=2, unroll_length=T, max_batch=1, max_wait_s=0.0,
                     env_id="CartPole-v1", whole_games=True)
    handshake = GrpcInference._actor_config(SimpleNamespace(spec=spec, seed=0), 1)
    assert handshake["whole_games"] is True

    class FakeLink:
        config = {**handshake, "slot": 1}

        def __init__(self, *a, **k):
            pass

        def close(self):
            pass

    asked = []
    real = env_actor.make_vec_env
    monkeypatch.setattr(env_actor, "make_vec_env", lambda *a, **k: (asked.append(k), real(*a, **k))[1])
    monkeypatch.setattr(transport_module, "GrpcLink", FakeLink)
    monkeypatch.setattr(client, "run_env_actor", lambda actor, link: None)
    distrl.join("127.0.0.1:1", token="x")
    assert asked == [{"life_loss_ends": False}]
