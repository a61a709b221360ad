"""A service shared by several programs: over the network a call without the controller's token is refused before
its message is read, a refused request is one line and a large one is not read; an in-process handle refuses what
the server would and never leaves its process; a process finds a handle by its name."""

import pickle

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from distrl.core import shared
from distrl.errors import ConfigError
from distrl.runtime.services.shared import METHOD, SERVICE, TOKEN_KEY, InProcessHost, SharedServer
from tests.runtime.backends.fakes import Tally


@pytest.fixture
def server():
    s = SharedServer(Tally(), "the-token", "127.0.0.1:0")
    yield s
    s.close()


def _raw_call(address: str, payload: bytes, metadata=()):
    with grpc.insecure_channel(address) as channel:
        return channel.unary_unary(f"/{SERVICE}/{METHOD}")(payload, metadata=metadata, timeout=10)


@pytest.mark.parametrize("metadata", [(), ((TOKEN_KEY, "wrong"),), ((TOKEN_KEY, "the-token-and-more"),)])
def test_a_call_without_the_token_is_refused_unread(server, metadata):
    with pytest.raises(grpc.RpcError) as e:
        _raw_call(server.address, b"a:0:1", metadata)
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED and server.service.seen == []


def test_a_bad_request_is_one_line_and_a_large_one_is_not_read(server):
    with pytest.raises(ValueError, match="^a request is PROGRAM:ACTOR:PID$"):
        server.handle.request(b"nothing")
    with pytest.raises(grpc.RpcError) as e:
        _raw_call(server.address, b" " * 100_000, ((TOKEN_KEY, "the-token"),))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and server.service.seen == []


def test_the_handle_travels_as_its_address_and_token(server):
    handle = pickle.loads(pickle.dumps(server.handle))
    assert handle.request(b"a:0:7") == b"1" and server.service.seen == [("a", 0, 7)]
    handle.close()


def test_a_handle_to_a_closed_server_says_so():
    s = SharedServer(Tally(), "t", "127.0.0.1:0")
    s.close()
    with pytest.raises(ConnectionError, match="shared service"):
        s.handle.request(b"a:0:1")


def test_a_server_that_cannot_listen_is_one_line():
    with pytest.raises(ConfigError, match="cannot listen"):
        SharedServer(Tally(), "t", "no-port")


@pytest.fixture(scope="module")
def one_server():
    s = SharedServer(Tally(), "the-token", "127.0.0.1:0")
    yield s
    s.close()


def _outcome(handle, message):
    try:
        return "answer", handle.request(message)
    except ValueError as e:
        return "refused", str(e)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400))
def test_in_process_refuses_what_the_server_would(one_server, message):
    """The same service behind both handles: the same answer, or the same one-line refusal."""
    local = InProcessHost(Tally())
    local.service.seen = list(one_server.service.seen)  # the same count so far: the same answer
    assert _outcome(local.handle, message) == _outcome(one_server.handle, message)


def test_an_in_process_handle_does_not_leave_its_process():
    with pytest.raises(TypeError, match="only in the process"):
        pickle.dumps(InProcessHost(Tally()).handle)


def test_a_process_finds_a_handle_by_name_until_it_is_forgotten():
    host = InProcessHost(Tally())
    shared.register({"the-league": host.handle})
    assert shared.handle("the-league") is host.handle
    shared.forget("the-league")
    with pytest.raises(ConfigError, match="no shared service 'the-league'"):
        shared.handle("the-league")
