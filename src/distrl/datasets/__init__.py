"""Demonstrations and offline data in Minari's format: record them from a trained run or a scripted policy,
load any Minari dataset on disk, check it against the env it is used with."""

from distrl.datasets.minari_io import Episodes, load_episodes, write_episodes
from distrl.datasets.record import record_episodes

__all__ = ["Episodes", "load_episodes", "record_episodes", "write_episodes"]
