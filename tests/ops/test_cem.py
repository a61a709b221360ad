import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.ops import cem_maximize, clipped_double_q_target


def quadratic(centres: torch.Tensor):
    """Q(s_b, a) = -||a - c_b||^2: its argmax in the box is c_b clipped into the box."""
    return lambda actions: -((actions - centres.unsqueeze(1)) ** 2).sum(-1)


def test_finds_the_maximum_of_a_quadratic_per_state():
    g = torch.Generator().manual_seed(0)
    low, high = torch.tensor([-2.0, -1.0]), torch.tensor([2.0, 3.0])
    centres = torch.tensor([[1.5, 0.0], [-1.0, 2.5], [0.2, -0.5], [5.0, 9.0]])  # the last lies outside the box
    best, score = cem_maximize(quadratic(centres), low, high, batch=4, iterations=8, samples=64, elites=6, generator=g)
    expected = torch.maximum(torch.minimum(centres, high), low)
    np.testing.assert_allclose(best.numpy(), expected.numpy(), atol=0.05)
    np.testing.assert_allclose(score.numpy(), quadratic(centres)(best.unsqueeze(1))[:, 0].numpy(), rtol=1e-6)


def test_paper_settings_come_close_to_a_grid_of_as_many_points():
    """2 iterations x 64 samples, 6 elites (the paper's) against the best of a 128-point grid over a 1-d box:
    within 0.005 of it on every state (an action within ~0.07 of the argmax in a box 2 wide)."""
    g = torch.Generator().manual_seed(1)
    centres = torch.linspace(-0.9, 0.9, 32).unsqueeze(1)
    low, high = torch.tensor([-1.0]), torch.tensor([1.0])
    best, score = cem_maximize(quadratic(centres), low, high, batch=32, generator=g)
    grid = torch.linspace(-1, 1, 128).view(1, 128, 1).expand(32, 128, 1)
    grid_best = quadratic(centres)(grid).max(1).values
    assert (score >= grid_best - 5e-3).all()


def test_one_sample_one_iteration_is_the_clipped_gaussian_draw():
    low, high = torch.tensor([0.0, -4.0]), torch.tensor([2.0, 4.0])
    noise = torch.randn((3, 1, 2), generator=torch.Generator().manual_seed(7))
    by_hand = torch.clamp(torch.tensor([1.0, 0.0]) + torch.tensor([1.0, 4.0]) * noise[:, 0], min=low, max=high)
    best, _ = cem_maximize(lambda a: a.sum(-1), low, high, batch=3, iterations=1, samples=1, elites=1,
                           generator=torch.Generator().manual_seed(7))
    np.testing.assert_allclose(best.numpy(), by_hand.numpy(), rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 6), dims=st.integers(1, 4), iterations=st.integers(1, 4), samples=st.integers(1, 20),
       seed=st.integers(0, 2**31 - 1), data=st.data())
def test_actions_stay_in_the_box_and_more_iterations_never_do_worse(batch, dims, iterations, samples, seed, data):
    elites = data.draw(st.integers(1, samples))
    rng = np.random.default_rng(seed)
    low = torch.tensor(rng.uniform(-3, 0, dims), dtype=torch.float32)
    high = low + torch.tensor(rng.uniform(0, 3, dims), dtype=torch.float32)
    w = torch.tensor(rng.normal(size=(batch, dims)), dtype=torch.float32)
    score = lambda a: (a * w.unsqueeze(1)).sum(-1) - (a ** 2).sum(-1)  # noqa: E731
    runs = [cem_maximize(score, low, high, batch, k, samples, elites, torch.Generator().manual_seed(seed))
            for k in (iterations, iterations + 1)]
    for best, _ in runs:
        assert bool(((best >= low) & (best <= high)).all())
    assert bool((runs[1][1] >= runs[0][1]).all())  # the same draws, then one more iteration


@pytest.mark.parametrize("kwargs", [dict(iterations=0), dict(samples=0), dict(elites=0), dict(samples=4, elites=5)])
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        cem_maximize(lambda a: a.sum(-1), torch.zeros(1), torch.ones(1), batch=2, **kwargs)


def test_a_box_with_high_below_low_is_refused():
    with pytest.raises(ValueError, match="high must be >= low"):
        cem_maximize(lambda a: a.sum(-1), torch.ones(1), torch.zeros(1), batch=2)


def test_clipped_double_q_target_by_hand():
    y = clipped_double_q_target(torch.tensor([1.0, 0.0, -1.0]), torch.tensor([0.9, 0.0, 0.5]),
                                torch.tensor([2.0, 5.0, -4.0]), torch.tensor([3.0, 1.0, -2.0]))
    np.testing.assert_allclose(y.numpy(), [1.0 + 0.9 * 2.0, 0.0, -1.0 + 0.5 * -4.0])


def test_clipped_double_q_target_checks_shapes():
    with pytest.raises(ValueError, match="q2_t"):
        clipped_double_q_target(torch.zeros(3), torch.zeros(3), torch.zeros(3), torch.zeros(2))


def test_fixed_noise_is_shared_by_every_problem_and_checked_for_shape():
    """With fixed draws, each problem's answer is the one it gets alone (a greedy policy independent of its batch)."""
    low, high = torch.full((2,), -1.0), torch.full((2,), 1.0)
    targets = torch.tensor([[0.3, -0.2], [-0.7, 0.5], [0.1, 0.9]])
    noise = [torch.randn(1, 16, 2, generator=torch.Generator().manual_seed(i)) for i in range(3)]

    def score_for(t):
        return lambda a: -((a - t.unsqueeze(1)) ** 2).sum(-1)

    together, _ = cem_maximize(score_for(targets), low, high, 3, iterations=3, samples=16, elites=4, noise=noise)
    for i in range(3):
        alone, _ = cem_maximize(score_for(targets[i:i + 1]), low, high, 1, iterations=3, samples=16, elites=4,
                                noise=noise)
        torch.testing.assert_close(together[i:i + 1], alone)
    with pytest.raises(ValueError, match="noise must be 3 tensors of shape"):
        cem_maximize(score_for(targets), low, high, 3, iterations=3, samples=16, elites=4, noise=noise[:2])
