"""R2D3: R2D2 with a second, separately prioritized replay of demonstrations mixed into every batch."""

from distrl.agents.r2d3.builder import build
from distrl.agents.r2d3.config import R2D3Config as Config
from distrl.agents.r2d3.networks import make_model

DEFAULT_TOTAL_STEPS = 200_000
ACTIONS = ('Discrete',)  # the action spaces it takes (observations: any that gymnasium flattens into a vector)
LEGAL_ACTION_MASKS = True  # illegal actions: no greedy pick, no random draw, no target (Q at ILLEGAL_Q)
DOC = "Recurrent replay distributed DQN from demonstrations: R2D2 + a demo replay, demo ratio rho (R2D3)."

RENAMED_SETTINGS: dict = {}  # a new system: nothing renamed
OLDER_RUN_DEFAULTS: dict = {}  # a new system: no older runs

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
