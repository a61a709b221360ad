"""Demonstrations for any replay system: a second, separately prioritized replay and R2D3's batch mix.

R2D3 (Paine, Gulcehre et al. 2019, arXiv:1909.01387, section 3): the learner keeps the agent's replay and a
demo replay, each prioritized on its own; every element of a learner batch comes from the demo replay
with probability rho (the demo ratio, a Bernoulli draw per element; the paper chose 1/256). ``demo_mix=exact``
takes exactly round(rho * B) per batch instead. The demo replay is a replay service like the agent's (saved
in checkpoints), filled once when the run starts from a Minari dataset and sampled with no ratio limit.
Here the mix works for Ape-X DQN, Ape-X DDPG and R2D2 alike: it sits in ``ReplayLearner``.

Demo items are sampled from their replay a whole batch at a time into a small pool and taken from it as the
Bernoulli draws ask (with rho = 1/256 one draw of B serves many updates); their new priorities go back to
the demo replay, the agent items' to the agent replay. The agent replay still gives a whole batch per
update, so its samples-per-insert ratio counts updates, whatever rho is.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from distrl.config import setting
from distrl.core.program import ReplayService
from distrl.errors import ConfigError
from distrl.replay import SampledBatch


@dataclass(frozen=True)
class DemoSettings:
    demos: str = setting("", "A Minari dataset of demonstrations (`distrl record --out DIR`): a second, separately "
                         "prioritized replay mixed into every learner batch (R2D3). Empty: none.")
    demo_ratio: float = setting(1 / 256, "rho: the chance that a batch element is a demonstration (R2D3: 1/256).",
                                low=0.0, high=1.0)
    demo_mix: str = setting("bernoulli", "A Bernoulli draw per batch element (the paper), or exactly round(rho * B).",
                            choices=("bernoulli", "exact"))


def replays(services: dict) -> tuple[str, ...]:
    """What a replay learner uses: its replay, and the demo replay where there is one."""
    return tuple(name for name in ("replay", "demos") if name in services)


def as_items(output: dict) -> tuple[dict, None]:
    """Preloaded demo items are already in the replay's layout; they enter at the highest priority."""
    return output, None


def demo_service(cfg, ctx, replay_for, to_outputs, items=as_items) -> ReplayService:
    """The demo replay of a run with ``demos`` set: the dataset is read and checked against the env now
    (one line if it does not fit); ``replay_for(episodes)`` makes the replay (sized for them), and
    ``to_outputs(episodes)`` the outputs inserted when the service starts."""
    from distrl.datasets.minari_io import check_matches, load_episodes

    try:
        episodes = load_episodes(cfg.demos)
        check_matches(episodes, ctx.env_id, ctx.env)
    except ConfigError as e:
        raise ConfigError(f"demos: {e}") from None
    return ReplayService(make=replay_for(episodes), items=items, samples_per_insert=None, min_size=1, error_buffer=0,
                         preload=partial(to_outputs, episodes))


_LAST = object()  # DemoMixer.update's default: the demo slots of the batch just mixed


class DemoMixer:
    def __init__(self, demos, ratio: float, mode: str, batch_size: int, beta: float, seed: int | None = None):
        """``seed``: of the Bernoulli draws; by default drawn from torch's generator, which the run's seed sets."""
        if seed is None:
            import torch

            seed = int(torch.randint(2**31, ()))
        if mode not in ("bernoulli", "exact"):
            raise ConfigError(f"demo_mix must be bernoulli or exact; got '{mode}'")
        self.demos, self.ratio, self.mode, self.batch_size, self.beta = demos, ratio, mode, batch_size, beta
        self.rng = np.random.default_rng(seed)
        self._pool: SampledBatch | None = None
        self._used = 0
        self._taken: np.ndarray | None = None  # demo slots in the batch just mixed, for their priorities
        self.elements = self.demo_elements = 0
        self.td = {"agent": [0.0, 0], "demo": [0.0, 0]}

    def mix(self, batch: SampledBatch) -> tuple[SampledBatch, np.ndarray]:
        """``batch`` with some elements replaced by demonstrations; returns it and which ones are."""
        B = len(batch.slots)
        if self.mode == "bernoulli":
            is_demo = self.rng.random(B) < self.ratio
        else:
            is_demo = np.arange(B) < round(self.ratio * B)
        n = int(is_demo.sum())
        demo = self._take(n) if n else None
        if demo is None:
            is_demo[:] = False
            self._taken = None
            return SampledBatch(
                {**batch.items, "demo": is_demo}, batch.slots, batch.probabilities, batch.weights
            ), is_demo
        # in place where the arrays are the sample's own; copies of read-only ones (Ray's object store)
        items = {k: v if v.flags.writeable else v.copy() for k, v in batch.items.items()}
        for k in items:
            items[k][is_demo] = demo.items[k]
        items["demo"] = is_demo  # learners that measure something of their own data leave these out
        weights, probs = batch.weights.copy(), batch.probabilities.copy()
        weights[is_demo], probs[is_demo] = demo.weights, demo.probabilities
        self._taken = demo.slots
        return SampledBatch(items, batch.slots, probs, weights), is_demo

    def _take(self, n: int) -> SampledBatch | None:
        parts = []
        while n > 0:
            if self._pool is None or self._used >= len(self._pool.slots):
                self._pool, self._used = self.demos.sample(max(self.batch_size, n), beta=self.beta), 0
                if self._pool is None:  # the demo replay is not ready (still empty)
                    return None
            k = min(n, len(self._pool.slots) - self._used)
            rows = slice(self._used, self._used + k)
            parts.append(SampledBatch({f: v[rows] for f, v in self._pool.items.items()}, self._pool.slots[rows],
                                      self._pool.probabilities[rows], self._pool.weights[rows]))
            self._used += k
            n -= k
        if len(parts) == 1:
            return parts[0]
        return SampledBatch({f: np.concatenate([p.items[f] for p in parts]) for f in parts[0].items},
                            np.concatenate([p.slots for p in parts]), np.concatenate([p.probabilities for p in parts]),
                            np.concatenate([p.weights for p in parts]))

    def taken(self) -> np.ndarray | None:
        """The demo replay's slots of the demo elements in the batch just mixed (None if it has none)."""
        return self._taken

    def update(self, is_demo: np.ndarray, priorities: np.ndarray, taken=_LAST) -> np.ndarray:
        """Send the demo elements' priorities to the demo replay; returns the agent elements' mask. ``taken``:
        their demo slots, as :meth:`taken` gave them right after that batch's mix (a learner that mixes the
        next batch before it writes this one's priorities); by default the batch just mixed."""
        agent = ~is_demo
        self.elements += len(is_demo)
        self.demo_elements += int(is_demo.sum())
        for name, rows in (("agent", agent), ("demo", is_demo)):
            self.td[name][0] += float(priorities[rows].sum())
            self.td[name][1] += int(rows.sum())
        taken = self._taken if taken is _LAST else taken
        if taken is not None and is_demo.any():
            self.demos.update_priorities(taken, priorities[is_demo])
        return agent

    def metrics(self) -> dict[str, float]:
        """Since the last call: the realised demo fraction and the mean priority (|TD| measure) of each source."""
        out = {}
        if self.elements:
            out["demo_fraction"] = self.demo_elements / self.elements
        for name, (total, count) in self.td.items():
            if count:
                out[f"td_{name}"] = total / count
        self.elements = self.demo_elements = 0
        self.td = {"agent": [0.0, 0], "demo": [0.0, 0]}
        return out
