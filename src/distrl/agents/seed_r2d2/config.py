"""SEED + R2D2 settings (Espeholt et al. 2019, arXiv:1910.06591, section 4.2: SEED's R2D2 on Atari): R2D2's,
with its defaults (they are what solves the memory task), plus the inference server's."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.r2d2.config import R2D2Config
from distrl.agents.seed.config import InferenceSettings


@dataclass(frozen=True)
class SeedR2D2Config(R2D2Config, InferenceSettings):
    pass
