"""A3C as a program: N workers share one model and one RMSProp through a parameter server.

    worker i: sync local copy <- params; t_max steps; one n-step gradient on the copy (the paper's update), a
              shared RMSProp step on the shared params (lock-free) ... repeat; report counts (with the opt-in
              passes, asynchronous PPO: per minibatch a gradient pushed and the latest params back)
    params (a service): one shard, no staleness limit: Hogwild in shared memory on ``local``, a shard
              actor on ``ray`` (machines share no memory: gradients are pushed, weights pulled)

There is no learner in the trainer's process: it counts what workers report, schedules the learning
rate (the ``lr`` hyperparameter reaches the parameter server), and checkpoints the shared model.
"""

from __future__ import annotations

from functools import partial

from distrl.agents.a3c.actor import A3CWorker
from distrl.agents.a3c.config import A3CConfig
from distrl.agents.a3c.networks import make_model
from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.passes import check_minibatches
from distrl.agents.common.shared_optim import shared_optimizer
from distrl.agents.common.unroll_actor import unroll_spec
from distrl.core.program import Hyperparameter, ParamServer, Program, Role
from distrl.core.system import BuildContext


def _worker(env_id, env, cfg, index, seed, handles):
    return A3CWorker(env_id, cfg, unroll_spec(env, cfg.num_envs, cfg.t_max), index, seed, handles["params"],
                     make_model(env, cfg))


def build(cfg: A3CConfig, ctx: BuildContext) -> Program:
    check_minibatches(cfg, cfg.num_envs, "num_envs", length="t_max")
    env = ctx.env
    params = ParamServer(make_model=partial(make_model, env, cfg),
                         make_optimizer=shared_optimizer("rmsprop", cfg.lr, cfg.rmsprop_eps, cfg.rmsprop_alpha),
                         num_shards=1, max_staleness=None)
    workers = Role("worker", partial(_worker, ctx.env_id, env, cfg), count=cfg.num_actors, uses=("params",))
    return Program(roles=(workers, *evaluator_roles(ctx, partial(make_model, env, cfg), source="params")),
                   services={"params": params}, hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule)})
