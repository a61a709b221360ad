"""What PBT may change: ``NAME=loguniform(LOW,HIGH)``, ``NAME=uniform(LOW,HIGH)`` or ``NAME=choice(A,B,...)``.

Each spec draws a member's first value and redraws on a resample; a perturbation (explore, Jaderberg et
al. 2017, section 4: "perturb": multiply by 0.8 or 1.2) keeps continuous values inside their bounds and
moves a choice to a neighbouring option (multiplying a choice of 0.0 would never leave it).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from distrl.errors import ConfigError

_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(loguniform|uniform|choice)\s*\((.*)\)\s*$")
FORMS = "NAME=loguniform(LOW,HIGH), NAME=uniform(LOW,HIGH) or NAME=choice(A,B,...)"


@dataclass(frozen=True)
class Explore:
    name: str
    kind: str  # loguniform | uniform | choice
    values: tuple[float, ...]  # (low, high) or the options

    @classmethod
    def parse(cls, text: str) -> Explore:
        m = _SPEC.match(text)
        if m is None:
            raise ConfigError(f"--explore {text!r} is not {FORMS}")
        name, kind, args = m.groups()
        try:
            values = tuple(float(a) for a in args.split(",") if a.strip())
        except ValueError:
            raise ConfigError(f"--explore {text!r}: the arguments must be numbers") from None
        if not all(math.isfinite(v) for v in values):
            raise ConfigError(f"--explore {text!r}: the arguments must be finite numbers")
        if kind == "choice":
            if len(values) < 2:
                raise ConfigError(f"--explore {text!r}: choice needs at least two options")
            values = tuple(sorted(set(values)))
        elif len(values) != 2 or not values[0] < values[1]:
            raise ConfigError(f"--explore {text!r}: {kind} needs two numbers LOW < HIGH")
        elif kind == "loguniform" and values[0] <= 0:
            raise ConfigError(f"--explore {text!r}: loguniform needs 0 < LOW < HIGH")
        return cls(name, kind, values)

    def sample(self, rng: np.random.Generator) -> float:
        if self.kind == "choice":
            return float(rng.choice(self.values))
        low, high = self.values
        if self.kind == "loguniform":
            return float(math.exp(rng.uniform(math.log(low), math.log(high))))
        return float(rng.uniform(low, high))

    def perturb(self, value: float, rng: np.random.Generator, factors: tuple[float, float] = (0.8, 1.2)) -> float:
        if self.kind == "choice":
            i = int(np.argmin([abs(v - value) for v in self.values]))
            j = min(max(i + int(rng.choice((-1, 1))), 0), len(self.values) - 1)
            return self.values[j]
        low, high = self.values
        return float(min(max(value * float(rng.choice(factors)), low), high))
