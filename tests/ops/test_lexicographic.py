"""Lexicographic Q-learning's action choice, against a brute-force reading of its definition (Skalse et al. 2022,
section 4.1)."""

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.ops.lexicographic import lexicographic_values

MASKED = -1e30


def test_by_hand():
    """Row 0: actions 0 and 1 are within 0.05 of the first table's best, and the second table prefers 1; action 2 is
    below them, action 3 illegal. Row 1: only action 3 is acceptable, whatever the second table says of the others."""
    first = torch.tensor([[0.0, -0.02, -0.5, MASKED], [0.1, 0.2, 0.3, 0.4]])
    second = torch.tensor([[0.1, 0.9, 2.0, MASKED], [5.0, 4.0, 3.0, -1.0]])
    values = lexicographic_values(first, second, 0.05, MASKED)
    assert values.argmax(-1).tolist() == [1, 3]
    torch.testing.assert_close(values, torch.tensor([[0.1, 0.9, 0.1 - 1 - 0.5, MASKED],
                                                     [-1 - 1 - 0.3, -1 - 1 - 0.2, -1 - 1 - 0.1, -1.0]]))


rows = st.integers(2, 7).flatmap(lambda a: st.tuples(
    st.lists(st.floats(-2, 2, width=32), min_size=a, max_size=a),
    st.lists(st.floats(-2, 2, width=32), min_size=a, max_size=a),
    st.lists(st.booleans(), min_size=a, max_size=a).filter(any)))


@settings(max_examples=200, deadline=None)
@given(rows, st.floats(0.0, 1.0))
def test_argmax_is_the_second_tables_best_among_the_first_tables_near_best(row, slack):
    first, second, legal = (np.array(x) for x in row)
    f = np.where(legal, first, MASKED).astype(np.float32)
    s = np.where(legal, second, MASKED).astype(np.float32)
    values = lexicographic_values(torch.from_numpy(f)[None], torch.from_numpy(s)[None], slack, MASKED)[0].numpy()
    accepted = legal & (f >= f[legal].max() - np.float32(slack))
    assert s[values.argmax()] == s[accepted].max() and accepted[values.argmax()]
    # every legal action finite and above an illegal one, every accepted one above every other: the order
    # epsilon-greedy's draws and a second-best choice read
    assert np.all(values[legal] > MASKED / 2) and np.all(values[~legal] == MASKED)
    if (legal & ~accepted).any():
        assert values[accepted].min() > values[legal & ~accepted].max()
        rejected = legal & ~accepted  # among them, the first table's order
        assert np.all(np.diff(values[rejected][np.argsort(f[rejected])]) >= 0)
