"""The policy server's gRPC client: one stream, one observation out and one action back per call.

    client = PolicyClient("127.0.0.1:8500", token=open("RUN_DIR/token").read().strip())
    action = client.act(obs, episode_start=True)   # then episode_start=False for the episode's other steps

The stream is the session: a recurrent policy's state follows it from call to call and restarts where
``episode_start`` is true. ``tls_ca`` (the server's certificate, PEM) makes the stream TLS.
"""

from __future__ import annotations

import json
import os
import queue
from pathlib import Path

import numpy as np

from distrl.deploy.server import EPISODE_START, METHOD
from distrl.errors import ConfigError


class PolicyClient:
    def __init__(self, address: str, token: str, tls_ca: bytes | str | None = None, timeout_s: float = 10.0):
        """``tls_ca``: the server's certificate (or its authority), as PEM bytes or the path of a PEM file."""
        import grpc

        if isinstance(tls_ca, str | os.PathLike):
            try:
                tls_ca = Path(tls_ca).read_bytes()
            except OSError as e:
                raise ConfigError(f"cannot read tls_ca '{tls_ca}': {e.strerror}") from None

        self._grpc = grpc
        options = [("grpc.max_receive_message_length", 64 << 20)]
        self.channel = grpc.insecure_channel(address, options=options) if tls_ca is None else \
            grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=tls_ca), options=options)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=timeout_s)
        except grpc.FutureTimeoutError:
            self.channel.close()
            raise ConfigError(f"no policy server answered at {address} within {timeout_s:g} s") from None
        self._out: queue.SimpleQueue = queue.SimpleQueue()
        self._responses = self.channel.stream_stream(METHOD)(iter(self._out.get, None))
        self._out.put(json.dumps({"token": token}).encode())
        try:
            self.spec = json.loads(next(self._responses))
        except grpc.RpcError as e:
            self.channel.close()
            raise ConfigError(f"the policy server at {address} refused the client: {e.details()}") from None
        self.obs_shape = tuple(self.spec["observation"]["shape"])
        self.obs_dtype = np.dtype(self.spec["observation"]["dtype"])
        self.action_shape = tuple(self.spec["action"]["shape"])
        self.action_dtype = np.dtype(self.spec["action"]["dtype"])

    def act(self, obs, episode_start: bool = False) -> np.ndarray:
        """The policy's action for one observation (the server batches it with other clients' requests)."""
        given = np.asarray(obs)
        if given.shape != self.obs_shape:
            raise ValueError(f"observation must have shape {list(self.obs_shape)}; got {list(given.shape)}")
        if self.obs_dtype.kind in "iu" and given.size and (given.min() < np.iinfo(self.obs_dtype).min
                                                           or given.max() > np.iinfo(self.obs_dtype).max):
            raise ValueError(f"observation values must fit {self.obs_dtype.name}")  # a cast would wrap them
        obs = np.ascontiguousarray(given, dtype=self.obs_dtype)
        self._out.put(bytes([EPISODE_START if episode_start else 0]) + obs.tobytes())
        try:
            msg = next(self._responses)
        except self._grpc.RpcError as e:
            raise RuntimeError(f"the policy server ended the stream: {e.details()}") from None
        return np.frombuffer(msg, dtype=self.action_dtype).reshape(self.action_shape)

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()

    def __enter__(self) -> PolicyClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
