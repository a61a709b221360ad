import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from distrl.ops import all_finite

FLOATS = arrays(np.float32, st.integers(0, 6), elements=st.floats(width=32, allow_nan=True, allow_infinity=True))


@given(floats=st.lists(FLOATS, max_size=4), ints=st.lists(st.integers(-5, 5), max_size=4))
@settings(max_examples=60, deadline=None)
def test_all_finite_is_numpys_isfinite_over_the_float_tensors(floats, ints):
    """Generated float arrays with NaNs and infinities, beside integer and bool tensors (which cannot hold either):
    the same answer as numpy's ``isfinite`` over the float arrays alone."""
    tensors = [torch.from_numpy(a) for a in floats] + [torch.tensor(ints, dtype=torch.int64), torch.tensor([True])]
    assert all_finite(tensors) == all(bool(np.isfinite(a).all()) for a in floats)
