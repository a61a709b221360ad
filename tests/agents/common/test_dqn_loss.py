"""The DQN loss of Ape-X DQN and GORILA, and Ape-X's initial priorities: plain and in h-space."""

import numpy as np
import pytest
import torch

from distrl.agents.apex_dqn.actor import dqn_priorities
from distrl.agents.common.dqn_loss import dqn_loss


def table(rows: dict[float, list[float]]):
    """A 'network' that maps a one-number observation to a fixed row of Q values."""
    def q(obs: torch.Tensor) -> torch.Tensor:
        return torch.tensor([rows[float(o)] for o in obs[:, 0]], dtype=torch.float32)
    return q


BATCH = {"obs": torch.tensor([[0.0], [1.0]]), "action": torch.tensor([1, 0]), "reward": torch.tensor([1.0, 2.0]),
         "discount": torch.tensor([0.9, 0.0]), "next_obs": torch.tensor([[1.0], [0.0]])}
ONLINE = table({0.0: [2.0, 3.0], 1.0: [4.0, 1.0]})
TARGET = table({0.0: [5.0, 6.0], 1.0: [7.0, 10.0]})


@pytest.mark.parametrize("double_q,expected_y0", [(True, 1 + 0.9 * 7.0), (False, 1 + 0.9 * 10.0)])
def test_targets_by_hand(double_q, expected_y0):
    """Row 0: the online net picks action 0 at x' (4 > 1), the target net values it 7 (its max is 10); row 1 is
    terminal: y = r."""
    _, delta = dqn_loss(ONLINE, TARGET, BATCH, torch.ones(2), double_q=double_q)
    np.testing.assert_allclose(delta.numpy(), [expected_y0 - 3.0, 2.0 - 4.0], rtol=1e-6)


def test_in_h_space_the_target_goes_through_h_and_back():
    """The tables now hold h(Q): row 0's target is h(1 + 0.9 h^-1(7)), by hand with eps = 0, h^-1(7) = 63."""
    _, delta = dqn_loss(ONLINE, TARGET, BATCH, torch.ones(2), rescale_eps=0.0)
    y0 = np.sqrt(1 + 0.9 * 63 + 1) - 1
    np.testing.assert_allclose(delta.numpy(), [y0 - 3.0, (np.sqrt(3.0) - 1) - 4.0], rtol=1e-6)


def test_the_loss_is_huber_weighted_by_importance_weights():
    loss, delta = dqn_loss(ONLINE, TARGET, BATCH, torch.tensor([0.5, 2.0]))
    huber = np.where(np.abs(delta) <= 1, 0.5 * delta.numpy() ** 2, np.abs(delta.numpy()) - 0.5)
    assert float(loss) == pytest.approx(float(np.mean([0.5, 2.0] * huber)))


@pytest.mark.parametrize("eps", [None, 1e-3])
def test_an_actors_initial_priority_is_the_learners_td_error_for_its_copy(eps):
    """With the actor's copy as both online and target network, the learner's |delta| is the actor's priority,
    in either space (a mismatch would rank fresh transitions on another scale than replayed ones)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    rng = np.random.default_rng(0)
    out = {"obs": rng.normal(size=(10, 3)).astype(np.float32), "next_obs": rng.normal(size=(10, 3)).astype(np.float32),
           "action": rng.integers(0, 2, 10), "reward": rng.normal(size=10).astype(np.float32) * 50,
           "discount": np.where(rng.random(10) < 0.2, 0.0, 0.99 ** 3).astype(np.float32)}
    with torch.no_grad():
        got = dqn_priorities(model, out, 8, rescale_eps=eps)
        _, delta = dqn_loss(model, model, {k: torch.from_numpy(v[:8]) for k, v in out.items()}, torch.ones(8),
                            rescale_eps=eps)
        raw = dqn_priorities(model, out, 8)
    np.testing.assert_allclose(got, delta.abs().numpy(), rtol=1e-5, atol=1e-6)
    if eps is not None:  # and the scale is h's: the raw errors of rewards of ~50 are far larger
        assert got.max() < 0.5 * raw.max()
