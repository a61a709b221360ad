"""``distrl serve``: a trained policy answering actions for simulators that cannot be stepped from Python.

Two routes onto one batcher (``deploy/batcher.py``):

- **gRPC** (as SEED's actors talk to its server): one bidirectional stream per client. The first message is a JSON
  hello with the run's token; the server answers with the policy's spec (observation and action shapes and dtypes,
  whether it is recurrent). Then each message is one byte of flags (bit 0: this observation starts an episode)
  followed by the observation's raw bytes, and each answer the action's raw bytes. The stream is the session: a
  recurrent policy's state lives as long as it does. :class:`distrl.deploy.client.PolicyClient` speaks it.
- **HTTP/JSON**, for clients in any language (``curl`` included): ``POST /v1/act`` with ``Authorization: Bearer
  TOKEN`` and ``{"observation": [...], "session": "id", "episode_start": false}`` answers ``{"action": ...}``;
  ``GET /v1/spec`` the spec. ``session`` (letters, digits, ``-``, ``_``; at most 64) carries a recurrent policy's
  state between requests; without it every request starts an episode.

Both admit only the run's token (compared in constant time) and check every observation before it reaches the
policy (its size or shape, finite floats, integers within the dtype's range); a bad request is refused with one line
saying what was wrong and what is valid, and the server goes on. With a certificate and key both routes are TLS.
Connections are bounded (``max_clients`` each), a silent gRPC peer is dropped after a few seconds, and an HTTP
connection after ``HTTP_TIMEOUT_S`` of silence.
"""

from __future__ import annotations

import hmac
import json
import re
import ssl
import sys
import threading
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from distrl.config import split_address
from distrl.deploy.batcher import Batcher
from distrl.deploy.graphs import acting_graph
from distrl.errors import ConfigError

METHOD = "/distrl.Policy/Act"
HELLO_BYTES = 4096
HANDSHAKE_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 300.0  # a gRPC client silent this long gives its stream (and session) back
HTTP_TIMEOUT_S = 10.0
MAX_BODY_BYTES = 8 << 20  # an Atari frame stack (4 x 84 x 84) as JSON is ~100 kB
SESSION = re.compile(r"[A-Za-z0-9_-]{1,64}")
EPISODE_START = 1


def _warn(text: str) -> None:
    print(f"distrl: serve: {text}", file=sys.stderr, flush=True)


class ObservationCheck:
    """One observation from the wire, as the policy takes it, or a ValueError saying what was wrong."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def _finite_and_in_range(self, obs: np.ndarray) -> np.ndarray:
        if obs.dtype.kind == "f" and not np.isfinite(obs).all():
            raise ValueError("the observation holds NaN or inf")
        return obs

    def from_bytes(self, raw: bytes | memoryview) -> np.ndarray:
        if len(raw) != self.nbytes:
            raise ValueError(f"an observation is {self.nbytes} bytes ({list(self.shape)} {self.dtype.name}); "
                             f"got {len(raw)}")
        return self._finite_and_in_range(np.frombuffer(raw, dtype=self.dtype).reshape(self.shape))

    def from_json(self, value) -> np.ndarray:
        try:
            obs = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"observation must be numbers of shape {list(self.shape)}") from None
        if obs.shape != self.shape:
            raise ValueError(f"observation must have shape {list(self.shape)}; got {list(obs.shape)}")
        if not np.isfinite(obs).all():
            raise ValueError("the observation holds NaN or inf")
        if self.dtype.kind in "iu":
            info = np.iinfo(self.dtype)
            if (obs != np.round(obs)).any() or obs.min() < info.min or obs.max() > info.max:
                raise ValueError(f"observation values must be integers in [{info.min}, {info.max}] ({self.dtype.name})")
        elif np.abs(obs).max(initial=0.0) > np.finfo(self.dtype).max:
            raise ValueError(f"observation values overflow {self.dtype.name}")
        return obs.astype(self.dtype)


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ConfigError(f"cannot read {what} '{path}': {e.strerror}") from None


def run_token(run_dir: Path, token: str | None) -> str:
    """The token clients must present: given, else the run's (``RUN_DIR/token``)."""
    if token:
        return token
    try:
        saved = (Path(run_dir) / "token").read_text().strip()
    except (OSError, UnicodeDecodeError):
        saved = ""
    if not saved:
        raise ConfigError(f"'{run_dir}' has no token file; give --token-file FILE (or DISTRL_TOKEN): clients must "
                          "present a token")
    return saved


