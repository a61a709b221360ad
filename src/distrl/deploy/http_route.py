"""The policy server's HTTP/JSON route, for clients in any language (``curl`` included).

``POST /v1/act`` with ``Authorization: Bearer TOKEN`` and ``{"observation": [...], "session": "id", "episode_start":
false}`` answers ``{"action": ...}``; ``GET /v1/spec`` the policy's spec. Every refusal is JSON (``{"error": ...}``)
and closes the connection (its body may be unread). A connection gets ``HTTP_TIMEOUT_S`` for each whole request,
headers and body included (a peer trickling bytes is cut off), and at most ``max_clients`` connections are served at
once; a connection that breaks is one line on the server's stderr.
"""

from __future__ import annotations

import json
import re
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from distrl.config import split_address
from distrl.deploy.checks import warn
from distrl.errors import ConfigError

HTTP_TIMEOUT_S = 10.0
MAX_BODY_BYTES = 8 << 20  # an Atari frame stack (4 x 84 x 84) as JSON is ~100 kB
SESSION = re.compile(r"[A-Za-z0-9_-]{1,64}")
ROUTES = "routes: GET /v1/spec, POST /v1/act"


def parse_request(check, body: bytes):
    """(observation, session key or None, whether the episode starts) from a request body, or a ValueError."""
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
    obs = check.from_json(request["observation"])
    return obs, (("http", session) if session is not None else None), start or session is None


class HttpRoute:
    def __init__(self, server, http: str, tls: tuple[str, str] | None, max_clients: int):
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

            def handle_error(self, request, client_address):  # a broken connection, a failed TLS handshake
                error = sys.exc_info()[1]
                warn(f"{client_address[0]}: connection dropped ({type(error).__name__})")

        host, port = split_address(http)
        try:
            self.httpd = Server((host, port), _handler(server))
        except OSError as e:
            raise ConfigError(f"cannot listen on {http}: {e.strerror}") from None
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)  # checked readable and matching by tls_files
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True, do_handshake_on_connect=False)
        self.address = f"{host}:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, name="distrl-serve-http", daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler(server):
    class Handler(BaseHTTPRequestHandler):
        timeout = HTTP_TIMEOUT_S  # per read; the whole request's deadline is the timer below
        disable_nagle_algorithm = True  # headers and body leave at once, not after a 40 ms delayed ACK
        server_version = "distrl-serve"
        protocol_version = "HTTP/1.1"

        def handle_one_request(self):
            timer = threading.Timer(HTTP_TIMEOUT_S, self._cut)
            timer.daemon = True
            timer.start()
            try:
                super().handle_one_request()
            finally:
                timer.cancel()

        def _cut(self) -> None:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def log_message(self, fmt, *args):  # refusals are said once elsewhere; no access log
            pass

        def send_error(self, code, message=None, explain=None):  # a malformed request line, an unknown method
            self._send(code, {"error": f"{message or 'bad request'}; {ROUTES}"})

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
            given = auth[7:] if auth.startswith("Bearer ") else None
            if server.admits(given):
                return True
            warn(f"{self.client_address[0]} did not present the run's token: refused")
            said = "is not the run's" if given else "is needed"
            self._send(401, {"error": f"the run's token {said}: Authorization: Bearer TOKEN, TOKEN being the run dir's "
                                      "token file"})
            return False

        def do_GET(self):
            if self.path != "/v1/spec":
                return self._send(404, {"error": ROUTES})
            if self._authorised():
                self._send(200, server.spec)
            return None

        def do_POST(self):
            if self.path != "/v1/act":
                return self._send(404, {"error": ROUTES})
            if not self._authorised():
                return None
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                return self._send(411, {"error": "a Content-Length header is needed"})
            if not 0 < length <= MAX_BODY_BYTES:
                server.invalid += 1
                return self._send(413, {"error": f"a request body is 1 to {MAX_BODY_BYTES} bytes; got {length}"})
            try:
                obs, session, start = parse_request(server.check, self.rfile.read(length))
            except ValueError as e:
                server.invalid += 1
                return self._send(400, {"error": str(e)})
            try:
                action = server.batcher.act(obs, session, start)
            except (RuntimeError, TimeoutError) as e:
                return self._send(503, {"error": str(e)})
            return self._send(200, {"action": action.tolist() if action.ndim else action.item()})

    return Handler
