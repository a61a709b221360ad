"""Several learners (runtime/learners.py): two data-parallel learners over gloo on this CPU give what one
learner gives with the doubled batch, for a channel learner (IMPALA) and a replay learner (Ape-X DQN,
priorities included); and a run with two learners ends with none of their processes left."""

import dataclasses

import numpy as np
import psutil
import pytest
import torch

import distrl
from distrl.api import plan_run
from distrl.errors import ConfigError
from distrl.replay import SampledBatch
from distrl.runtime.learners import (
    LearnerGroup,
    ShardingReplay,
    for_learners,
    split_batch,
    split_sampled,
)
from tests.procfs import alive
from tests.ray_cluster import stop_shared_ray

CPU = torch.device("cpu")


def _impala_batch(T: int, B: int, obs_dim: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"obs": rng.normal(size=(T + 1, B, obs_dim)).astype(np.float32),
            "actions": rng.integers(0, 2, (T, B)).astype(np.int64),
            "rewards": rng.normal(size=(T, B)).astype(np.float32),
            "terminated": rng.random((T, B)) < 0.1, "truncated": np.zeros((T, B), bool),
            "valid": np.ones((T, B), bool), "behaviour_logp": np.log(rng.uniform(0.3, 0.7, (T, B))).astype(np.float32)}


def test_shards_split_along_each_arrays_batch_axis():
    program = plan_run("impala", "CartPole-v1", num_envs=4, unroll_length=3)[4]
    spec = for_learners(program, 2).services["unrolls"].spec
    batch = _impala_batch(3, 8, 4, 0)
    shards = split_batch(batch, spec, 2)
    for k, v in batch.items():
        np.testing.assert_array_equal(np.concatenate([s[k] for s in shards], axis=spec[k].batch_axis), v)
    assert for_learners(program, 2).services["unrolls"].batch == 2 * program.services["unrolls"].batch
    apex = plan_run("apex-dqn", "CartPole-v1")[4]  # no channel: its replay's rate limiter lets N batches through
    assert for_learners(apex, 3).services["replay"].error_buffer == 3 * apex.services["replay"].error_buffer
    sampled = SampledBatch({"x": np.arange(6)}, np.arange(6) + 10, np.full(6, 0.5), np.linspace(0.5, 1, 6))
    parts = split_sampled(sampled, 3)
    assert [p.slots.tolist() for p in parts] == [[10, 11], [12, 13], [14, 15]]
    assert parts[2].weights.tolist() == sampled.weights[4:].tolist()


@pytest.mark.parametrize("normalised", [False, True], ids=["plain", "obs+popart+standardised-advantages"])
def test_two_impala_learners_equal_one_with_the_doubled_batch(normalised):
    """With the normalisers on, the ranks sum their batch moments (observations, PopArt's targets, the
    advantages' mean and std) before using them: the statistics and the weights still match one learner's."""
    norms = {"obs_norm": True, "value_norm": True, "normalize_advantages": True} if normalised else {}
    program = plan_run("impala", "CartPole-v1", num_envs=8, unroll_length=5, **norms)[4]
    torch.manual_seed(0)
    single = program.make_learner({})
    torch.manual_seed(0)
    rank0 = program.make_learner({})
    group = LearnerGroup.start(rank0, for_learners(program, 2), [], 2, CPU, "fp32", 1, 60.0)
    try:
        for seed in range(3):
            batch = _impala_batch(5, 16, 4, seed)  # 16 env streams: 8 per learner
            one, two = single.step(batch), group.step(batch)
            assert abs(one["grad_norm"] - two["grad_norm"]) < 1e-5 * max(1.0, one["grad_norm"])
        assert group.version == single.version == 3
        np.testing.assert_allclose(group.get_weights(), single.get_weights(), atol=1e-6)
    finally:
        group.close()
    assert not any(p.is_alive() for p in group.replicas.procs)


class _FixedReplay:
    """Hands out the same sample ``times`` times, then says wait; records the priorities written."""

    def __init__(self, sampled: SampledBatch, times: int):
        self.sampled, self.left, self.written, self.size = sampled, times, [], len(sampled.slots)

    def sample(self, batch_size: int, beta: float = 0.4):
        if self.left == 0:
            return None
        assert batch_size == len(self.sampled.slots)
        self.left -= 1
        return self.sampled

    def update_priorities(self, slots, priorities):
        self.written.append((np.asarray(slots).copy(), np.asarray(priorities).copy()))

    def stats(self):
        return {}


