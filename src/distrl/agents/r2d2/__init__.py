"""R2D2: recurrent replay distributed DQN (Kapturowski et al., ICLR 2019)."""

from distrl.agents.r2d2.builder import build
from distrl.agents.r2d2.config import R2D2Config as Config
from distrl.agents.r2d2.networks import make_model

DEFAULT_TOTAL_STEPS = 1_000_000  # solves the masked CartPole with the default config (config.py)
# the greedy policy of the last weights is a draw on the masked CartPole (config.py): R2D2 evaluates every 25k env
# steps on 10 episodes and keeps the best evaluated weights, which distrl eval plays (runtime/run/best_policy.py;
# SEED + R2D2 takes these too)
RUN_DEFAULTS: dict = {"eval_interval_steps": 25_000, "eval_episodes": 10}
ACTIONS = ('Discrete',)  # the action spaces it takes (observations: any that gymnasium flattens into a vector)
LEGAL_ACTION_MASKS = True  # illegal actions: no greedy pick, no random draw, no target (Q at ILLEGAL_Q)
DOC = "Recurrent replay distributed DQN: LSTM, stored state, burn-in, h(x) n-step double-Q, sequence priorities (R2D2)."

RENAMED_SETTINGS: dict = {}  # a new system: nothing renamed
# runs saved before the normaliser or advantage learning existed ran without them
OLDER_RUN_DEFAULTS: dict = {"obs_norm": False, "advantage_learning": 0.0}

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "RUN_DEFAULTS", "Config", "build", "make_model"]
