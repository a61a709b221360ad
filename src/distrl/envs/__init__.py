"""Gymnasium environments: creation, vectorisation, Atari preprocessing and episode bookkeeping."""

from distrl.envs.episodes import EpisodeTracker
from distrl.envs.make import EnvSpec, check_env_id, env_spec, make_env, make_vec_env

__all__ = ["EnvSpec", "EpisodeTracker", "check_env_id", "env_spec", "make_env", "make_vec_env"]
