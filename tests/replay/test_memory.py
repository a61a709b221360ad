import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.core.types import ArraySpec
from distrl.errors import ConfigError
from distrl.replay import PartitionedReplay, RingStorage, memory
from distrl.replay.sum_tree import SumTree

SPEC = {"obs": ArraySpec((4,), "float32"), "reward": ArraySpec((), "float32")}  # 20 bytes per item


@settings(max_examples=60, deadline=None)
@given(capacity=st.integers(1, 10**12), available=st.integers(0, 10**6))
def test_a_ring_is_refused_exactly_when_it_would_not_fit(capacity, available):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory, "available_bytes", lambda: available)
        if capacity * 20 > available:
            with pytest.raises(ConfigError, match="GiB available"):
                RingStorage(SPEC, capacity)
        else:
            assert RingStorage(SPEC, capacity).arrays["obs"].shape == (capacity, 4)


def test_every_replay_allocation_is_checked(monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    with pytest.raises(ConfigError, match="priority tree over 1,000"):
        SumTree(1000)  # 2 x 1024 float64 nodes
    with pytest.raises(ConfigError, match="2 partitions x 100 items"):
        PartitionedReplay(SPEC, partitions=2, capacity=100, window=10)
    monkeypatch.setattr(memory, "available_bytes", lambda: None)  # unknown: nothing refused
    assert SumTree(1000).size == 1024


def test_the_real_machine_refuses_a_replay_beyond_its_memory():
    available = memory.available_bytes()
    assert available is not None and available > 0
    with pytest.raises(ConfigError):
        RingStorage(SPEC, int(available // 20) * 4)
    assert np.isfinite(available)


def test_an_oversized_replay_on_the_command_line_is_one_line_and_writes_nothing(tmp_path, cli):
    run = tmp_path / "r"
    r = cli("train", "qt-opt", "--env", "Pendulum-v1", "--set", "replay_size=2000000000", "--total-steps", "100",
            "--run-dir", str(run))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "GiB" in r.stderr, r.stderr
    assert not run.exists()
