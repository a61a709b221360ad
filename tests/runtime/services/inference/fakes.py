"""Fakes for the inference server: observations that name their actor, step and env, and a policy
whose actions (and recurrent state) can be checked against them."""

from __future__ import annotations

import time

import numpy as np

from distrl.agents.common.env_actor import EnvActor
from distrl.core.program import Channel, Inference, Program, Role, served_unroll_spec
from distrl.core.types import ArraySpec

E = 3  # envs per actor
OBS = ArraySpec((3,), "float32")  # [actor index, step, env index]
EPISODE = 5  # env 0 of every actor ends an episode every EPISODE steps


def expected_action(obs: np.ndarray) -> np.ndarray:
    return (obs[..., 0] * 100_000 + obs[..., 1] * 10 + obs[..., 2]).astype(np.int64)


class EchoPolicy:
    """Action = a number made of the observation; with ``recurrent``, a per-env state counts the steps
    seen since the episode started and comes back as output ``count``."""

    def __init__(self, recurrent: bool = False):
        self.version = 0
        self.outputs = {"actions": ArraySpec((), "int64"), "count": ArraySpec((), "int64")}
        self.state_spec = ArraySpec((), "int64") if recurrent else None
        self.calls = []

    def __call__(self, obs, state, slots=None):
        self.calls.append(obs.shape[0])
        new_state = None if state is None else state + 1
        count = np.zeros(obs.shape[:2], np.int64) if state is None else new_state
        return {"actions": expected_action(obs), "count": count}, new_state

    def initial_state(self, n):
        return np.zeros(n, np.int64)

    def set_weights(self, flat, version):
        self.version = version


class CheckingEnvActor(EnvActor):
    """Steps a fake vector env; exits with an error if an action did not come from its own observation."""

    def __init__(self, index: int, seed: int, delay_s: float = 0.0, link=None, steps_per_call: int = 4):
        self.index, self.step_count, self.delay_s = index, 0, delay_s
        self.link, self.steps_per_call = link, steps_per_call
        self.request, self.timings, self.stopped = None, np.zeros(2), False

    def _request(self, rewards, terminated):
        obs = np.stack([np.full(E, self.index), np.full(E, self.step_count), np.arange(E)], axis=1).astype(np.float32)
        return {"obs": obs, "rewards": rewards, "terminated": terminated, "truncated": np.zeros(E, bool),
                "final": np.zeros(1, bool)}

    def reset(self):
        self.last = self._request(np.zeros(E, np.float32), np.zeros(E, bool))
        return self.last

    def advance(self, actions):
        if not np.array_equal(actions, expected_action(self.last["obs"])):
            raise RuntimeError(f"actor {self.index} got someone else's actions: {actions}")
        if self.delay_s:
            time.sleep(self.delay_s)  # a slow env, not synchronisation
        self.step_count += 1
        terminated = np.zeros(E, bool)
        terminated[0] = self.step_count % EPISODE == 0
        self.last = self._request(np.ones(E, np.float32), terminated)
        return self.last

    def close(self):
        pass


def make_checking_actor(index, seed, handles, slow: tuple = (), delay_s: float = 0.0):
    return CheckingEnvActor(index, seed, delay_s if index in slow else 0.0, handles["inference"])


def make_policy(recurrent: bool = False):
    return EchoPolicy(recurrent)


def program(num_actors: int, max_batch: int, max_wait_s: float, unroll_length: int = 4, make_actor=make_checking_actor,
            recurrent: bool = False) -> Program:
    """Env actors and an inference service whose unrolls go into a channel (no learner: tests take them)."""
    from functools import partial

    policy = EchoPolicy(recurrent)
    inference = Inference(make_policy=partial(make_policy, recurrent), obs=OBS, num_envs=E, unroll_length=unroll_length,
                          max_batch=max_batch, max_wait_s=max_wait_s, emits="unrolls")
    spec = served_unroll_spec(OBS, policy.outputs, policy.state_spec, E, unroll_length)
    actors = Role("actor", make_actor, count=num_actors, uses=("inference",))
    return Program(roles=(actors,), services={"unrolls": Channel(spec), "inference": inference}, consumes="unrolls")
