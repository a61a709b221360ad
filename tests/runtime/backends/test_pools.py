"""The pools that hold PBT's members and a league's players: an argument that is another worker's answer."""

import pytest

from distrl.runtime.backends.pools import Answer, LocalTrainers, RayTrainers


class Worker:
    """A stand-in trainer: ``made`` says which making of worker ``name`` it is."""

    def __init__(self, name: str, made: int):
        self.name, self.made = name, made

    def start(self) -> None:
        pass

    def step(self, env_steps: int) -> dict:
        return {"env_steps": env_steps}

    def close(self) -> dict:
        return {"name": self.name}

    def snapshot(self) -> tuple[str, int]:
        return self.name, self.made

    def load(self, snapshot: tuple[str, int]) -> tuple[str, tuple[str, int]]:
        return self.name, snapshot


def test_a_local_call_takes_another_workers_answer():
    pool = LocalTrainers({k: (lambda k=k: Worker(k, 0)) for k in "ab"})
    try:
        assert pool.call("b", "load", Answer("a", "snapshot")) == ("b", ("a", 0))
    finally:
        pool.close()


def test_a_ray_call_whose_argument_came_from_a_dead_actor_remakes_that_actor_and_asks_it_again(local_ray):
    ray = local_ray
    pool = RayTrainers(Worker, {"a": ("a", 0), "b": ("b", 0)}, restart={"a": ("a", 1), "b": ("b", 1)})
    try:
        assert pool.call("b", "load", Answer("a", "snapshot")) == ("b", ("a", 0))
        source, target = pool.workers["a"], pool.workers["b"]
        ray.kill(source, no_restart=True)
        # the load's own actor is alive: only the source is made again (from its restart arguments)
        assert pool.call("b", "load", Answer("a", "snapshot")) == ("b", ("a", 1))
        assert pool.workers["a"] is not source and pool.workers["b"] is target
        assert pool.restarts == {"a": 1, "b": 0}
        # the call's own actor dead: it is the one made again
        ray.kill(target, no_restart=True)
        assert pool.call("b", "load", Answer("a", "snapshot")) == ("b", ("a", 1))
        assert pool.workers["b"] is not target and pool.restarts == {"a": 1, "b": 1}
    finally:
        pool.close()


def test_without_restarts_a_dead_source_ends_the_call(local_ray):
    ray = local_ray
    pool = RayTrainers(Worker, {"a": ("a", 0), "b": ("b", 0)})
    try:
        ray.kill(pool.workers["a"], no_restart=True)
        with pytest.raises(ray.exceptions.RayActorError):
            pool.call("b", "load", Answer("a", "snapshot"))
    finally:
        pool.close()
