"""Scripted policies for ``distrl record --policy`` tests, bad ones among them."""

import numpy as np


def raises(obs):
    raise RuntimeError("boom")


def strings(obs):
    return np.array(["left"] * len(obs))


def no_argument():
    return 0


def fractional(obs):
    return np.full(len(obs), 0.7)


def zeros(obs):
    return np.zeros(len(obs), np.int64)
