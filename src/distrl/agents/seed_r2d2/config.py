"""SEED + R2D2 settings (Espeholt et al. 2019, arXiv:1910.06591, section 4.2: SEED's R2D2 on Atari): R2D2's, plus the
inference server's."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.r2d2.config import R2D2Config, advantage_learning, target_period
from distrl.agents.seed.config import InferenceSettings
from distrl.config import setting


@dataclass(frozen=True)
class SeedR2D2Config(R2D2Config, InferenceSettings):
    """R2D2's defaults, and its actors' weight period for the server's swaps. Until 2026-11-29 the server swapped in the
    learner's weights after every update (SEED's paper), with which R2D2's defaults fell short on the masked CartPole at
    1M (greedy, ``local`` seeds 0-3: 500, 500, 430, 218 and 500, 483, 469, 233; SEED + R2D2 kept R2D2's former gamma
    0.99, target period 100 and no normaliser instead: 429, 500, 500, 496); swapping every 40 steps per actor, as R2D2's
    actors pull theirs, gave 500 on each of seeds 0-3, and in the bench's nine cells ``local`` 485, 500, 500, ``inline``
    229, 500, 500, ``ray`` 177, 500, 500 (``benchmarks/reports/seed-r2d2-sync-2026-11-29/``). Those runs had R2D2's
    target period of then, 200 updates, which SEED + R2D2 keeps: R2D2's moved to 500 later that day
    (``benchmarks/reports/r2d2-target-500-2026-11-29/``), not measured here; so did R2D2's advantage learning
    (``advantage_learning`` 0.5 since 2026-11-30), which SEED + R2D2 leaves off (0) for the same reason."""

    target_update_period: int = target_period(200)
    advantage_learning: float = advantage_learning(0.0)

    actor_sync_steps: int = setting(40, "The inference server swaps in new weights once the actor furthest ahead has "
                                    "taken this many steps on the present ones (as R2D2's actors pull theirs; SEED's "
                                    "paper: 1, after every learner update).", low=1)