def _transitions(n: int, seed: int = 0) -> SampledBatch:
    rng = np.random.default_rng(seed)
    items = {"obs": rng.normal(size=(n, 4)).astype(np.float32), "action": rng.integers(0, 2, n).astype(np.int64),
             "reward": rng.normal(size=n).astype(np.float32), "discount": np.full(n, 0.97, np.float32),
             "next_obs": rng.normal(size=(n, 4)).astype(np.float32)}
    return SampledBatch(items, np.arange(n) + 100, np.full(n, 1.0 / n), rng.uniform(0.5, 1.0, n).astype(np.float32))


def test_two_apex_learners_equal_one_with_the_doubled_batch_priorities_included():
    program = plan_run("apex-dqn", "CartPole-v1", batch_size=16)[4]
    doubled = plan_run("apex-dqn", "CartPole-v1", batch_size=32)[4]
    sampled = _transitions(32)
    one_replay, two_replay = _FixedReplay(sampled, 3), _FixedReplay(sampled, 3)
    torch.manual_seed(0)
    single = doubled.make_learner({"replay": one_replay})
    torch.manual_seed(0)
    shared = ShardingReplay(two_replay)
    rank0 = program.make_learner({"replay": shared})
    group = LearnerGroup.start(rank0, program, [shared], 2, CPU, "fp32", 1, 60.0)
    try:
        single.step(None)
        group.step(None)  # both take the sample three times, then the replay says wait
        assert single.version == group.version == 3
        np.testing.assert_allclose(group.get_weights(), single.get_weights(), atol=1e-6)
        assert len(one_replay.written) == len(two_replay.written) == 3
        for (s1, p1), (s2, p2) in zip(one_replay.written, two_replay.written):
            np.testing.assert_array_equal(s1, s2)
            np.testing.assert_allclose(p1, p2, rtol=1e-5, atol=1e-6)
    finally:
        group.close()


def test_a_run_with_two_learners_trains_and_leaves_no_process(tmp_path):
    stop_shared_ray()  # its processes are the suite's, not this run's
    s = distrl.train("apex-dqn", env="CartPole-v1", runtime="local", num_learners=2, num_actors=1, num_envs=4,
                     min_replay=200, batch_size=16, total_steps=3000, run_dir=str(tmp_path / "run"))
    assert s["env_steps"] >= 3000 and s["learner_updates"] > 0 and (tmp_path / "run" / "checkpoints").is_dir()
    left = [p for p in psutil.Process().children(recursive=True) if _running_distrl(p)]
    assert not left, left


def _running_distrl(p: psutil.Process) -> bool:
    """A distrl process still running (``procfs.alive``: one that has exited, or exited and waits for its parent to
    reap it, a zombie whose command line can no longer be read, is not left behind)."""
    try:
        return alive(p.pid) and any("distrl" in part for part in p.cmdline()[:1] + [p.name()])
    except psutil.Error:  # it exited between the two reads
        return False


def _broken_learner(handles):
    raise RuntimeError("this replica cannot build its learner")


def test_a_replica_that_fails_to_start_is_an_error_at_once_and_leaves_nothing():
    """Not after the rendezvous timeout (120 s here): rank 0 watches the replicas while it waits for them."""
    import torch.distributed as dist

    program = plan_run("impala", "CartPole-v1", num_envs=4, unroll_length=3)[4]
    broken = dataclasses.replace(program, make_learner=_broken_learner)
    group_timeout_s = 120.0
    with pytest.raises(RuntimeError, match="exited while starting"):
        LearnerGroup.start(program.make_learner({}), broken, [], 2, CPU, "fp32", 1, group_timeout_s)
    assert not dist.is_initialized()  # the next run in this process can start a group


@pytest.mark.parametrize("system,settings,fragment", [
    ("a2c", {}, "needs a runtime of processes"),
    ("es", {"runtime": "local"}, "no gradient learner to replicate"),
    ("a3c", {"runtime": "local"}, "no gradient learner to replicate"),
])
def test_learners_where_they_cannot_be_replicated_are_one_line(system, settings, fragment):
    with pytest.raises(ConfigError, match=fragment):
        plan_run(system, "CartPole-v1", num_learners=2, **settings)


def test_more_cuda_learners_than_gpus_is_one_line(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a machine with one GPU, as far as the check sees
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ConfigError, match="needs 2 GPUs"):
        plan_run("impala", "CartPole-v1", num_learners=2, device="cuda")
