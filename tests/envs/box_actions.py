"""``lopsided.py``'s game with real-valued actions for ``p1``: not a game distrl plays."""

from tests.envs.lopsided import BoxActions as parallel_env  # noqa: F401
