"""R2D3 settings (Paine, Gulcehre et al. 2019, arXiv:1909.01387): R2D2's, with ``demos`` required and the
paper's demo ratio 1/256 (``demo_ratio``; DI-engine found 1/4 best on Pong: ``benchmarks/r2d3_demo_ratio.py``
measures where our tasks fall)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.r2d2.config import R2D2Config


@dataclass(frozen=True)
class R2D3Config(R2D2Config):
    pass
