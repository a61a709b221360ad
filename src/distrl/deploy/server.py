"""``distrl serve``: a trained policy answering actions for simulators that cannot be stepped from Python.

Two routes onto one batcher (``deploy/batcher.py``): gRPC (``deploy/grpc_route.py``; one stream per client, as
SEED's actors talk to its server; :class:`distrl.deploy.client.PolicyClient` speaks it) and HTTP/JSON
(``deploy/http_route.py``; for clients in any language). Both admit only the run's token (compared in constant time)
and check every observation before it reaches the policy (``deploy/checks.py``); a bad request is refused with one
line saying what was wrong and what is valid, and the server goes on. With a certificate and key both routes are TLS;
without, an address other than loopback gets a warning (the token would cross the network in the clear).
"""

from __future__ import annotations

import ssl
from pathlib import Path

import torch

from distrl.config import split_address
from distrl.deploy.batcher import Batcher
from distrl.deploy.checks import ObservationCheck, run_token, warn
from distrl.deploy.graphs import acting_graph
from distrl.deploy.grpc_route import EPISODE_START, METHOD, GrpcRoute
from distrl.deploy.http_route import HttpRoute
from distrl.errors import ConfigError
from distrl.runtime.streams import same_token

__all__ = ["EPISODE_START", "METHOD", "PolicyServer", "run_token", "tls_files"]
LOOPBACK = ("127.", "localhost", "[::1]", "::1")


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
        self.policy, self.token, self.refused = policy, token, 0
        self.invalid = 0  # requests refused for what they held (a bad observation, an oversized body)
        graph = acting_graph(policy, head)
        obs = graph.inputs["obs"]
        self.check = ObservationCheck(tuple(obs.shape[1:]), obs.numpy().dtype)
        with torch.inference_mode():
            example = graph.module(*graph.inputs.values())
        action = (example[0] if isinstance(example, tuple) else example).numpy()
        self.action_shape, self.action_dtype = tuple(action.shape[1:]), action.dtype
        self.spec = {"system": policy.system, "env": policy.env_id, "head": head, "snapshot": policy.snapshot,
                     "observation": {"shape": list(self.check.shape), "dtype": self.check.dtype.name},
                     "action": {"shape": list(self.action_shape), "dtype": self.action_dtype.name},
                     "recurrent": graph.recurrent}
        pem = None if tls is None else tuple(Path(f).read_bytes() for f in tls)
        self.batcher = Batcher(graph, max_batch=max_batch, max_wait_s=max_wait_s)
        self._grpc = self._http = None
        try:
            self._grpc = GrpcRoute(self, bind, pem, max_clients)
            self._http = HttpRoute(self, http, tls, max_clients) if http is not None else None
        except BaseException:
            self.close()
            raise
        self.address = self._grpc.address
        self.http_address = None if self._http is None else self._http.address
        if tls is None:
            for address in (bind, http):
                if address is not None and not address.startswith(LOOPBACK):
                    warn(f"{address} is reachable from other machines and has no TLS: clients' tokens and "
                         "observations cross the network in the clear (--tls-cert and --tls-key)")

    def admits(self, given) -> bool:
        ok = same_token(given, self.token)
        if not ok:
            self.refused += 1
        return ok

    def close(self) -> None:
        for route in (self._http, self._grpc):
            if route is not None:
                route.close()
        self.batcher.close()


def tls_files(cert: str | None, key: str | None) -> tuple[str, str] | None:
    """The (certificate, key) PEM files, checked to be a certificate and its key, or None for plain TCP."""
    if bool(cert) != bool(key):
        raise ConfigError("--tls-cert and --tls-key go together: give both PEM files, or neither for plain TCP")
    if not cert:
        return None
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key)
    except FileNotFoundError as e:
        raise ConfigError(f"cannot read '{e.filename or cert}': no such file") from None
    except (ssl.SSLError, OSError) as e:
        raise ConfigError(f"--tls-cert/--tls-key are not a PEM certificate and its key ({e})") from None
    return cert, key
