"""The release rule, the pacer and periodic requests, with a recording backend."""

from __future__ import annotations

from distrl.core.program import Program, Role
from distrl.runtime.run.release import Pacer, Periodic, ReleaseRule
from tests.runtime.test_trainer import GenerationLearner, generation_program


class Backend:
    def __init__(self):
        self.released, self.held, self.requested = [], [], []

    def release(self, token):
        self.released.append(token)

    def hold(self, roles):
        self.held.append(set(roles))

    def request(self, name):
        self.requested.append(name)


def test_the_release_rule_holds_a_slot_only_while_the_others_cover_the_version(tmp_path):
    """Capacity 2 (two producers, one step each in flight), 3 batches per version, step by step."""
    rule, backend, learner = ReleaseRule(generation_program(3)), Backend(), GenerationLearner()
    released = backend.released

    def consume(token, useful=True, update=False):
        before = learner.version
        rule.consumed([{"version": before if useful else before - 1}], before)
        if update:
            learner.version += 1
        rule.release(backend, token, before, learner.version)

    consume("a1")  # 1 of 3; one step out cannot cover 2 more: a goes on
    consume("b1")  # 2 of 3; a's step covers the last one: b waits
    assert released == ["a1"]
    consume("a2", update=True)  # the version is complete: b and a start on the new one
    assert released == ["a1", "b1", "a2"] and rule.useful == 0
    consume("x", useful=False)  # a stale or dropped batch counts for nothing: released, the last one out
    consume("y")
    consume("z")  # 2 of 3 with one out: held
    assert released[-2:] == ["x", "y"]
    consume("w", useful=False)  # the learner still needs one and nothing else is out: never held
    assert released[-1] == "w"


def _noop(*args):
    return None


def test_the_pacer_holds_a_role_whose_env_steps_ran_ahead_of_the_updates_and_frees_it_after():
    """``free_env_steps + env_steps_per_update * updates``: 100 + 10 per update; the hold is sent on change only."""
    paced = Role("actor", _noop, env_steps_per_update=10, free_env_steps=100)
    pacer, backend = Pacer(Program(roles=(paced, Role("other", _noop)))), Backend()
    pacer.pace(backend, env_steps=100, updates=0)  # at the bound: free
    pacer.pace(backend, env_steps=101, updates=0)  # past it: held
    pacer.pace(backend, env_steps=105, updates=0)  # still held: nothing new sent
    pacer.pace(backend, env_steps=110, updates=1)  # 110 <= 100 + 10: free again
    assert backend.held == [{"actor"}, set()]


def test_a_periodic_role_is_requested_once_per_interval_from_the_session_start():
    evaluator = Role("evaluator", _noop, interval_steps=1000)
    periodic, backend = Periodic(Program(roles=(evaluator, Role("actor", _noop)))), Backend()
    periodic.start(5000)  # a resumed run: the first evaluation one interval after this session's start
    for steps in (5999, 6000, 6500, 7100, 7999, 8000):
        periodic.request(backend, steps)
    assert backend.requested == ["evaluator"] * 3