class PolicyServer:
    """Serves ``policy`` (a loaded :class:`distrl.api.Policy`) on gRPC at ``bind`` and, unless ``http`` is None, on
    HTTP at ``http``; both ``HOST:PORT`` (port 0: any free one; ``self.address``, ``self.http_address`` say which)."""

    def __init__(self, policy, token: str, bind: str = "127.0.0.1:8500", http: str | None = "127.0.0.1:8501",
                 head: str = "greedy", tls: tuple[str, str] | None = None, max_batch: int = 256,
                 max_wait_s: float = 0.0, max_clients: int = 64):
        for name, address in (("--bind", bind), ("--http", http)):
            if address is not None and split_address(address) is None:
                raise ConfigError(f"{name} '{address}' is not HOST:PORT (e.g. 127.0.0.1:8500)")
        if not token:
            raise ConfigError("the policy server needs a token for its clients to present")
        self.policy, self.token = policy, token
        graph = acting_graph(policy, head)
        obs = graph.inputs["obs"]
        self.check = ObservationCheck(tuple(obs.shape[1:]), obs.numpy().dtype)
        with __import__("torch").inference_mode():
            example = graph.module(*graph.inputs.values())
        action = (example[0] if isinstance(example, tuple) else example).numpy()
        self.action_shape, self.action_dtype = tuple(action.shape[1:]), action.dtype
        self.spec = {"system": policy.system, "env": policy.env_id, "head": head, "snapshot": policy.snapshot,
                     "observation": {"shape": list(self.check.shape), "dtype": self.check.dtype.name},
                     "action": {"shape": list(self.action_shape), "dtype": self.action_dtype.name},
                     "recurrent": graph.recurrent}
        self.batcher = Batcher(graph, max_batch=max_batch, max_wait_s=max_wait_s)
        self.refused = 0
        self._grpc = self._start_grpc(bind, tls, max_clients)
        self._http = self._start_http(http, tls, max_clients) if http is not None else None
        self.http_address = None if self._http is None else \
            f"{http.rsplit(':', 1)[0]}:{self._http.server_address[1]}"

    # --- shared ----------------------------------------------------------------------------------
    def admits(self, given) -> bool:
        ok = isinstance(given, str) and hmac.compare_digest(given.encode(), self.token.encode())
        if not ok:
            self.refused += 1
        return ok

    def _answer(self, action: np.ndarray):
        return action.tolist() if action.ndim else action.item()

    # --- gRPC ------------------------------------------------------------------------------------
    def _start_grpc(self, bind: str, tls, max_clients: int):
        import grpc

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_clients), maximum_concurrent_rpcs=max_clients,
                             options=[("grpc.max_receive_message_length", 64 << 20)])
        handler = grpc.stream_stream_rpc_method_handler(self._stream)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            METHOD.split("/")[1], {METHOD.split("/")[2]: handler}),))
        if tls is None:
            port = server.add_insecure_port(bind)
        else:  # (certificate chain, private key) files, PEM
            cert, key = _read(tls[0], "--tls-cert"), _read(tls[1], "--tls-key")
            port = server.add_secure_port(bind, grpc.ssl_server_credentials([(key, cert)]))
        if port == 0:
            raise ConfigError(f"cannot listen on {bind} (in use, or not an address of this machine)")
        self.address = f"{bind.rsplit(':', 1)[0]}:{port}"
        server.start()
        return server

    def _stream(self, request_iterator, context):
        import grpc

        from distrl.runtime.services.inference.grpc import _Reader

        reader = _Reader(request_iterator)
        hello = reader.get(HANDSHAKE_TIMEOUT_S)
        try:
            given = json.loads(hello.decode()).get("token") if hello is not None and len(hello) <= HELLO_BYTES else None
        except (ValueError, UnicodeDecodeError, AttributeError, RecursionError):
            given = None
        if not self.admits(given):
            _warn(f"{context.peer()} did not present the run's token: refused")
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "a hello with the run's token is needed")
        session = object()  # the stream is the session
        try:
            yield json.dumps(self.spec).encode()
            while (msg := reader.get(IDLE_TIMEOUT_S)) is not None:
                try:
                    if len(msg) < 1 or msg[0] > EPISODE_START:
                        raise ValueError("a request is one flags byte (0, or 1: the episode starts) and the "
                                         "observation's bytes")
                    obs = self.check.from_bytes(memoryview(msg)[1:])
                except ValueError as e:
                    _warn(f"{context.peer()}: {e}: dropped")
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
                action = self.batcher.act(obs, session, bool(msg[0] & EPISODE_START))
                yield np.ascontiguousarray(action, dtype=self.action_dtype).tobytes()
        finally:
            self.batcher.end_session(session)

    # --- HTTP ------------------------------------------------------------------------------------
    def _start_http(self, http: str, tls, max_clients: int):
        server_ref = self
        slots = threading.BoundedSemaphore(max_clients)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def process_request(self, request, client_address):
                if not slots.acquire(blocking=False):  # every slot busy: refuse at once rather than queue
                    self.shutdown_request(request)
                    return
                super().process_request(request, client_address)

            def process_request_thread(self, request, client_address):
                try:
                    super().process_request_thread(request, client_address)
                finally:
                    slots.release()

        class Handler(BaseHTTPRequestHandler):
            timeout = HTTP_TIMEOUT_S
            disable_nagle_algorithm = True  # headers and body leave at once, not after a 40 ms delayed ACK
            server_version = "distrl-serve"
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt, *args):  # one line per refusal is said elsewhere; no access log
                pass

            def _send(self, code: int, body: dict) -> None:
                if code >= 400:  # a refused request's body may be unread: the connection cannot carry another
                    self.close_connection = True
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if code == 401:
                    self.send_header("WWW-Authenticate", 'Bearer realm="distrl"')
                self.end_headers()
                self.wfile.write(data)

            def _authorised(self) -> bool:
                auth = self.headers.get("Authorization", "")
                if server_ref.admits(auth[7:] if auth.startswith("Bearer ") else None):
                    return True
                _warn(f"{self.client_address[0]} did not present the run's token: refused")
                self._send(401, {"error": "the run's token is needed: Authorization: Bearer TOKEN"})
                return False

            def do_GET(self):
                if self.path != "/v1/spec":
                    return self._send(404, {"error": "routes: GET /v1/spec, POST /v1/act"})
                if self._authorised():
                    self._send(200, server_ref.spec)

            def do_POST(self):
                if self.path != "/v1/act":
                    return self._send(404, {"error": "routes: GET /v1/spec, POST /v1/act"})
                if not self._authorised():
                    return None
                try:
                    length = int(self.headers.get("Content-Length", ""))
                except ValueError:
                    return self._send(411, {"error": "a Content-Length header is needed"})
                if not 0 < length <= MAX_BODY_BYTES:
                    return self._send(413, {"error": f"a request body is 1 to {MAX_BODY_BYTES} bytes; got {length}"})
                try:
                    obs, session, start = server_ref._parse(self.rfile.read(length))
                except ValueError as e:
                    return self._send(400, {"error": str(e)})
                try:
                    action = server_ref.batcher.act(obs, session, start)
                except (RuntimeError, TimeoutError) as e:
                    return self._send(503, {"error": str(e)})
                self._send(200, {"action": server_ref._answer(action)})

        host, port = split_address(http)
        try:
            httpd = Server((host, port), Handler)
        except OSError as e:
            self._grpc.stop(grace=None)
            raise ConfigError(f"cannot listen on {http}: {e.strerror}") from None
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            try:
                context.load_cert_chain(*tls)
            except (ssl.SSLError, OSError) as e:
                httpd.server_close()
                self._grpc.stop(grace=None)
                raise ConfigError(f"--tls-cert/--tls-key are not a PEM certificate and its key ({e})") from None
            httpd.socket = context.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
        threading.Thread(target=httpd.serve_forever, name="distrl-serve-http", daemon=True).start()
        return httpd

    def _parse(self, body: bytes):
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise ValueError("the body must be a JSON object: {\"observation\": [...], \"session\": \"id\", "
                             "\"episode_start\": false}") from None
        if not isinstance(request, dict) or "observation" not in request:
            raise ValueError("the body must be a JSON object with an \"observation\"")
        session, start = request.get("session"), request.get("episode_start", False)
        if session is not None and not (isinstance(session, str) and SESSION.fullmatch(session)):
            raise ValueError("session must be 1-64 letters, digits, '-' or '_'")
        if not isinstance(start, bool):
            raise ValueError("episode_start must be true or false")
        obs = self.check.from_json(request["observation"])
        return obs, (("http", session) if session is not None else None), start or session is None

    # --- lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        self._grpc.stop(grace=None)
        self.batcher.close()


def tls_files(cert: str | None, key: str | None) -> tuple[str, str] | None:
    """The (certificate, key) PEM files, checked readable, or None for plain TCP."""
    if bool(cert) != bool(key):
        raise ConfigError("--tls-cert and --tls-key go together: give both PEM files, or neither for plain TCP")
    if not cert:
        return None
    _read(cert, "--tls-cert"), _read(key, "--tls-key")
    return cert, key
