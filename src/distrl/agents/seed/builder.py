"""SEED RL as a program.

    env actor 0..N-1: [vector env only] --observations--> inference service (the trainer's process:
                                        <--actions------   batched forward on its device)
    inference service: assembles unrolls (obs, action, behaviour logp, reward) --> channel "unrolls"
    learner: APPO's learner (learner=appo) or IMPALA's (learner=vtrace), unchanged (the server's unrolls have an
             IMPALA actor's layout)
             --weights--> the inference service (swapped in between batches) and the evaluator
"""

from __future__ import annotations

from functools import partial

from distrl.agents.appo.learner import APPOLearner
from distrl.agents.common.env_actor import EnvActor
from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.passes import check_minibatches
from distrl.agents.common.settings import atari_reward_clip
from distrl.agents.impala.learner import ImpalaLearner
from distrl.agents.seed.config import SeedConfig
from distrl.agents.seed.networks import ActorCriticPolicy, make_model
from distrl.config import split_address
from distrl.core.program import (
    Channel,
    Hyperparameter,
    Inference,
    Program,
    Role,
    Weights,
    served_unroll_spec,
)
from distrl.core.system import BuildContext
from distrl.core.types import ArraySpec
from distrl.envs import EnvSpec
from distrl.errors import ConfigError
from distrl.models.device import resolve_device


def _env_actor(env_id: str, cfg: SeedConfig, index: int, seed: int, handles: dict) -> EnvActor:
    # one step of the component is one unroll's worth of env steps: the runtime's bookkeeping (a grant, a
    # Ray call) is paid once per unroll_length round trips
    return EnvActor(env_id, cfg.num_envs, seed, handles["inference"], cfg.unroll_length)


def _policy(env: EnvSpec, cfg: SeedConfig) -> ActorCriticPolicy:
    return ActorCriticPolicy(make_model(env, cfg), env, resolve_device(cfg.inference_device, "inference_device"))


def _check_tls(cert: str, key: str) -> None:
    """Both PEM files or neither; each readable and PEM-encoded (gRPC would fail later, less clearly)."""
    if bool(cert) != bool(key):
        raise ConfigError("tls_cert and tls_key go together: give both PEM files, or neither for plain TCP")
    for name, path in (("tls_cert", cert), ("tls_key", key)):
        if not path:
            continue
        try:
            with open(path, "rb") as f:
                head = f.read(4096)
        except OSError as e:
            raise ConfigError(f"cannot read {name} '{path}': {e.strerror}") from None
        if b"-----BEGIN " not in head:
            raise ConfigError(f"{name} '{path}' is not a PEM file (expected a '-----BEGIN ...' block)")


def check_inference_settings(cfg) -> None:
    """The server's address, TLS files and device, checked before anything runs (one line each)."""
    if split_address(cfg.bind) is None:
        raise ConfigError(f"bind '{cfg.bind}' is not HOST:PORT (e.g. 127.0.0.1:0, 0.0.0.0:50051; port 0 picks a free "
                          "one)")
    _check_tls(cfg.tls_cert, cfg.tls_key)
    resolve_device(cfg.inference_device, "inference_device")


def _learner(env: EnvSpec, cfg: SeedConfig, handles: dict) -> ImpalaLearner:
    learner = APPOLearner if cfg.learner == "appo" else ImpalaLearner
    return learner(cfg, make_model(env, cfg))


def build(cfg: SeedConfig, ctx: BuildContext) -> Program:
    check_inference_settings(cfg)
    if cfg.learner == "appo":
        check_minibatches(cfg, cfg.num_envs * cfg.batch_unrolls, "num_envs * batch_unrolls")
    cfg, env = atari_reward_clip(cfg, ctx.env_id), ctx.env
    obs = ArraySpec(env.obs_shape, env.obs_dtype.name)
    outputs = {
        "actions": ArraySpec(env.action_shape, env.action_dtype.name),
        "behaviour_logp": ArraySpec((), "float32"),
    }
    inference = Inference(
        make_policy=partial(_policy, env, cfg),
        obs=obs,
        num_envs=cfg.num_envs,
        unroll_length=cfg.unroll_length,
        max_batch=cfg.inference_batch or cfg.num_actors + cfg.remote_actors,
        max_wait_s=cfg.inference_wait_ms / 1e3,
        emits="unrolls",
        env_id=ctx.env_id,
        bind=cfg.bind,
        remote_slots=cfg.remote_actors,
        tls_cert=cfg.tls_cert,
        tls_key=cfg.tls_key,
    )
    spec = served_unroll_spec(obs, outputs, None, cfg.num_envs, cfg.unroll_length)
    # elastic: a retired env actor finishes its unroll on the server first (EnvActor.finish: its calls are whole
    # unrolls, so its last one ends on an unroll's boundary), and the server's batch follows the actors that run
    actors = Role("actor", partial(_env_actor, ctx.env_id, cfg), count=cfg.num_actors, uses=("inference",),
                  elastic=True)
    return Program(
        roles=(actors, *evaluator_roles(ctx, partial(make_model, env, cfg))),
        services={"unrolls": Channel(spec, batch=cfg.batch_unrolls), "inference": inference, "weights": Weights()},
        make_learner=partial(_learner, env, cfg),
        consumes="unrolls",
        hyperparameters={
            "lr": Hyperparameter(cfg.lr, cfg.lr_schedule),
            "entropy_coef": Hyperparameter(cfg.entropy_coef),
        },
    )  # the learner's own
