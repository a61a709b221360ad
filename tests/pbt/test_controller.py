"""The controller on the PBT paper's toy problem (Jaderberg et al. 2017, Figure 2), apart from any RL system.

Maximise Q(theta) = 1.2 - theta0^2 - theta1^2 while each member only ascends its surrogate
Qhat(theta | h) = 1.2 - h0 theta0^2 - h1 theta1^2. Two members start at theta = (0.9, 1.0) with h = (1, 0) and
(0, 1): alone, each can only shrink one coordinate (Q ends at 0.2 or 0.39). The paper's claim: PBT
(exploit + explore) finds the maximum 1.2 faster than either ablation, and the grid never does."""

import numpy as np
import pytest

from distrl.pbt import Controller, MemberRecord


class ToyPool:
    def __init__(self, steps_per_unit=1, lr=0.02):
        self.theta = np.array([[0.9, 1.0], [0.9, 1.0]])
        self.h = np.array([[1.0, 0.0], [0.0, 1.0]])
        self.steps = np.zeros(2, dtype=int)
        self.queue, self.lr, self.copies = [], lr, []

    def score(self, i):
        return 1.2 - float(np.sum(self.theta[i] ** 2))

    def submit(self, i, n):
        self.queue.append((i, n))

    def pending(self):
        return bool(self.queue)

    def wait_any(self):
        i, n = self.queue.pop(0)
        for _ in range(n):  # gradient ascent on the surrogate
            self.theta[i] = self.theta[i] + self.lr * (-2.0 * self.h[i] * self.theta[i])
        self.steps[i] += n
        return i, {"score": self.score(i), "env_steps": int(self.steps[i]),
                   "hyperparameters": {"h0": float(self.h[i, 0]), "h1": float(self.h[i, 1])}}

    def copy(self, source, target, hyper):
        self.theta[target] = self.theta[source]
        self.set_hyperparameters(target, hyper)
        self.copies.append((source, target))
        return "toy"

    def set_hyperparameters(self, i, hyper):
        self.h[i] = [hyper["h0"], hyper["h1"]]


def add_noise(values, rng):  # the toy's explore: h + N(0, 0.1), as in the paper's figure, kept >= 0
    return {k: max(v + float(rng.normal(0.0, 0.1)), 0.0) for k, v in values.items()}


def best_q(exploit, explore, seed, total=200):
    pool = ToyPool()
    records = [MemberRecord({"h0": 1.0, "h1": 0.0}), MemberRecord({"h0": 0.0, "h1": 1.0})]
    Controller(pool, records, ready_steps=4, total_steps=total, perturb=add_noise, rng=np.random.default_rng(seed),
               fraction=0.5, exploit=exploit, explore=explore, inherit_hyperparameters=False).run()
    return max(pool.score(0), pool.score(1)), pool


def test_pbt_beats_grid_search_and_both_ablations_on_the_paper_toy():
    """Mean best Q over 20 seeds after 100 steps (ready every 4): PBT 1.160, exploit only 1.143 (weights
    copied, each member keeps its own h), explore only 1.061, grid 0.39; PBT reaches 1.2 by 200 steps."""
    seeds = range(20)
    pbt = np.mean([best_q(True, True, s, total=100)[0] for s in seeds])
    explore_only = np.mean([best_q(False, True, s, total=100)[0] for s in seeds])
    exploit_only = np.mean([best_q(True, False, s, total=100)[0] for s in seeds])
    grid, _ = best_q(False, False, 0, total=100)
    assert grid == pytest.approx(1.2 - 0.81, abs=1e-3)  # each member shrinks one coordinate only
    assert pbt > exploit_only > explore_only > grid
    assert min(best_q(True, True, s)[0] for s in range(5)) > 1.19  # the maximum, 1.2, within 200 steps


def test_the_worse_member_copies_the_better_one_and_only_then():
    _, pool = best_q(True, True, 0, total=24)
    assert pool.copies[0] == (1, 0)  # member 0 (h = (1, 0)) keeps theta1 = 1.0: it falls behind member 1 first
    assert all(target != source for source, target in pool.copies)
    _, pool = best_q(False, True, 0, total=24)
    assert pool.copies == []


def test_a_copy_the_pool_could_not_make_is_no_exploit():
    """A pool's copy answers None where nothing was copied (on Ray: the source's actor died and was made again from
    its checkpoint): no exploit is counted or logged, the member keeps its hyperparameters and trains on."""

    class NoCopies(ToyPool):
        def copy(self, source, target, hyper):
            self.copies.append((source, target))
            return None

    pool, events = NoCopies(), []
    records = [MemberRecord({"h0": 1.0, "h1": 0.0}), MemberRecord({"h0": 0.0, "h1": 1.0})]
    c = Controller(pool, records, ready_steps=4, total_steps=24, perturb=add_noise, rng=np.random.default_rng(0),
                   fraction=0.5, inherit_hyperparameters=False, on_exploit=events.append)
    c.run()
    assert pool.copies and c.exploits == 0 and events == []
    assert pool.h.tolist() == [[1.0, 0.0], [0.0, 1.0]]  # never perturbed: an exploit's explore did not happen
    assert all(r.env_steps == 24 for r in records)


def test_with_inherited_hyperparameters_the_copy_takes_the_sources_values_perturbed():
    """The RL runs' exploit (the default, Jaderberg et al. 2017 section 4.1): the member takes the source's weights
    and hyperparameters, then explore multiplies each by 0.8 or 1.2 (``pbt/population.py``'s perturber): after each
    exploit the member's values are the source's at that moment times one of those factors, never its own's."""
    from distrl.pbt.population import perturber
    from distrl.pbt.search import Explore

    class Recording(ToyPool):
        def copy(self, source, target, hyper):
            self.seen.append(({"h0": float(self.h[source, 0]), "h1": float(self.h[source, 1])}, dict(hyper)))
            return super().copy(source, target, hyper)

    pool = Recording()
    pool.seen, pool.h = [], np.array([[1.0, 0.1], [0.1, 1.0]])  # as the records say
    records = [MemberRecord({"h0": 1.0, "h1": 0.1}), MemberRecord({"h0": 0.1, "h1": 1.0})]
    specs = [Explore.parse(f"{name}=loguniform(0.01,10)") for name in ("h0", "h1")]
    Controller(pool, records, ready_steps=4, total_steps=60, perturb=perturber(specs, resample_prob=0.0),
               rng=np.random.default_rng(0), fraction=0.5).run()
    assert pool.seen
    for source, after in pool.seen:
        assert all(after[k] / source[k] in (pytest.approx(0.8), pytest.approx(1.2)) for k in after), (source, after)
