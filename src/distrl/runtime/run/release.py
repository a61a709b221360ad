"""When a component may start its next piece of work: slots given back after the learner used them (held while a
version already has what it needs), roles paced to the learner's updates, and periodic roles when due."""

from __future__ import annotations


class ReleaseRule:
    """Gives a consumed slot back to its producer, unless the program counts batches per version
    (``batches_per_version``) and the slots still out (computing, or delivered and waiting) already cover what this
    version needs: then it holds the slot until the learner's next version, so that no producer starts work the
    learner would drop as stale (ES: a result from an older theta). The last slot out is never held, so a learner
    that needs more than it counted (a dropped result) always gets it."""

    def __init__(self, program):
        self.need = program.batches_per_version
        self.capacity = sum(r.count * r.in_flight for r in program.producers(program.consumes)) \
            if program.consumes else 0
        self.held: list = []  # consumed slots not yet given back
        self.useful = 0  # batches consumed that were made from the learner's current version

    def consumed(self, infos: list[dict], version: int) -> None:
        self.useful += sum(info.get("version") == version for info in infos)

    def release(self, backend, token, version_before: int, version_now: int) -> None:
        if self.need is None:
            backend.release(token)
            return
        if version_now != version_before:  # a new version: everything held starts on it
            self.useful = 0
            for held in self.held:
                backend.release(held)
            self.held.clear()
            backend.release(token)
            return
        out = self.capacity - len(self.held) - 1
        if out > 0 and out >= self.need - self.useful:
            self.held.append(token)
        else:
            backend.release(token)


class Pacer:
    """Holds back the paced roles whose env steps ran ahead of the learner (``Role.env_steps_per_update``: no new
    step while the run's env steps exceed ``free_env_steps + env_steps_per_update * updates``)."""

    def __init__(self, program):
        self.paced = [r for r in program.roles if r.env_steps_per_update is not None]
        self.held: frozenset[str] = frozenset()

    def pace(self, backend, env_steps: int, updates: int) -> None:
        if not self.paced:
            return
        held = frozenset(r.name for r in self.paced if env_steps > r.free_env_steps + r.env_steps_per_update * updates)
        if held != self.held:
            self.held = held
            backend.hold(held)


class Periodic:
    """Requests one step of each periodic role (``Role.interval_steps``: an evaluator) each time the run passes its
    interval of env steps, the first one interval after the session starts."""

    def __init__(self, program):
        self.program = program
        self.due = {r.name: r.interval_steps for r in program.roles if r.interval_steps}

    def start(self, env_steps: int) -> None:
        for name in self.due:
            self.due[name] = env_steps + self.program.role(name).interval_steps

    def request(self, backend, env_steps: int) -> None:
        for name, due in self.due.items():
            if env_steps >= due:
                backend.request(name)
                self.due[name] = due + self.program.role(name).interval_steps
