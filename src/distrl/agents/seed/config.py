"""SEED RL settings (Espeholt et al. 2019, arXiv:1910.06591): IMPALA's, plus the inference server's."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.agents.impala.config import ONE_STEP_VTRACE, ImpalaConfig
from distrl.config import setting


@dataclass(frozen=True)
class InferenceSettings:
    """The central inference server's settings, shared by every SEED learner (V-trace, R2D2)."""

    inference_batch: int = setting(0, "Most actor requests per forward pass (0: all actors). local and ray only: "
                                   "inline serves each request alone.", low=0)
    inference_wait_ms: float = setting(1.0, "Longest wait for a fuller batch after the first request arrives (local, "
                                       "ray).", low=0.0, high=60_000.0)
    inference_device: str = setting("cpu", "Device of the inference server's policy copy (cpu, cuda, cuda:N, or auto: the GPU where torch sees one).")
    remote_actors: int = setting(0, "Extra server slots for actors that join by address (`distrl join HOST:PORT`, ray runtime).", low=0)
    bind: str = setting("127.0.0.1:0", "host:port the streaming transport listens on (ray runtime, `distrl join`); "
                        "port 0 picks a free one.")
    tls_cert: str = setting("", "PEM certificate file: the streaming transport serves TLS with it (and tls_key); "
                            "joining actors pass it as `distrl join --tls-ca`. Empty: plain TCP.")
    tls_key: str = setting("", "PEM private key file of tls_cert.")


# SEED's defaults before 2026-11-28: IMPALA's one-step config with 128 envs per actor (every request is a round trip:
# 64 -> 128 took CartPole from 101k to 192k env steps/s on local) and RMSProp's epsilon 1e-3 (with 1e-5 the curve fell
# from 475 to 9-210 on 3 of seeds 0-3; with 0.01 no seed of 0-3 reached 475 within 1.5M steps)
SEED_ONE_STEP = {**ONE_STEP_VTRACE, "num_envs": 128, "optimizer_eps": 1e-3}


@dataclass(frozen=True)
class SeedConfig(ImpalaConfig, InferenceSettings):
    """IMPALA's defaults (the same learner), 16 envs per actor as IMPALA's. With PPO's passes the learner is the
    bottleneck, so more envs per request buy little, and 128 envs would make batches of 32k steps: the same updates per
    env step, but new weights 8x less often, each batch gathered by an older policy (README "Beyond CartPole").
    Its unrolls stay 256 steps, where IMPALA's became 512: SEED met the suite's thresholds with 256 (LunarLander
    268, 266, 251 at 1M) and 512 was not measured for it."""

    unroll_length: int = common.unroll_length(256, "Steps per env the server cuts into each unroll it queues")
