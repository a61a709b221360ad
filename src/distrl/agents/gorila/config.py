"""GORILA settings (Nair et al. 2015, arXiv:1507.04296), bundled mode.

The architecture is the paper's (bundles, sharded parameter server dropping stale gradients, target networks refreshed
every C updates). The learner defaults add what later DQN work found (double Q, dueling head, 3-step targets,
prioritized local replay, Adam with linear decay, batches of 128 as Ape-X's): with the paper's 1-step DQN and uniform
replay CartPole's greedy evaluation ended near 100 on most seeds. Every bundle spans the whole epsilon ladder
(``actor.py``): with a block of neighbouring rungs per bundle, one bundle's replay held almost only greedy play, and
late collapses were more frequent. ``--set n_step=1 --set double_q=false --set dueling=false --set prioritized=false
--set optimizer=rmsprop --set lr=5e-4 --set lr_schedule=constant`` gives the paper's learner back. The figures:
docs/systems/gorila.md."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting


@dataclass(frozen=True)
class GorilaConfig:
    num_actors: int = common.num_actors("Bundles (actor + replay + learner), one process each")
    num_envs: int = common.num_envs(8)
    unroll_length: int = common.unroll_length(8, "Vector steps an actor takes between its learner's gradient rounds")
    updates_per_unroll: int = setting(4, "Gradients a bundle's learner computes after each unroll.", low=1)
    replay: str = setting("local", "Replay placement: local (one per bundle, the paper's bundled mode) or global "
                          "(one replay that every bundle writes and every learner samples: shared memory, or a Ray "
                          "actor on ray).",
                          choices=("local", "global"))
    prioritized: bool = setting(True, "Prioritized sampling of each bundle's local replay by |TD error| (Schaul et al. "
                                      "2016; "
                                "a later improvement, false is the paper's uniform replay; replay=global needs false).")
    priority_alpha: float = common.priority_alpha(" (prioritized=true)")
    priority_beta: float = common.priority_beta(" (prioritized=true)")
    replay_capacity: int = setting(50_000, "Transitions each bundle's replay (or its part of the global one) holds, "
                                           "oldest evicted first.", low=1)
    min_replay: int = setting(1_000, "Transitions in a learner's replay (local or global) before it starts.", low=1)
    batch_size: int = setting(128, "Transitions per gradient.", low=1)
    gamma: float = common.gamma()
    double_q: bool = setting(True, "Double-Q target (van Hasselt 2016); false is the DQN max target GORILA used.")
    n_step: int = setting(3, "n of the bootstrapped target (the paper: 1-step DQN).", low=1)
    reward_clip: float | None = common.reward_clip("actor")
    epsilon: float = setting(
        0.4, "Base of the per-env exploration ladder eps^(1 + alpha i / (N - 1)).", low=0.0, high=1.0
    )
    epsilon_alpha: float = setting(7.0, "Spread alpha of the exploration ladder.", low=0.0)
    optimizer: str = setting("adam", "The parameter server's optimizer, its statistics shared by every learner: adam, "
                                     "or "
                             "rmsprop (the paper used AdaGrad on DistBelief).", choices=("rmsprop", "adam"))
    lr: float = common.lr(1e-3, "Learning rate of the parameter server's optimizer")
    lr_schedule: str = common.lr_schedule("linear")
    rmsprop_alpha: float = setting(0.99, "RMSProp decay (optimizer=rmsprop).", low=0.0, high=1.0)
    optimizer_eps: float = common.optimizer_eps()
    num_shards: int = setting(2, "Parameter-server shards S (each applies its part of a gradient on its own).", low=1)
    max_staleness: int = setting(20, "Drop a gradient computed from parameters more than K shard versions old.", low=0)
    # counted as the shards' versions add up (the learner's ``version``, and ``learner_updates``): every bundle's
    # gradients, each counting S, so the default is 100 gradients of all bundles together with the default 2 shards
    target_update_period: int = setting(200, "Global shard updates (every bundle's gradients, S per gradient applied) "
                                        "between a learner's target-network refreshes (C).", low=1)
    max_grad_norm: float = common.max_grad_norm(10.0)
    dueling: bool = setting(True, "Dueling Q head (Wang et al. 2016); false is GORILA's plain DQN network.")
    hidden: tuple = common.hidden((128, 128))
