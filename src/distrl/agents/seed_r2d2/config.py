"""SEED + R2D2 settings (Espeholt et al. 2019, arXiv:1910.06591, section 4.2: SEED's R2D2 on Atari): R2D2's, with
the short-horizon values of gamma, target period and normaliser (``ShortHorizonR2D2Config``: R2D2's present ones did
no better here), plus the inference server's."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.r2d2.config import ShortHorizonR2D2Config
from distrl.agents.seed.config import InferenceSettings


@dataclass(frozen=True)
class SeedR2D2Config(ShortHorizonR2D2Config, InferenceSettings):
    pass
