"""OpenAI ES settings (Salimans et al. 2017, arXiv:1703.03864). The paper's MuJoCo values: sigma 0.02,
Adam stepsize 0.01, L2 coefficient 0.005, tanh MLP 64x64 (appendix A), observation normalisation."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting


@dataclass(frozen=True)
class EsConfig:
    num_actors: int = common.num_actors("ES workers: each evaluates perturbations and sends back only scalars")
    pairs_per_worker: int = setting(8, "Antithetic pairs a worker evaluates per step (2x this many episodes, one "
                                    "vector env, one batched forward for all perturbed policies).", low=1, high=4096)
    population: int = setting(32, "Antithetic pairs per generation (the paper: thousands of workers' worth).",
                              low=1, high=1_000_000)
    sigma: float = setting(0.02, "Standard deviation of the parameter noise.", low=0.0, low_open=True, high=10.0)
    lr: float = common.lr(0.01, "Adam stepsize on the estimated gradient")
    lr_schedule: str = common.lr_schedule("constant")
    weight_decay: float = setting(0.005, "L2 coefficient added to the gradient (the paper's l2coeff).", low=0.0)
    obs_norm: bool = setting(True, "Normalise observations with running statistics merged from every worker.",
                             fixed=common.NETWORK_INPUT)
    max_episode_steps: int = setting(0, "Cap on an episode's length (0: the env's own limit).", low=0, high=10_000_000)
    noise_table_size: int = setting(25_000_000, "Floats in the shared noise table (one copy per machine; "
                                    "the paper used 250M).", low=1, high=1_000_000_000)
    noise_seed: int = setting(123, "Seed of the noise table (every machine rebuilds the same one).", low=0,
                              high=2**32 - 1)
    hidden: tuple = common.hidden((64, 64))
