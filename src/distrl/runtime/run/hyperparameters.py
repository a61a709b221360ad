"""A program's hyperparameters as a run holds them: base values (what ``set_hyperparameters``, PBT's explore step and
a checkpoint change) and the values applied, which schedules scale from the base by the run's progress. The trainer
sends what changed: every value to the learner and the services, the ones components use to them."""

from __future__ import annotations


class Hyperparameters:
    def __init__(self, program):
        self.program = program
        self.base = {k: h.value for k, h in program.hyperparameters.items()}
        self.applied: dict[str, float] = {}

    def set(self, values: dict[str, float]) -> None:
        """New base values; a name the program does not have is a KeyError naming the valid ones."""
        unknown = set(values) - set(self.base)
        if unknown:
            raise KeyError(f"not a hyperparameter of this program: {', '.join(sorted(unknown))} "
                           f"(valid: {', '.join(sorted(self.base))})")
        self.base.update({k: float(v) for k, v in values.items()})

    def changes(self, progress: float, force: bool = False) -> tuple[dict[str, float], dict[str, float]]:
        """The values at ``progress`` that differ from those applied (all of them with ``force``), now applied; and
        those of them that components use."""
        now = {k: h.at(progress, self.base[k]) for k, h in self.program.hyperparameters.items()}
        changed = {k: v for k, v in now.items() if force or self.applied.get(k) != v}
        self.applied.update(changed)
        return changed, {k: v for k, v in changed.items() if self.program.hyperparameters[k].components}
