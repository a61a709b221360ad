"""The inference service on ``ray``: env actors are Ray actors anywhere in the cluster, each streaming to
the trainer's inference server over gRPC (:mod:`distrl.runtime.services.inference.grpc`).

The data path is the gRPC stream, not the object store, because a round trip per env step through
the object store costs milliseconds. The server listens where ``bind`` says (127.0.0.1 by default,
which only reaches actors on the trainer's own node: on a multi-node cluster pass
``--set bind=0.0.0.0:0``, and actors dial the trainer node's address). Any machine can also add
actors by hand with ``distrl join HOST:PORT --token-file RUN_DIR/token`` (``remote_slots``). With ``tls_cert`` and
``tls_key`` the streams are TLS; Ray's actors are handed the certificate to check the server by, so
the certificate must name the address they dial (the trainer node's IP, or 127.0.0.1 on one machine).
"""

from __future__ import annotations

import os
import sys

from distrl.runtime.services.inference.grpc import GrpcTransport, LazyGrpcLink
from distrl.runtime.services.inference.loop import ThreadedInference


class GrpcInference(ThreadedInference):
    def __init__(self, ray, spec, num_actors: int, seed: int, queue_size: int, token: str):
        self.seed, self.token = seed, token
        tls = None
        if spec.tls_cert:
            with open(spec.tls_cert, "rb") as c, open(spec.tls_key, "rb") as k:
                tls = (c.read(), k.read())
        self.ca = tls[0] if tls else None
        super().__init__(spec, num_actors + spec.remote_slots,
                         lambda req, act, slots: GrpcTransport(req, act, slots, spec.bind, self._actor_config, token,
                                                               tls=tls),
                         queue_size)
        host, port = self.transport.address.rsplit(":", 1)
        if host in ("0.0.0.0", "[::]", ""):
            host = ray.util.get_node_ip_address()
        self.address = f"{host}:{port}"
        if spec.remote_slots:  # what a person needs to add actors by hand; the secret stays in the run dir's file
            print(f"distrl: SEED inference server at {self.address} ({spec.remote_slots} slots for joining actors): "
                  f"distrl join {self.address} --token-file RUN_DIR/token"
                  + (f" --tls-ca {spec.tls_cert}" if tls else ""), file=sys.stderr, flush=True)

    def _actor_config(self, slot: int) -> dict:
        """The handshake for an actor taking ``slot`` (Ray's actors bring their own; ``distrl join`` uses it)."""
        return {"env_id": self.spec.env_id, "num_envs": self.spec.num_envs, "whole_games": self.spec.whole_games,
                "seed": self.seed + 1000 * slot + int.from_bytes(os.urandom(2), "little")}

    def worker_handle(self, role: str, index: int):
        return LazyGrpcLink(self.address, self.token, ca=self.ca)
