"""The policy server's gRPC route: one bidirectional stream per client, the stream its session.

A JSON hello with the run's token comes first and the server answers with the policy's spec; then each message is
one flags byte (bit 0: the episode starts) and the observation's raw bytes, each answer the action's raw bytes.
Unauthenticated peers cannot crowd clients out (``runtime/streams.py``, shared with SEED's actors' streams: at most
``PRE_HELLO_STREAMS`` wait for their hello, a silent one is dropped after ``HANDSHAKE_TIMEOUT_S``), and the server
takes ``max_clients`` streams beyond those. No message larger than a request is read.
"""

from __future__ import annotations

import json

import numpy as np

from distrl.deploy.checks import warn
from distrl.errors import ConfigError
from distrl.runtime.streams import (
    HELLO_BYTES,
    PRE_HELLO_STREAMS,
    HelloGate,
    StreamReader,
    hello_token,
    listen,
    stream_server,
)

METHOD = "/distrl.Policy/Act"
HANDSHAKE_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 300.0  # a client silent this long after its hello gives its stream (and session) back
EPISODE_START = 1


class GrpcRoute:
    def __init__(self, server, bind: str, tls: tuple[bytes, bytes] | None, max_clients: int):

        self.server = server
        self.gate = HelloGate()
        largest = max(HELLO_BYTES, 1 + server.check.nbytes)
        # no SO_REUSEPORT (gRPC's default): a second server on a port in use is refused, not handed half the clients
        self.grpc = stream_server(self._stream, METHOD, max_clients + PRE_HELLO_STREAMS + 2,
                                  [("grpc.max_receive_message_length", largest), ("grpc.so_reuseport", 0)])
        port = listen(self.grpc, bind, tls)
        if port == 0:
            raise ConfigError(f"cannot listen on {bind} (in use, or not an address of this machine)")
        self.address = f"{bind.rsplit(':', 1)[0]}:{port}"
        self.grpc.start()

    def _stream(self, request_iterator, context):
        reader = StreamReader(request_iterator, "distrl-serve-reader")
        try:
            yield from self._serve(reader, context)
        finally:
            reader.drop()  # on every way out (a refusal or an abort raises): its thread stops reading

    def _serve(self, reader: StreamReader, context):
        import grpc

        if not self.server.admits(hello_token(self.gate.hello(reader, HANDSHAKE_TIMEOUT_S))):
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
                    self.server.invalid += 1
                    warn(f"{context.peer()}: {e}: dropped")
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
                try:
                    action = batcher.act(obs, session, bool(msg[0] & EPISODE_START))
                except (RuntimeError, TimeoutError) as e:
                    context.abort(grpc.StatusCode.INTERNAL, str(e))
                yield np.ascontiguousarray(action, dtype=self.server.action_dtype).tobytes()
        finally:
            batcher.end_session(session)

    def close(self) -> None:
        self.grpc.stop(grace=None)
