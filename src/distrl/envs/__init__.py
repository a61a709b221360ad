"""Gymnasium environments: creation by id with vectorisation and Atari preprocessing (``make``), episode bookkeeping
(``episodes``), games of two or more players from PettingZoo and OpenSpiel with their fixed opponents (``multi_agent``,
``openspiel``, ``opponents``), small test tasks (``point``, ``memory``, ``deep_sea``) and a CartPole that sleeps
in each step (``latency``)."""

from distrl.envs.deep_sea import DEEP_SEA
from distrl.envs.episodes import EpisodeTracker
from distrl.envs.latency import SLOW_CARTPOLE
from distrl.envs.make import EnvSpec, check_env_id, env_spec, make_env, make_vec_env
from distrl.envs.memory import CARTPOLE_NO_VELOCITY, MOUNTAIN_CAR_NO_VELOCITY
from distrl.envs.point import POINT_TO_ORIGIN

__all__ = ["CARTPOLE_NO_VELOCITY", "DEEP_SEA", "EnvSpec", "EpisodeTracker", "check_env_id", "env_spec", "make_env",
           "make_vec_env", "MOUNTAIN_CAR_NO_VELOCITY", "POINT_TO_ORIGIN", "SLOW_CARTPOLE"]
