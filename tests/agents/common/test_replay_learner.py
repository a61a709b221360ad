"""The replay learners' loop (agents/common/replay_learner.py): with ``prefetch`` (the trainer's
``overlap_transfers``) the next batch is drawn and staged on a thread while the current update runs; every
drawn batch is trained on once, in order, on the tensors staged for it, and its priorities are written under the
same lock as the draws."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.agents.common.replay_learner import ReplayLearner
from distrl.replay import SampledBatch


class FakeReplay:
    """Hands out ``limit`` batches numbered 0, 1, ...; records every call, and any two calls that overlap."""

    def __init__(self, limit: int):
        self.limit, self.drawn, self.written, self.overlapped = limit, 0, [], False
        self.busy = threading.Lock()

    def _enter(self):
        if not self.busy.acquire(blocking=False):
            self.overlapped = True
            self.busy.acquire()

    def sample(self, batch_size, beta=1.0):
        self._enter()
        try:
            if self.drawn >= self.limit:
                return None
            n, self.drawn = self.drawn, self.drawn + 1
            items = {"x": np.full((batch_size, 3), n, np.float32)}
            return SampledBatch(items, np.full(batch_size, n), np.ones(batch_size), np.ones(batch_size, np.float32))
        finally:
            self.busy.release()

    def update_priorities(self, slots, priorities):
        self._enter()
        try:
            self.written.append(int(slots[0]))
        finally:
            self.busy.release()


class Cfg:
    batch_size, priority_beta, demo_ratio = 4, 1.0, 0.0


class RecordingLearner(ReplayLearner):
    def __init__(self, replay, nonfinite_at=()):
        super().__init__(Cfg(), replay, {})
        self.trained, self.nonfinite_at = [], set(nonfinite_at)

    def update(self, batch):
        t = self.tensors(batch)
        if self._sampler is not None:
            assert self._staged is not None and self._staged[0] is batch  # trained on what was staged for it
        n = int(batch.slots[0])
        if n == getattr(self, "fail_at", None):
            raise RuntimeError("an update that fails")
        assert (t["x"] == n).all()  # the tensors staged for this very batch
        self.trained.append(n)
        if n in self.nonfinite_at:
            return None, None
        return 1.0, np.ones(len(batch.slots))


@settings(max_examples=15, deadline=None)
@given(limit=st.integers(0, 150), nonfinite=st.sets(st.integers(0, 150), max_size=5), prefetch=st.booleans())
def test_every_drawn_batch_is_trained_on_once_in_order(limit, nonfinite, prefetch):
    replay = FakeReplay(limit)
    learner = RecordingLearner(replay, nonfinite)
    learner.prefetch(prefetch)
    try:
        steps = []
        while (out := learner.step()) is not None:
            steps.append(out)
    finally:
        learner.prefetch(False)
    assert learner.trained == list(range(limit))
    applied = [n for n in range(limit) if n not in nonfinite]
    assert replay.written == applied and learner.updates == len(applied)
    assert not replay.overlapped  # draws and priority writes took turns
    assert len(steps) == -(-limit // ReplayLearner.max_updates_per_step)  # (64 updates per step at most)


def test_prefetch_draws_on_a_thread_of_its_own():
    seen = set()

    class Watching(FakeReplay):
        def sample(self, batch_size, beta=1.0):
            seen.add(threading.current_thread().name)
            return super().sample(batch_size, beta)

    learner = RecordingLearner(Watching(10))
    learner.prefetch(True)
    try:
        learner.step()
    finally:
        learner.prefetch(False)
    assert any(name.startswith("distrl-sample") for name in seen) and learner.trained == list(range(10))


def test_apex_dqn_runs_with_overlapped_transfers(tmp_path):
    import distrl

    s = distrl.train("apex-dqn", env="CartPole-v1", runtime="local", overlap_transfers="on", total_steps=10_000,
                     run_dir=str(tmp_path / "run"))
    assert s["learner_updates"] > 0 and np.isfinite(s["episode_return_mean"])


class DemoReplay:
    """A demo replay whose items say their slot (x = 1000 + slot); records the priority writes it gets."""

    def __init__(self):
        self.rng, self.writes = np.random.default_rng(1), []

    def sample(self, n, beta=1.0):
        slots = self.rng.integers(0, 50, n)
        items = {"x": np.repeat((1000 + slots)[:, None], 3, axis=1).astype(np.float32)}
        return SampledBatch(items, slots, np.ones(n), np.ones(n, np.float32))

    def update_priorities(self, slots, priorities):
        self.writes.append(np.asarray(slots).copy())


class MixingLearner(ReplayLearner):
    """Records, per update, the demo slots its batch holds (from the items, x = 1000 + slot)."""

    class Cfg(Cfg):
        batch_size, demo_ratio, demo_mix = 8, 0.25, "bernoulli"

    def __init__(self, replay, demos):
        super().__init__(self.Cfg(), replay, {}, demos)
        self.demo_slots = []

    def update(self, batch):
        t = self.tensors(batch)
        if self._sampler is not None:
            assert self._staged is not None and self._staged[0] is batch  # trained on what was staged for it
        rows = batch.items["demo"]
        self.demo_slots.append(t["x"][:, 0].numpy()[rows].astype(int) - 1000)
        return 1.0, np.ones(len(batch.slots))


class AgentReplay(FakeReplay):
    def update_priorities(self, slots, priorities):
        self._enter()
        try:
            self.written.append(len(slots))
        finally:
            self.busy.release()


def test_with_a_demo_replay_each_batch_s_demo_priorities_go_to_its_own_demo_slots():
    """R2D3 with prefetch: the batch after is mixed while one is updated; the demo priorities written after an
    update are for the demo items that update trained on, not for the batch mixed meanwhile."""
    for prefetch in (False, True):
        demos = DemoReplay()
        learner = MixingLearner(AgentReplay(120), demos)
        learner.prefetch(prefetch)
        try:
            while learner.step() is not None:
                pass
        finally:
            learner.prefetch(False)
        expected = [s for s in learner.demo_slots if len(s)]
        assert len(expected) > 10 and len(demos.writes) == len(expected)
        for written, trained in zip(demos.writes, expected):
            np.testing.assert_array_equal(written, trained)


def test_an_update_that_raises_leaves_no_draw_out():
    """The draw for the batch after a failing update has finished when the error reaches the trainer (which then
    checkpoints and closes: nothing may sample the replay meanwhile)."""
    replay = FakeReplay(100)
    learner = RecordingLearner(replay)
    learner.fail_at = 5
    learner.prefetch(True)
    try:
        with pytest.raises(RuntimeError, match="fails"):
            learner.step()
        assert replay.drawn == 7 and not replay.busy.locked()  # batches 0..5 and the one drawn ahead of 5
    finally:
        learner.prefetch(False)
