"""The replay learners' loop (agents/common/replay_learner.py): with ``prefetch`` (the trainer's
``overlap_transfers``) the next batch is drawn and staged on a thread while the current update runs; every
drawn batch is trained on once, in order, on the tensors staged for it, and its priorities are written under the
same lock as the draws."""

import threading

import numpy as np
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
        n = int(batch.slots[0])
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
