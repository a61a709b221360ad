"""The coordinator's transport: one unary gRPC method that every player's games call, on every runtime.

One transport for ``inline``, ``local`` and ``ray``: the games run wherever a player's runtime puts its envs (this
process, actor processes, Ray actors on other nodes), and each reaches the coordinator by address. Each call carries
the league's token in its metadata (``x-distrl-token``), compared in constant time; a call without it is refused
before its message is parsed. A request is at most ``REQUEST_BYTES`` (gRPC reads no more), so no peer can hold a
worker thread with a message that never ends, and a unary call keeps no session a silent peer could sit on.
The league writes the address to ``LEAGUE/coordinator.json`` and the token to ``LEAGUE/token`` (0600), where a
player's games read them (:class:`LeagueClient`): players on other machines need the league's folder on a file
system they share, as a PBT population's members do, and ``--bind 0.0.0.0:PORT``.
"""

from __future__ import annotations

import hmac
import json
import os
import socket
from concurrent import futures
from pathlib import Path

from distrl.errors import ConfigError
from distrl.league.coordinator import REQUEST_BYTES

# gRPC's core logs at INFO a GOAWAY each client hears as the league stops; a user's own setting stands
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

SERVICE, METHOD = "distrl.League", "Call"
TOKEN_KEY = "x-distrl-token"
CALL_TIMEOUT_S = 360.0  # longer than a call may wait for a player's first weights (FIRST_WEIGHTS_TIMEOUT_S)
MAX_CALLS = 64  # at once, beyond which a call is refused (RESOURCE_EXHAUSTED) rather than queued
WILDCARDS = ("0.0.0.0", "[::]", "::")


class LeagueServer:
    def __init__(self, coordinator, token: str, bind: str = "127.0.0.1:0", workers: int = 8):
        import grpc

        self.coordinator, self._token = coordinator, token.encode()
        options = [("grpc.max_receive_message_length", REQUEST_BYTES), ("grpc.max_send_message_length", -1),
                   ("grpc.so_reuseport", 0)]
        self.grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="distrl-league"),
                                maximum_concurrent_rpcs=MAX_CALLS, options=options)
        handler = grpc.unary_unary_rpc_method_handler(self._call)
        self.grpc.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {METHOD: handler}),))
        host, _, port = bind.rpartition(":")
        try:
            bound = self.grpc.add_insecure_port(bind)
        except RuntimeError:
            bound = 0
        if not host or bound == 0:
            raise ConfigError(f"the league's coordinator cannot listen on {bind!r} (give HOST:PORT, port 0 for any)")
        # listening on every interface: the games on other machines reach it at this machine's address
        self.address = f"{socket.gethostbyname(socket.gethostname()) if host in WILDCARDS else host}:{bound}"
        self.grpc.start()

    def _call(self, request: bytes, context):
        import grpc

        given = dict(context.invocation_metadata()).get(TOKEN_KEY, "")
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), self._token):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "the league's token is needed")
        try:
            return self.coordinator.answer(request)
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))

    def write(self, league_dir: Path) -> None:
        """Where the league's games find the coordinator this session."""
        tmp = league_dir / "coordinator.json.tmp"
        tmp.write_text(json.dumps({"address": self.address}))
        tmp.replace(league_dir / "coordinator.json")

    def close(self) -> None:
        self.coordinator.close()  # a call waiting for first weights returns now, not in minutes
        self.grpc.stop(grace=None)


class LeagueClient:
    """A process's line to a league's coordinator (one per process and league: ``LeagueClient.of``)."""

    _open: dict[str, LeagueClient] = {}

    def __init__(self, league_dir: str):
        import grpc

        folder = Path(league_dir)
        try:
            address = json.loads((folder / "coordinator.json").read_text())["address"]
            self._metadata = ((TOKEN_KEY, (folder / "token").read_text().strip()),)
        except (OSError, ValueError, KeyError, TypeError):
            raise ConfigError(f"league '{league_dir}' has no running coordinator (no readable coordinator.json and "
                              "token): a league's games are played while 'distrl league' runs") from None
        self.channel = grpc.insecure_channel(address, options=[("grpc.max_receive_message_length", -1)])
        self._call = self.channel.unary_unary(f"/{SERVICE}/{METHOD}")

    @classmethod
    def of(cls, league_dir: str) -> LeagueClient:
        if league_dir not in cls._open:
            cls._open[league_dir] = cls(league_dir)
        return cls._open[league_dir]

    def request(self, message: dict) -> bytes:
        return self._call(json.dumps(message).encode(), metadata=self._metadata, timeout=CALL_TIMEOUT_S,
                          wait_for_ready=True)

    @classmethod
    def close_all(cls) -> None:
        from distrl.league.opponent import Pool

        Pool._open.clear()
        for client in cls._open.values():
            client.channel.close()
        cls._open.clear()
