"""R2D3's network is R2D2's: an MLP (or Nature-CNN) torso, an LSTM and a dueling head."""

from distrl.agents.r2d2.networks import make_model

__all__ = ["make_model"]
