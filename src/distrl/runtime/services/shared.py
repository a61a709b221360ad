"""A service shared by several programs under one controller: a league's coordinator, reached by every player's games.

The controller (``distrl league``) holds the service object; each program it runs gets a *handle* to it
(``make_trainer(shared={name: handle})``), and the backend hands the handles to every component it starts, in
whatever process that is (``core/shared.py`` keeps them there by name). A handle has one method, ``request(bytes) ->
bytes``: the service's ``answer``, checked there (``core.protocols.SharedService``). How a request travels is the
backend's choice (``runtime/backends/*.share``):

- :class:`InProcessShared` (``inline``): a direct call, for programs whose components all run in the controller's
  process. It does not pickle: a component elsewhere cannot hold it.
- :class:`RemoteShared` over :class:`SharedServer` (``local``, ``ray``): one unary gRPC method. Each call carries the
  controller's token in its metadata (``x-distrl-token``), compared in constant time, and is refused before its
  message is parsed or answered without it; a request is at most the service's ``request_bytes`` (gRPC takes no
  more), and a unary call keeps no session a silent peer could sit on. The handle pickles as its address, token and
  size limit: a Ray actor on another node gets it with its trainer, no shared file system needed.

Either handle refuses the same requests the same way: ValueError, in one line, for one that is too long or that the
service refused; over the network, ConnectionError when the server is gone and RuntimeError when the service failed.
"""

from __future__ import annotations

import os
import socket
import threading
from concurrent import futures

from distrl.core.protocols import SharedService
from distrl.errors import ConfigError
from distrl.runtime.streams import same_token

# gRPC's core logs at INFO a GOAWAY each client hears as the server stops; a user's own setting stands
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

SERVICE, METHOD = "distrl.Shared", "Call"
TOKEN_KEY = "x-distrl-token"
CALL_TIMEOUT_S = 360.0  # longer than a service may hold a call (a league's wait for a player's first weights)
MAX_CALLS = 64  # at once, beyond which a call is refused (RESOURCE_EXHAUSTED) rather than queued
WILDCARDS = ("0.0.0.0", "[::]", "::")


class InProcessShared:
    """A handle that calls the service in this process; the same size limit and refusals as over the network."""

    def __init__(self, service: SharedService):
        self.service = service

    def request(self, message: bytes) -> bytes:
        if len(message) > self.service.request_bytes:
            raise ValueError(f"a request is at most {self.service.request_bytes} bytes")
        return self.service.answer(message)

    def __reduce__(self):
        raise TypeError("an inline shared service is reached only in the process that holds it; host it on local "
                        "or ray for components in other processes")


class RemoteShared:
    """A handle to a :class:`SharedServer`: its address, token and size limit; the channel is opened in the process
    using it, once (its threads may share it)."""

    def __init__(self, address: str, token: str, request_bytes: int):
        self.address, self.token, self.request_bytes = address, token, request_bytes
        self._call = self._channel = None
        self._lock = threading.Lock()

    def __getstate__(self):
        return {"address": self.address, "token": self.token, "request_bytes": self.request_bytes}

    def __setstate__(self, state):
        self.__init__(state["address"], state["token"], state["request_bytes"])

    def _opened(self):
        import grpc

        with self._lock:
            if self._call is None:
                self._channel = grpc.insecure_channel(self.address, options=[("grpc.max_receive_message_length", -1)])
                self._call = self._channel.unary_unary(f"/{SERVICE}/{METHOD}")
            return self._call

    def request(self, message: bytes) -> bytes:
        import grpc

        if len(message) > self.request_bytes:
            raise ValueError(f"a request is at most {self.request_bytes} bytes")
        try:
            # no wait for a server that is not there: it listens before any handle is given out
            return self._opened()(message, metadata=((TOKEN_KEY, self.token),), timeout=CALL_TIMEOUT_S)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise ValueError(e.details()) from None
            if e.code() in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL):
                raise RuntimeError(f"the shared service at {self.address} failed: {e.details()}") from None
            raise ConnectionError(f"the shared service at {self.address}: {e.code().name} {e.details()}") from None

    def close(self) -> None:
        with self._lock:
            if self._channel is not None:
                self._channel.close()
                self._call = self._channel = None


class SharedServer:
    """Serves one :class:`~distrl.core.protocols.SharedService` to peers holding ``token`` on ``bind`` (HOST:PORT,
    port 0 for any free one); ``handle`` is what the programs get."""

    def __init__(self, service: SharedService, token: str, bind: str, workers: int = 8):
        import grpc

        if not token:  # an empty token would admit every peer
            raise ValueError("a shared service on the network needs a token")
        self.service, self._token = service, token
        options = [("grpc.max_receive_message_length", service.request_bytes),
                   ("grpc.max_send_message_length", -1), ("grpc.so_reuseport", 0)]
        self.grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="distrl-shared"),
                                maximum_concurrent_rpcs=MAX_CALLS, options=options)
        handler = grpc.unary_unary_rpc_method_handler(self._call)
        self.grpc.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {METHOD: handler}),))
        host, _, port = bind.rpartition(":")
        try:
            bound = self.grpc.add_insecure_port(bind)
        except RuntimeError:
            bound = 0
        if not host or bound == 0:
            raise ConfigError(f"a shared service cannot listen on {bind!r} (give HOST:PORT, port 0 for any)")
        # listening on every interface: peers on other machines reach it at this machine's address
        self.address = f"{socket.gethostbyname(socket.gethostname()) if host in WILDCARDS else host}:{bound}"
        self.handle = RemoteShared(self.address, token, service.request_bytes)
        self.grpc.start()

    def _call(self, request: bytes, context):
        import grpc

        given = dict(context.invocation_metadata()).get(TOKEN_KEY, "")
        if not same_token(given, self._token):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "the controller's token is needed")
        try:
            return self.service.answer(request)
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e).splitlines()[0][:500] if str(e) else "refused")

    def close(self) -> None:
        self.service.close()  # a call the service holds (waiting on its state) returns now, not in minutes
        self.grpc.stop(grace=None)
        self.handle.close()


class InProcessHost:
    """What ``inline`` hosts: nothing but the handle."""

    def __init__(self, service: SharedService):
        self.service, self.handle = service, InProcessShared(service)

    def close(self) -> None:
        self.service.close()


def in_process(service: SharedService, token: str, bind: str | None = None) -> InProcessHost:
    """``inline``'s host: every component runs in the controller's process, so a direct call and no server."""
    return InProcessHost(service)


def on_loopback(service: SharedService, token: str, bind: str | None = None) -> SharedServer:
    """``local``'s host: the components are processes of this machine, so a token-admitted server on loopback."""
    return SharedServer(service, token, bind or "127.0.0.1:0")
