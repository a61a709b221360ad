"""The pools that hold PBT's members and a league's players: an argument that is another worker's answer."""

import os
import time

import pytest

from distrl.runtime.backends.pools import MAX_RESTARTS, Answer, LocalTrainers, RayTrainers

WAIT_S = 60


class Worker:
    """A stand-in trainer: ``made`` says which making of worker ``name`` it is; one given ``die_once`` (a file's path)
    ends its process at its start if that file is not there yet, and makes it."""

    def __init__(self, name: str, made: int, die_once: str | None = None):
        self.name, self.made, self.die_once = name, made, die_once

    def start(self) -> None:
        if self.die_once is not None and not os.path.exists(self.die_once):
            open(self.die_once, "w").close()
            os._exit(1)

    def step(self, env_steps: int) -> dict:
        return {"env_steps": env_steps}

    def close(self) -> dict:
        return {"name": self.name}

    def snapshot(self) -> tuple[str, int]:
        return self.name, self.made

    def load(self, snapshot: tuple[str, int]) -> tuple[str, tuple[str, int]]:
        return self.name, snapshot

    def ask(self, other) -> int:
        """An answer of an actor outside the pool, through a handle this worker was given."""
        import ray

        return ray.get(other.answer.remote())


class Outside:
    def answer(self) -> int:
        return 1


def _kill(ray, actor) -> None:
    """Kill ``actor`` and wait (bounded) until Ray says so: ``ray.kill`` is asynchronous."""
    ray.kill(actor, no_restart=True)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            ray.get(actor.__ray_ready__.remote(), timeout=WAIT_S)
        except ray.exceptions.RayActorError:
            return
    raise AssertionError(f"the killed actor still answered after {WAIT_S} s")


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
        _kill(ray, source)
        # the load's own actor is alive: only the source is made again (from its restart arguments)
        assert pool.call("b", "load", Answer("a", "snapshot")) == ("b", ("a", 1))
        assert pool.workers["a"] is not source and pool.workers["b"] is target
        assert pool.restarts == {"a": 1, "b": 0}
        # the call's own actor dead: it is the one made again
        _kill(ray, target)
        assert pool.call("b", "load", Answer("a", "snapshot")) == ("b", ("a", 1))
        assert pool.workers["b"] is not target and pool.restarts == {"a": 1, "b": 1}
    finally:
        pool.close()


def test_an_answer_not_asked_again_is_none_when_its_worker_died(local_ray):
    """PBT's copy: a source made again holds its last checkpoint, not the slice that scored; nothing is loaded."""
    ray = local_ray
    pool = RayTrainers(Worker, {"a": ("a", 0), "b": ("b", 0)}, restart={"a": ("a", 1), "b": ("b", 1)})
    try:
        source, target = pool.workers["a"], pool.workers["b"]
        _kill(ray, source)
        assert pool.call("b", "load", Answer("a", "snapshot", again=False)) is None
        assert pool.workers["a"] is not source and pool.workers["b"] is target and pool.restarts == {"a": 1, "b": 0}
        assert pool.call("b", "load", Answer("a", "snapshot", again=False)) == ("b", ("a", 1))
    finally:
        pool.close()


def test_a_step_of_an_actor_made_again_meanwhile_is_given_again_even_at_the_last_restart(local_ray):
    ray = local_ray
    pool = RayTrainers(Worker, {"a": ("a", 0), "b": ("b", 0)}, restart={"a": ("a", 1), "b": ("b", 1)})
    try:
        pool.restarts["a"] = MAX_RESTARTS - 1
        _kill(ray, pool.workers["a"])
        pool.submit("a", 5)  # a step of the dead actor, still under way as a call finds it dead and makes it again
        assert pool.call("b", "load", Answer("a", "snapshot")) == ("b", ("a", 1))
        assert pool.restarts["a"] == MAX_RESTARTS
        assert pool.wait_any() == ("a", {"env_steps": 5})  # given to the new actor, not the end of the run
        assert not pool.pending()
    finally:
        pool.close()


def test_an_actor_outside_the_pool_that_died_under_a_call_is_the_calls_error_not_a_restart(local_ray):
    ray = local_ray
    pool = RayTrainers(Worker, {"a": ("a", 0)}, restart={"a": ("a", 1)})
    outside = ray.remote(num_cpus=0)(Outside).remote()
    try:
        assert pool.call("a", "ask", outside) == 1
        worker = pool.workers["a"]
        _kill(ray, outside)
        with pytest.raises(ray.exceptions.RayActorError):
            pool.call("a", "ask", outside)
        assert pool.workers["a"] is worker and pool.restarts == {"a": 0}
    finally:
        pool.close()


def test_a_worker_made_again_that_dies_as_it_starts_is_made_again(local_ray, tmp_path):
    ray = local_ray
    flag = str(tmp_path / "died-once")
    pool = RayTrainers(Worker, {"a": ("a", 0)}, restart={"a": ("a", 1, flag)})
    try:
        _kill(ray, pool.workers["a"])
        assert pool.call("a", "snapshot") == ("a", 1)  # the first one made again ended at its start: one more
        assert os.path.exists(flag) and pool.restarts == {"a": 2}
    finally:
        pool.close()


def test_without_restarts_a_dead_source_ends_the_call(local_ray):
    ray = local_ray
    pool = RayTrainers(Worker, {"a": ("a", 0), "b": ("b", 0)})
    try:
        source = pool.workers["a"]
        _kill(ray, source)
        with pytest.raises(ray.exceptions.RayActorError):
            pool.call("b", "load", Answer("a", "snapshot"))
        assert pool.workers["a"] is source and pool.restarts == {"a": 0, "b": 0}
    finally:
        pool.close()
