"""The policy server's gRPC route: one bidirectional stream per client, the stream its session.

A JSON hello with the run's token comes first and the server answers with the policy's spec; then each message is
one flags byte (bit 0: the episode starts) and the observation's raw bytes, each answer the action's raw bytes.
Unauthenticated peers cannot crowd clients out: at most ``PRE_HELLO_STREAMS`` streams wait for their hello (a
newcomer drops the one that has waited longest), a silent one is dropped after ``HANDSHAKE_TIMEOUT_S``, and the server
takes ``max_clients`` streams beyond those. No message larger than a request is read, and a stream's messages are
read one at a time (a client that sends ahead is held back by gRPC's flow control, not buffered).
"""

from __future__ import annotations

import json
import queue
import threading
from collections import OrderedDict
from concurrent import futures

import numpy as np

from distrl.deploy.checks import warn
from distrl.errors import ConfigError

METHOD = "/distrl.Policy/Act"
HELLO_BYTES = 4096
HANDSHAKE_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 300.0  # a client silent this long after its hello gives its stream (and session) back
PRE_HELLO_STREAMS = 8
EPISODE_START = 1


class _Reader:
    """A stream's messages, read by a thread one at a time (the queue holds one: the next read waits for the
    handler), with timeouts for the handler; ``drop()`` makes a waiting ``get`` return None."""

    def __init__(self, iterator):
        self.inbox: queue.Queue = queue.Queue(maxsize=1)
        self.dropped = threading.Event()

        def pump():
            try:
                for msg in iterator:
                    while not self.dropped.is_set():
                        try:
                            self.inbox.put(msg, timeout=0.5)
                            break
                        except queue.Full:
                            continue
                    if self.dropped.is_set():
                        return
            except Exception:  # the stream ended or broke: the handler's next get returns None
                pass
            self.dropped.set()

        threading.Thread(target=pump, name="distrl-serve-reader", daemon=True).start()

    def get(self, timeout_s: float) -> bytes | None:
        deadline = timeout_s
        while deadline > 0:
            try:
                return self.inbox.get(timeout=min(0.25, deadline))
            except queue.Empty:
                if self.dropped.is_set() and self.inbox.empty():
                    return None
                deadline -= 0.25
        return None

    def drop(self) -> None:
        self.dropped.set()


class GrpcRoute:
    def __init__(self, server, bind: str, tls: tuple[bytes, bytes] | None, max_clients: int):
        import grpc

        self.server = server
        self._waiting: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        streams = max_clients + PRE_HELLO_STREAMS + 2
        largest = max(HELLO_BYTES, 1 + server.check.nbytes)
        # no SO_REUSEPORT (gRPC's default): a second server on a port in use is refused, not handed half the clients
        self.grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=streams), maximum_concurrent_rpcs=streams,
                                options=[("grpc.max_receive_message_length", largest), ("grpc.so_reuseport", 0)])
        handler = grpc.stream_stream_rpc_method_handler(self._stream)
        self.grpc.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            METHOD.split("/")[1], {METHOD.split("/")[2]: handler}),))
        try:
            port = self.grpc.add_insecure_port(bind) if tls is None else \
                self.grpc.add_secure_port(bind, grpc.ssl_server_credentials([(tls[1], tls[0])]))
        except RuntimeError:  # grpc >= 1.60 raises where older ones returned 0
            port = 0
        if port == 0:
            raise ConfigError(f"cannot listen on {bind} (in use, or not an address of this machine)")
        self.address = f"{bind.rsplit(':', 1)[0]}:{port}"
        self.grpc.start()

    def _hello(self, reader: _Reader) -> bytes | None:
        key = object()
        with self._lock:
            if len(self._waiting) >= PRE_HELLO_STREAMS:
                self._waiting.popitem(last=False)[1].drop()  # the longest-waiting silent peer makes room
            self._waiting[key] = reader
        hello = reader.get(HANDSHAKE_TIMEOUT_S)
        with self._lock:
            self._waiting.pop(key, None)
        return None if reader.dropped.is_set() and hello is None else hello

    def _stream(self, request_iterator, context):
        import grpc

        reader = _Reader(request_iterator)
        hello = self._hello(reader)
        try:
            given = json.loads(hello.decode()).get("token") if hello is not None and len(hello) <= HELLO_BYTES \
                else None
        except (ValueError, UnicodeDecodeError, AttributeError, RecursionError):
            given = None
        if not self.server.admits(given):
            reader.drop()
            warn(f"{context.peer()} did not present the run's token: refused")
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "a hello with the run's token is needed")
        session = ("grpc", object())  # the stream is the session
        check, batcher = self.server.check, self.server.batcher
        try:
            yield json.dumps(self.server.spec).encode()
            while (msg := reader.get(IDLE_TIMEOUT_S)) is not None:
                try:
                    if len(msg) < 1 or msg[0] > EPISODE_START:
                        raise ValueError("a request is one flags byte (0, or 1: the episode starts) and the "
                                         "observation's bytes")
                    obs = check.from_bytes(memoryview(msg)[1:])
                except ValueError as e:
                    warn(f"{context.peer()}: {e}: dropped")
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
                try:
                    action = batcher.act(obs, session, bool(msg[0] & EPISODE_START))
                except (RuntimeError, TimeoutError) as e:
                    context.abort(grpc.StatusCode.INTERNAL, str(e))
                yield np.ascontiguousarray(action, dtype=self.server.action_dtype).tobytes()
        finally:
            reader.drop()
            batcher.end_session(session)

    def close(self) -> None:
        self.grpc.stop(grace=None)
