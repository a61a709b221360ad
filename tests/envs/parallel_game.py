"""A game in PettingZoo's parallel API only (no ``env()``): rock-paper-scissors, as
``pettingzoo:tests.envs.parallel_game`` plays it; and a fixed player for it (``module:function``)."""

from pettingzoo.classic import rps_v2

parallel_env = rps_v2.parallel_env


def paper(observation, mask) -> int:
    return 1  # rock 0, paper 1, scissors 2
