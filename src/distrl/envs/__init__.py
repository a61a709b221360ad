"""Gymnasium environments: creation, vectorisation, Atari preprocessing and episode bookkeeping."""

from distrl.envs.episodes import EpisodeTracker
from distrl.envs.make import EnvSpec, check_env_id, env_spec, make_env, make_vec_env
from distrl.envs.memory import CARTPOLE_NO_VELOCITY
from distrl.envs.point import POINT_TO_ORIGIN

__all__ = ["CARTPOLE_NO_VELOCITY", "EnvSpec", "EpisodeTracker", "check_env_id", "env_spec", "make_env", "make_vec_env",
           "POINT_TO_ORIGIN"]
