import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.agents.common.learner_inputs import env_stream_slices


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 6), streams=st.integers(1, 12), parts=st.integers(1, 12))
def test_env_stream_slices_partition_the_streams_and_keep_time_order(T, streams, parts):
    b = {"rewards": torch.arange(T * streams, dtype=torch.float32).view(T, streams),
         "obs": torch.randn(T + 1, streams, 3), "version": torch.arange(streams)}
    if parts > streams:
        with pytest.raises(ValueError, match="must not exceed"):
            env_stream_slices(b, parts)
        return
    cut = env_stream_slices(b, parts)
    assert len(cut) == parts and all(p["version"].numel() >= 1 for p in cut)
    for key in b:
        axis = 0 if key == "version" else 1
        torch.testing.assert_close(torch.cat([p[key] for p in cut], dim=axis), b[key])
    for p in cut:
        assert p["obs"].shape[0] == T + 1 and p["obs"].shape[1] == p["rewards"].shape[1] == p["version"].shape[0]
        np.testing.assert_array_equal(p["rewards"][:, 0].numpy(), b["rewards"][:, int(p["version"][0])].numpy())
