"""SEED RL settings (Espeholt et al. 2019, arXiv:1910.06591): APPO's (IMPALA's with ``learner=vtrace``), plus the
inference server's."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.appo.config import APPOConfig
from distrl.agents.common import settings as common
from distrl.config import setting


@dataclass(frozen=True)
class InferenceSettings:
    """The central inference server's settings, shared by every SEED learner (V-trace, R2D2)."""

    inference_batch: int = setting(0, "Most actor requests per forward pass (0: all actors). local and ray only: "
                                   "inline serves each request alone.", low=0)
    inference_wait_ms: float = setting(1.0, "Longest wait for a fuller batch after the first request arrives (local, "
                                       "ray).", low=0.0, high=60_000.0)
    inference_device: str = setting("cpu", "Device of the inference server's policy copy (cpu, cuda, cuda:N, or auto: "
                                           "the GPU where torch sees one).")
    remote_actors: int = setting(0, "Extra server slots for actors that join by address (`distrl join HOST:PORT`, ray "
                                    "runtime).", low=0)
    bind: str = setting("127.0.0.1:0", "host:port the streaming transport listens on (ray runtime, `distrl join`); "
                        "port 0 picks a free one.")
    tls_cert: str = setting("", "PEM certificate file: the streaming transport serves TLS with it (and tls_key); "
                            "joining actors pass it as `distrl join --tls-ca`. Empty: plain TCP.")
    tls_key: str = setting("", "PEM private key file of tls_cert.")


@dataclass(frozen=True)
class SeedConfig(APPOConfig, InferenceSettings):
    """APPO's settings and defaults (the same learner) or, with ``learner=vtrace``, IMPALA's one V-trace step per
    batch (then the PPO settings, ppo_clip, epochs, minibatches and minibatch_by, are not used). 16 envs per actor as
    APPO's: with PPO's passes the learner is the bottleneck, so more envs per request buy little. Its unrolls stay 256
    steps, where APPO's are 512: SEED met the suite's thresholds with 256 and 512 was not measured for it. Its
    minibatches and learning rate are APPO's (512 steps, Adam at 1e-3) and so are its normalised observations: with
    them LunarLander's training mean reached 200 at 0.50-0.77M env steps on seeds 0-2; minibatches of 256 at 6e-4,
    which took 0.6M before observations were normalised (and 512 at 1e-3 then 1.7M), cost the learner twice the
    updates. The figures are on the system's docs page (docs/systems/seed.md)."""

    learner: str = setting("appo", "The learner: appo (V-trace targets with PPO's clipped surrogate over passes, "
                           "the default) or vtrace (the paper's IMPALA learner, one V-trace step per batch).",
                           choices=("appo", "vtrace"))
    unroll_length: int = common.unroll_length(256, "Steps per env the server cuts into each unroll it queues")
