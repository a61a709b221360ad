"""QT-Opt: CEM over a Q-function, with Bellman updaters apart from the trainer."""

from distrl.agents.qt_opt.builder import build
from distrl.agents.qt_opt.config import QTOptConfig as Config
from distrl.agents.qt_opt.networks import make_model

DEFAULT_TOTAL_STEPS = 45_000
ACTIONS = ('Box',)  # the action spaces it takes (1-d; vector observations)
LEGAL_ACTION_MASKS = False  # a game's legal-action mask: not honoured yet (the actor-critic systems do)
DOC = ("Q(s, a) maximised by CEM; Bellman updaters label transitions with clipped double-Q targets apart from "
       "the trainer; offline + online data (arXiv:1806.10293).")

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
OLDER_RUN_DEFAULTS: dict = {}  # no setting added that older runs would need a value for

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
