"""OpenAI ES as a program (Salimans et al. 2017, arXiv:1703.03864, Algorithm 2):

    service "noise":   one Gaussian table per machine (shared memory / the node's object store)
    worker i:          pull theta (weights) -> P antithetic perturbations from the table -> 2P episodes
                       -> emit (noise index, R+, R-, steps, observation sums): scalars only
    learner (master):  one generation = `population` pairs at the current theta -> centered ranks ->
                       gradient from the indices -> Adam step -> publish theta (and the normaliser)

The weights service carries theta down; only scalars go up. A worker's result computed from an older
theta is dropped by the master, so workers take one step at a time (``in_flight=1``) and the trainer starts
no more worker steps per generation than the generation needs (``batches_per_version``): a worker that has
done its share waits for the new theta instead of evaluating the old one.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.es.actor import EsWorker, result_spec
from distrl.agents.es.config import EsConfig
from distrl.agents.es.learner import EsLearner
from distrl.agents.es.networks import make_model
from distrl.core.program import (
    Channel,
    ConstantArray,
    Hyperparameter,
    Program,
    Role,
    Weights,
)
from distrl.core.system import BuildContext
from distrl.errors import ConfigError
from distrl.ops.es import NoiseTable


def noise_table(size: int, seed: int) -> np.ndarray:
    return NoiseTable(size, seed).noise


def _worker(env_id, env, cfg, index, seed, handles):
    return EsWorker(env_id, cfg, index, seed, handles["weights"], handles["noise"], make_model(env, cfg))


def _learner(env, cfg, handles):
    spec = result_spec(cfg.pairs_per_worker, env.obs_shape[0])
    return EsLearner(cfg, make_model(env, cfg), handles["noise"], sum(s.nbytes for s in spec.values()))


def build(cfg: EsConfig, ctx: BuildContext) -> Program:
    env = ctx.env
    dim = sum(p.numel() for p in make_model(env, cfg).trainable())
    if cfg.noise_table_size < dim:
        raise ConfigError(f"noise_table_size {cfg.noise_table_size} is smaller than the policy's {dim} parameters "
                          f"(give at least {dim}; the default is 25000000)")
    spec = result_spec(cfg.pairs_per_worker, env.obs_shape[0])
    workers = Role("worker", partial(_worker, ctx.env_id, env, cfg), count=cfg.num_actors, uses=("weights", "noise"),
                   emits="results", output=spec, in_flight=1)
    return Program(roles=(workers, *evaluator_roles(ctx, partial(make_model, env, cfg))),
                   services={"results": Channel(spec, batch=1), "weights": Weights(),
                             "noise": ConstantArray(partial(noise_table, cfg.noise_table_size, cfg.noise_seed))},
                   make_learner=partial(_learner, env, cfg), consumes="results", learner_uses=("noise",),
                   hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule)},
                   batches_per_version=-(-cfg.population // cfg.pairs_per_worker),
                   learner_on_device=False)  # it combines returns with noise rows: no network gradient to place
