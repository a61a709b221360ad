"""SEED's streaming transport across machines: one gRPC bidirectional stream per env actor.

As in the paper, each actor keeps one stream open and sends a request per env step; the server
answers on the same stream. Messages are the raw bytes of the fixed-shape arrays (no protobuf
schema, no pickle): the first message each way is a small JSON handshake in which the server
assigns the actor a slot and tells it what to run (env id, envs per actor, seed, array layouts),
so ``distrl join HOST:PORT`` needs nothing else. The server binds to 127.0.0.1 unless told
otherwise (``--set bind=0.0.0.0:PORT`` to accept actors from other machines). Every peer must
present the run's token in its hello; with a certificate (``tls_cert``/``tls_key``) the stream is
TLS, so the token and the data cannot be read or altered on the way.

gRPC calls the stream handler on its own thread pool; the handler copies the request into the
slot's arrays and queues the slot; the inference loop polls that queue exactly as it polls pipes
on ``local``. A stream that ends (actor gone, network cut) frees the slot after the loop has
dropped its partial unroll, so a reconnecting actor starts clean in whatever slot is free.
"""

from __future__ import annotations

import json
import queue
import sys
import threading

import numpy as np

from distrl.core.types import ArraySpec
from distrl.runtime.services.inference.server import RequestSpec
from distrl.runtime.streams import (
    PRE_HELLO_STREAMS,
    HelloGate,
    StreamReader,
    hello_token,
    listen,
    same_token,
    stream_server,
)

METHOD = "/distrl.Inference/Act"
_OPTIONS = [("grpc.max_send_message_length", 64 << 20), ("grpc.max_receive_message_length", 64 << 20)]


def _layout(specs: dict[str, ArraySpec]) -> list[tuple[str, ArraySpec, int, int]]:
    out, offset = [], 0
    for name, s in specs.items():
        out.append((name, s, offset, s.nbytes))
        offset += s.nbytes
    return out


def _spec_json(specs: dict[str, ArraySpec]) -> dict:
    return {k: [list(s.shape), s.dtype] for k, s in specs.items()}


def _spec_from_json(d: dict) -> dict[str, ArraySpec]:
    return {k: ArraySpec(tuple(shape), dtype) for k, (shape, dtype) in d.items()}


HANDSHAKE_TIMEOUT_S = 5.0  # a peer that says nothing valid this long after connecting is dropped
# a finite value this large (3e38) is still no env's: summed over an episode it overflows float32 and turns the
# run's returns into inf; no task's reward per step comes near it
MAX_ABS_VALUE = 1e12
IDLE_TIMEOUT_S = 60.0  # an actor silent this long after its hello gives its slot back


def _warn(text: str) -> None:
    print(f"distrl: inference server: {text}", file=sys.stderr, flush=True)


