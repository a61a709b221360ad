"""R2D3's batch mix: each element is a demonstration with probability rho (or exactly round(rho B)), demo
items land where the draw says, and each replay gets its own elements' priorities back."""

import numpy as np
import pytest

from distrl.agents.common.demos import DemoMixer
from distrl.replay import SampledBatch


class FakeReplay:
    """Items carry their source and slot; records the priority updates it gets."""

    def __init__(self, source, size=1000):
        self.source, self.size, self.updates, self.sampled = source, size, [], 0
        self.rng = np.random.default_rng(source)

    def sample(self, n, beta=0.4):
        slots = self.rng.integers(0, self.size, n)
        self.sampled += n
        return SampledBatch({"source": np.full(n, self.source), "slot": slots.copy()}, slots,
                            np.full(n, 1.0 / self.size), np.full(n, float(self.source + 1), np.float32))

    def update_priorities(self, slots, priorities):
        self.updates.append((np.asarray(slots), np.asarray(priorities)))


@pytest.mark.parametrize("ratio", [1 / 256, 1 / 16, 0.25])
def test_bernoulli_mix_realises_the_ratio_and_routes_priorities(ratio):
    agent, demos = FakeReplay(0), FakeReplay(1)
    mixer = DemoMixer(demos, ratio, "bernoulli", batch_size=32, beta=0.4, seed=0)
    total = n_demo = 0
    for _ in range(3000):
        batch, is_demo = mixer.mix(agent.sample(32))
        assert (batch.items["source"] == is_demo).all()  # demo items exactly where the draw put them
        assert (batch.weights[is_demo] == 2.0).all() and (batch.weights[~is_demo] == 1.0).all()
        priorities = np.arange(32, dtype=np.float64)
        updates_before = len(demos.updates)
        keep = mixer.update(is_demo, priorities)
        assert (keep == ~is_demo).all()
        if is_demo.any():
            slots, p = demos.updates[-1]
            np.testing.assert_array_equal(slots, batch.items["slot"][is_demo])  # the demo items' own slots
            np.testing.assert_array_equal(p, priorities[is_demo])
        else:
            assert len(demos.updates) == updates_before
        total, n_demo = total + 32, n_demo + int(is_demo.sum())
    sd = np.sqrt(ratio * (1 - ratio) / total)
    assert abs(n_demo / total - ratio) < 5 * sd  # the Bernoulli draw's rate, within 5 standard deviations
    assert mixer.metrics()["demo_fraction"] == pytest.approx(n_demo / total)
    assert demos.sampled <= n_demo + 32 * 2  # demo items come a batch at a time and are all used


def test_exact_mix_takes_round_rho_b_every_batch_and_zero_takes_none():
    agent, demos = FakeReplay(0), FakeReplay(1)
    exact = DemoMixer(demos, 0.25, "exact", batch_size=32, beta=0.4)
    for _ in range(50):
        _, is_demo = exact.mix(agent.sample(32))
        assert is_demo.sum() == 8
    never = DemoMixer(FakeReplay(1), 0.0, "bernoulli", batch_size=32, beta=0.4)
    for _ in range(50):
        _, is_demo = never.mix(agent.sample(32))
        assert not is_demo.any()
    assert never.demos.sampled == 0


def test_a_demo_replay_that_cannot_sample_yet_leaves_the_batch_to_the_agent():
    class Empty(FakeReplay):
        def sample(self, n, beta=0.4):
            return None

    mixer = DemoMixer(Empty(1), 1.0, "bernoulli", batch_size=8, beta=0.4)
    batch, is_demo = mixer.mix(FakeReplay(0).sample(8))
    assert not is_demo.any() and (batch.items["source"] == 0).all()


def test_the_demo_draws_continue_across_a_checkpoint():
    from types import SimpleNamespace

    from distrl.agents.common.replay_learner import ReplayLearner

    cfg = SimpleNamespace(demo_ratio=0.25, demo_mix="bernoulli", batch_size=32, priority_beta=0.4)
    a = ReplayLearner(cfg, FakeReplay(0), {}, demos=FakeReplay(1))
    for _ in range(5):
        a.mixer.mix(FakeReplay(0).sample(32))
    saved = a.counters()
    b = ReplayLearner(cfg, FakeReplay(0), {}, demos=FakeReplay(1))
    b.load_counters(saved)
    draws = [a.mixer.mix(FakeReplay(0).sample(32))[1] for _ in range(5)]
    again = [b.mixer.mix(FakeReplay(0).sample(32))[1] for _ in range(5)]
    assert all((x == y).all() for x, y in zip(draws, again))
