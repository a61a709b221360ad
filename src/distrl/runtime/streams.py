"""gRPC streams admitted by a run's token: what SEED's inference transport and the policy server share.

Each peer keeps one bidirectional stream; its first message is a small JSON hello carrying the token. Peers that
have not said hello cannot crowd admitted ones out: at most ``PRE_HELLO_STREAMS`` streams wait for their hello (a
newcomer drops the one that has waited longest; a real peer says hello at once, so only silent ones are ever the
oldest), and a silent one is dropped after the handshake timeout. A stream's messages are read one at a time by a
thread of its own (a peer that sends ahead is held back by gRPC's flow control, not buffered here).
"""

from __future__ import annotations

import hmac
import json
import queue
import threading
from collections import OrderedDict
from concurrent import futures

PRE_HELLO_STREAMS = 8
HELLO_BYTES = 4096  # a hello is a small JSON object; anything longer is not one


def put_until(q: queue.Queue, item, stop: threading.Event, poll_s: float) -> bool:
    """Put ``item`` into the bounded ``q``, waiting for room until ``stop`` is set (checked every ``poll_s``):
    whether it went in."""
    while not stop.is_set():
        try:
            q.put(item, timeout=poll_s)
            return True
        except queue.Full:
            continue
    return False


class StreamReader:
    """A stream's messages, read by a thread one at a time (the queue holds one: the next read waits for the
    handler), with timeouts for the handler; ``drop()`` makes a waiting :meth:`get` return None."""

    def __init__(self, iterator, name: str = "distrl-grpc-reader"):
        self.inbox: queue.Queue = queue.Queue(maxsize=1)
        self.dropped = threading.Event()

        def pump():
            try:
                for msg in iterator:
                    if not put_until(self.inbox, msg, self.dropped, 0.5):
                        return
            except Exception:  # the stream broke: as if it ended
                pass
            self.drop()  # ended: the handler's waiting get returns None at once (its peer's slot is freed now)

        threading.Thread(target=pump, name=name, daemon=True).start()

    def get(self, timeout_s: float) -> bytes | None:
        """The next message, or None: the stream ended, was dropped, or said nothing for ``timeout_s``."""
        left = timeout_s
        while left > 0:
            try:
                return self.inbox.get(timeout=min(0.25, left))  # (None: dropped, the waiting get woken at once)
            except queue.Empty:
                if self.dropped.is_set() and self.inbox.empty():
                    return None
                left -= 0.25
        return None

    def drop(self) -> None:
        """End the stream for its handler: a waiting :meth:`get` returns None now (an evicted silent peer's handler
        gives its place back at once), and nothing more is read."""
        self.dropped.set()
        try:
            self.inbox.put_nowait(None)
        except queue.Full:  # a message waits: the get after it sees the stream dropped
            pass


class HelloGate:
    """The streams waiting for their hello, oldest first, at most ``PRE_HELLO_STREAMS`` of them."""

    def __init__(self):
        self._waiting: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        """How many streams wait for their hello now."""
        return len(self._waiting)

    def hello(self, reader: StreamReader, timeout_s: float) -> bytes | None:
        """The stream's first message, or None: it said nothing within ``timeout_s``, or a newer stream took its
        place."""
        key = object()
        with self._lock:
            if len(self._waiting) >= PRE_HELLO_STREAMS:
                self._waiting.popitem(last=False)[1].drop()  # the longest-waiting silent peer makes room
            self._waiting[key] = reader
        hello = reader.get(timeout_s)
        with self._lock:
            evicted = self._waiting.pop(key, None) is None
        return None if evicted else hello


def hello_token(hello: bytes | None) -> str | None:
    """The token a hello carries ("" where it names none), or None (no hello, one too long to be one, not a JSON
    object, a token that is no string): a long or deeply nested hello is refused unread."""
    if hello is None or len(hello) > HELLO_BYTES:
        return None
    try:
        given = json.loads(hello.decode()).get("token", "")
    except (ValueError, UnicodeDecodeError, AttributeError, RecursionError):
        return None
    return given if isinstance(given, str) else None


def same_token(given: str | None, token: str) -> bool:
    """Constant-time comparison: how long a refusal takes says nothing of how much of the token was right. Any string
    compares, a lone surrogate from a JSON escape (``"\\ud800"``) too: never an exception, only False."""
    return isinstance(given, str) and hmac.compare_digest(given.encode("utf-8", "surrogatepass"),
                                                          token.encode("utf-8", "surrogatepass"))


def stream_server(handler, method: str, streams: int, options: list):
    """A gRPC server of one bidirectional stream method (bytes in, bytes out), ``streams`` at a time."""
    import grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=streams), maximum_concurrent_rpcs=streams,
                         options=options)
    service, name = method.split("/")[1:]
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        service, {name: grpc.stream_stream_rpc_method_handler(handler)}),))
    return server


def listen(server, bind: str, tls: tuple[bytes, bytes] | None) -> int:
    """Bind ``server`` to ``bind`` (TLS with ``tls``: certificate chain and private key, PEM); the port, or 0 where
    it cannot (the address is in use, or not this machine's)."""
    import grpc

    try:
        if tls is None:
            return server.add_insecure_port(bind)
        return server.add_secure_port(bind, grpc.ssl_server_credentials([(tls[1], tls[0])]))
    except RuntimeError:  # grpc >= 1.60 raises where older ones returned 0
        return 0