class GrpcTransport:
    """Server end. ``actor_config(slot)`` is what the handshake tells the actor taking ``slot``. A peer is
    admitted only with the run's ``token`` in its hello; every request is checked (size, and finite
    observations and rewards) before it reaches the server's arrays; a bad one drops the stream with one
    line naming the peer. Streams waiting for their hello are at most ``PRE_HELLO_STREAMS``, a newcomer dropping
    the longest-waiting one beyond that, and a silent peer is dropped after a timeout; the server serves
    ``num_slots + PRE_HELLO_STREAMS + 2`` streams, so idle or silent connections, however many and however often
    renewed, cannot keep real actors out."""

    def __init__(
        self,
        request: RequestSpec,
        action: ArraySpec,
        num_slots: int,
        bind: str,
        actor_config,
        token: str = "",
        handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        tls: tuple[bytes, bytes] | None = None,
    ):

        self.request_specs = request.arrays()
        self.action_spec = ArraySpec((request.num_envs,) + action.shape, action.dtype)
        self.requests = {k: s.empty((num_slots,)) for k, s in self.request_specs.items()}
        self.actions = self.action_spec.empty((num_slots,))
        self.layout = _layout(self.request_specs)
        self.message_bytes = sum(n for _, _, _, n in self.layout)
        self.actor_config = actor_config
        self.token = token
        self.handshake_timeout_s, self.idle_timeout_s = handshake_timeout_s, idle_timeout_s
        self.free = list(range(num_slots))
        self._freed = threading.Condition()
        self._ready: queue.SimpleQueue = queue.SimpleQueue()
        self._left: queue.SimpleQueue = queue.SimpleQueue()
        self._answered = [threading.Event() for _ in range(num_slots)]
        self._stopping = threading.Event()
        self.rejected = 0
        self.on_disconnect = lambda slot: None
        self.gate = HelloGate()
        self.server = stream_server(self._stream, METHOD, num_slots + PRE_HELLO_STREAMS + 2, _OPTIONS)
        self.port = listen(self.server, bind, tls)
        if self.port == 0:
            raise OSError(f"cannot listen on {bind}")
        self.address = f"{bind.rsplit(':', 1)[0]}:{self.port}"
        self.server.start()

    def _admit(self, hello: bytes | None, peer: str) -> bool:
        if hello is None:
            _warn(f"{peer} said nothing within {self.handshake_timeout_s:g} s (or gave its place to a newer peer): "
                  "dropped")
            return False
        if not same_token(hello_token(hello), self.token):
            _warn(f"{peer} did not present the run's token: refused")
            return False
        return True

    def _valid(self, slot: int, msg: bytes, peer: str) -> bool:
        """Copy a request into ``slot``'s arrays if it is whole and finite; False (with a line) if not."""
        if len(msg) != self.message_bytes:
            _warn(f"{peer} sent {len(msg)} bytes where a request has {self.message_bytes}: dropped")
            return False
        view = memoryview(msg)
        arrays = {}
        for name, spec, offset, nbytes in self.layout:
            arrays[name] = np.frombuffer(view[offset:offset + nbytes], dtype=spec.dtype).reshape(spec.shape)
            if arrays[name].dtype.kind == "f" and not np.isfinite(arrays[name]).all():
                _warn(f"{peer} sent non-finite {name}: dropped")
                return False
            if name == "rewards" and (np.abs(arrays[name]) > MAX_ABS_VALUE).any():
                _warn(f"{peer} sent rewards beyond +-{MAX_ABS_VALUE:g}: dropped")
                return False
            if arrays[name].dtype.kind == "b" and (arrays[name].view(np.uint8) > 1).any():  # a bool is 0 or 1
                _warn(f"{peer} sent {name} bytes that are not booleans: dropped")
                return False
        for name, a in arrays.items():
            self.requests[name][slot][...] = a
        return True

    def _stream(self, request_iterator, context):
        reader = StreamReader(request_iterator)
        try:
            yield from self._serve(reader, context)
        finally:
            reader.drop()  # on every way out (a refusal or an abort raises): its thread stops reading

    def _serve(self, reader: StreamReader, context):
        import grpc

        peer = context.peer()
        if not self._admit(self.gate.hello(reader, self.handshake_timeout_s), peer):
            self.rejected += 1
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "a hello with the run's token is needed (distrl join "
                                                           "--token)")
        with self._freed:  # a reconnecting actor may arrive just before its old stream's slot is freed
            self._freed.wait_for(lambda: self.free, timeout=2.0)
            slot = self.free.pop(0) if self.free else None
        if slot is None:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "every actor slot is taken")
        answered = self._answered[slot]
        try:
            yield json.dumps({**self.actor_config(slot), "slot": slot, "request": _spec_json(self.request_specs),
                              "actions": _spec_json({"actions": self.action_spec})}).encode()
            while (msg := reader.get(self.idle_timeout_s)) is not None:
                if not self._valid(slot, msg, peer):
                    return
                answered.clear()
                self._ready.put(slot)
                while not answered.wait(0.1):
                    if self._stopping.is_set() or not context.is_active():
                        return
                yield self.actions[slot].tobytes()
        finally:
            self._left.put(slot)  # freed by the loop, after it dropped the slot's partial unroll

    def poll(self, timeout: float) -> list[int]:
        ready = []
        try:
            ready.append(self._ready.get(timeout=timeout))
            while True:
                ready.append(self._ready.get_nowait())
        except queue.Empty:
            pass
        # departures after the requests: a request queued just before its stream ended is not served to a slot no
        # actor holds any more (which would begin an unroll there, and be waited for)
        left = set()
        while not self._left.empty():
            slot = self._left.get()
            left.add(slot)
            self.on_disconnect(slot)
            with self._freed:
                self.free.append(slot)
                self._freed.notify()
        return [slot for slot in ready if slot not in left]

    def respond(self, slots: np.ndarray) -> None:
        for slot in slots.tolist():
            self._answered[slot].set()

    def close(self) -> None:
        self._stopping.set()
        self.server.stop(grace=None)


class GrpcLink:
    """Client end (the actor's): one stream, one message out and one back per env step. With ``ca`` (PEM:
    the server's certificate or the authority that signed it) the stream is TLS and the server must prove it
    holds that certificate for the host dialled."""

    def __init__(self, address: str, timeout_s: float = 30.0, token: str = "", ca: bytes | None = None):
        import grpc

        self._rpc_error = grpc.RpcError
        if ca is None:
            self.channel = grpc.insecure_channel(address, options=_OPTIONS)
        else:
            self.channel = grpc.secure_channel(
                address, grpc.ssl_channel_credentials(root_certificates=ca), options=_OPTIONS
            )
        grpc.channel_ready_future(self.channel).result(timeout=timeout_s)
        self._out: queue.SimpleQueue = queue.SimpleQueue()
        call = self.channel.stream_stream(METHOD)
        self._responses = call(iter(self._out.get, None))
        self._out.put(json.dumps({"token": token}).encode())
        self.config = json.loads(next(self._responses))
        self.specs = _spec_from_json(self.config["request"])
        self.action_spec = _spec_from_json(self.config["actions"])["actions"]

    bytes = 0  # what its messages moved, both ways (the runtime's bytes per env step)

    def request(self, arrays: dict[str, np.ndarray], timings: np.ndarray):
        arrays = dict(arrays, timings=timings)
        out = b"".join(np.ascontiguousarray(arrays[k], dtype=s.dtype).tobytes() for k, s in self.specs.items())
        self._out.put(out)
        try:
            msg = next(self._responses)
        except (self._rpc_error, StopIteration):
            return None
        self.bytes += len(out) + len(msg)
        return np.frombuffer(msg, dtype=self.action_spec.dtype).reshape(self.action_spec.shape)

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()


class LazyGrpcLink:
    """A picklable :class:`GrpcLink` for a Ray actor: it dials the server on its first request."""

    def __init__(self, address: str, token: str = "", timeout_s: float = 30.0, ca: bytes | None = None):
        self.address, self.token, self.timeout_s, self.ca = address, token, timeout_s, ca
        self.link: GrpcLink | None = None

    def __getstate__(self):
        return {"address": self.address, "token": self.token, "timeout_s": self.timeout_s, "ca": self.ca}

    def __setstate__(self, state):
        self.__init__(state["address"], state["token"], state["timeout_s"], state["ca"])

    @property
    def bytes(self) -> int:
        return self.link.bytes if self.link is not None else 0

    def request(self, arrays: dict[str, np.ndarray], timings: np.ndarray):
        if self.link is None:
            self.link = GrpcLink(self.address, self.timeout_s, self.token, self.ca)
        return self.link.request(arrays, timings)

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
