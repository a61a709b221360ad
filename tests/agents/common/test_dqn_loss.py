"""The DQN loss of Ape-X DQN and GORILA, and Ape-X's initial priorities: plain and in h-space."""

import numpy as np
import pytest
import torch

from distrl.agents.apex_dqn.actor import dqn_priorities
from distrl.agents.common.dqn_loss import dqn_loss, head_deltas, two_head_dqn_loss


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


def h(x, eps):
    """h written out in numpy, independently of ``distrl.ops``."""
    return np.sign(x) * (np.sqrt(np.abs(x) + 1) - 1) + eps * x


def h_inv(y, eps):
    """h's inverse by bisection in numpy (h is increasing), independently of the closed form."""
    lo, hi = -1e6, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if h(mid, eps) < y else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("eps", [0.0, 1e-3])
@pytest.mark.parametrize("double_q,taken", [(True, 7.0), (False, 10.0)])
def test_in_h_space_the_target_goes_through_h_and_back(eps, double_q, taken):
    """The tables now hold h(Q): row 0's target is h(1 + 0.9 h^-1(v)) with v the target net's value of the action
    taken at x' (7 for double Q, the max 10 otherwise); row 1 is terminal, h(2). By hand at eps = 0: h^-1(7) = 63."""
    _, delta = dqn_loss(ONLINE, TARGET, BATCH, torch.ones(2), double_q=double_q, rescale_eps=eps)
    y0 = h(1 + 0.9 * h_inv(taken, eps), eps)
    np.testing.assert_allclose(delta.numpy(), [y0 - 3.0, h(2.0, eps) - 4.0], rtol=1e-5)
    if eps == 0 and double_q:
        assert y0 == pytest.approx(np.sqrt(1 + 0.9 * 63 + 1) - 1)


def test_the_loss_is_huber_weighted_by_importance_weights():
    loss, delta = dqn_loss(ONLINE, TARGET, BATCH, torch.tensor([0.5, 2.0]))
    d = delta.numpy()
    huber = np.where(np.abs(d) <= 1, 0.5 * d ** 2, np.abs(d) - 0.5)
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
    with torch.no_grad():  # and, by hand: |r + d max_a Q(x', a) - Q(x, a)|, through h in h-space
        q = model(torch.from_numpy(out["obs"][:8])).numpy()
        q_next = model(torch.from_numpy(out["next_obs"][:8])).numpy()
    r, d, a = out["reward"][:8], out["discount"][:8], out["action"][:8]
    if eps is None:
        expected = np.abs(r + d * q_next.max(1) - q[np.arange(8), a])
    else:
        expected = np.abs([h(r[i] + d[i] * h_inv(q_next[i].max(), eps), eps) - q[i, a[i]] for i in range(8)])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    if eps is not None:  # and the scale is h's: the raw errors of rewards of ~50 are far larger
        assert got.max() < 0.5 * raw.max()


class TwoHeads(torch.nn.Module):
    """A two-head 'network' of fixed rows per one-number observation, acting lexicographically as QNetwork's does."""

    def __init__(self, first: dict, second: dict, slack: float = 0.1):
        super().__init__()
        self.first, self.second, self.slack, self.num_heads = table(first), table(second), slack, 2

    def heads(self, obs):
        return torch.stack([self.first(obs), self.second(obs)], dim=1)

    def forward(self, obs):
        from distrl.ops.lexicographic import lexicographic_values

        return lexicographic_values(self.first(obs), self.second(obs), self.slack, -1e30)


def test_two_heads_by_hand():
    """At x' = 1 the online first head accepts action 0 alone (0.5 against -1.0, slack 0.1), so both heads' targets
    take the target network's values of action 0 (7 and 20) though the second head prefers action 1 there. Row 0 was
    played against the league: its second head does not learn (no loss, no priority); row 1 against a fixed player:
    both learn, and its priority is the larger error."""
    online = TwoHeads({0.0: [0.0, 0.0], 1.0: [0.5, -1.0]}, {0.0: [1.0, 3.0], 1.0: [2.0, 9.0]})
    target = TwoHeads({0.0: [5.0, 6.0], 1.0: [7.0, 10.0]}, {0.0: [50.0, 60.0], 1.0: [20.0, 30.0]})
    batch = {"obs": torch.tensor([[0.0], [0.0]]), "action": torch.tensor([1, 0]), "reward": torch.tensor([1.0, 2.0]),
             "discount": torch.tensor([0.9, 0.5]), "next_obs": torch.tensor([[1.0], [1.0]]),
             "versus_fixed": torch.tensor([False, True])}
    delta, learns = head_deltas(online, target, batch)
    np.testing.assert_allclose(delta.numpy(), [[7.3 - 0.0, 19.0 - 3.0], [5.5 - 0.0, 12.0 - 1.0]], rtol=1e-6)  # y - Q
    assert learns.tolist() == [[1.0, 0.0], [1.0, 1.0]]
    loss, priority = two_head_dqn_loss(online, target, batch, torch.ones(2))
    np.testing.assert_allclose(priority.numpy(), [7.3, 11.0], rtol=1e-6)
    assert float(loss) == pytest.approx(((7.3 - 0.5) + (5.5 - 0.5) + (11.0 - 0.5)) / 2)


def test_games_against_the_league_leave_the_second_head_alone():
    """Transitions none of which was against a fixed player give the second head's own parameters no gradient, those
    all against fixed players teach both heads; the actor's priorities with its copy as both networks are the
    learner's."""
    from distrl.models import QNetwork

    torch.manual_seed(0)
    model = QNetwork((6,), 3, hidden=(16,), dueling=True, action_mask_size=3, fixed_head_slack=0.05)
    rng = np.random.default_rng(0)
    obs = np.concatenate([rng.normal(size=(12, 3)), np.ones((12, 3))], 1).astype(np.float32)
    out = {"obs": obs, "next_obs": obs[::-1].copy(), "action": rng.integers(0, 3, 12),
           "reward": rng.normal(size=12).astype(np.float32), "discount": np.full(12, 0.9, np.float32),
           "versus_fixed": np.zeros(12, bool)}
    for fixed in (False, True):
        out["versus_fixed"][:] = fixed
        model.zero_grad()
        loss, _ = two_head_dqn_loss(model, model, {k: torch.from_numpy(v) for k, v in out.items()}, torch.ones(12))
        loss.backward()
        second = model.advantage.weight.grad[3:].abs().max(), model.value.weight.grad[1].abs().max()
        assert (float(max(second)) > 0.0) == fixed
        assert float(model.advantage.weight.grad[:3].abs().max()) > 0.0
    out["versus_fixed"] = np.arange(12) % 2 == 0  # of both kinds
    with torch.no_grad():
        _, learner = two_head_dqn_loss(model, model, {k: torch.from_numpy(v) for k, v in out.items()}, torch.ones(12))
        np.testing.assert_allclose(dqn_priorities(model, out, 12), learner.numpy(), rtol=1e-6)


def test_the_first_heads_target_is_the_move_the_policy_makes_not_its_own_best():
    """At x' the first head prefers action 0 (0.5 against 0.48) but accepts both within the slack 0.1, and the second
    head takes action 1: both heads' targets are action 1's values in the target network (8 and 30), the first head
    valuing the policy that acts (``dqn_loss``'s docstring: where this departs from Skalse et al.)."""
    online = TwoHeads({0.0: [0.0, 0.0], 1.0: [0.5, 0.48]}, {0.0: [1.0, 3.0], 1.0: [2.0, 9.0]})
    target = TwoHeads({0.0: [5.0, 6.0], 1.0: [7.0, 8.0]}, {0.0: [50.0, 60.0], 1.0: [20.0, 30.0]})
    batch = {"obs": torch.tensor([[0.0]]), "action": torch.tensor([0]), "reward": torch.tensor([1.0]),
             "discount": torch.tensor([0.5]), "next_obs": torch.tensor([[1.0]]), "versus_fixed": torch.tensor([True])}
    delta, _ = head_deltas(online, target, batch)
    np.testing.assert_allclose(delta.numpy(), [[1 + 0.5 * 8.0 - 0.0, 1 + 0.5 * 30.0 - 1.0]], rtol=1e-6)


def expectile_by_definition(y: np.ndarray, tau: float) -> float:
    """The tau-expectile of samples ``y``: the e at which tau * sum (y - e)+ = (1 - tau) * sum (e - y)+ (Newey &
    Powell 1987), by bisection (the difference falls as e rises)."""
    low, high = float(y.min()), float(y.max())
    for _ in range(100):
        e = (low + high) / 2
        if tau * np.clip(y - e, 0, None).sum() > (1 - tau) * np.clip(e - y, 0, None).sum():
            low = e
        else:
            high = e
    return (low + high) / 2


def test_the_expectile_weights_by_hand():
    """tau 0.1: a first-head error above 0 (Q under its target) weighs 2 * 0.1, one below 2 * 0.9; the second head's
    weigh 1, and a head that does not learn from a transition 0 whatever its sign; no tau: the learning mask."""
    from distrl.agents.common.dqn_loss import head_weights

    delta = torch.tensor([[0.5, -2.0], [-0.5, 3.0], [0.0, 1.0]])
    learns = torch.tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
    np.testing.assert_allclose(head_weights(delta, learns, 0.1).numpy(), [[0.2, 0.0], [1.8, 1.0], [0.2, 1.0]],
                               rtol=1e-6)
    assert head_weights(delta, learns).tolist() == learns.tolist()
    np.testing.assert_allclose(head_weights(delta, learns, 0.5).numpy(), learns.numpy())


@pytest.mark.parametrize("targets, tau", [
    ([-1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.01),  # a move one reply in six loses: about -0.95, far below 0
    ([1.0] * 9 + [0.0], 0.01),  # a move that wins nine games in ten against random replies and draws the tenth: 0.083
    ([-0.4, 0.1, 0.3, 0.35], 0.2),
    ([0.2, 0.2, -0.3], 0.5),  # the mean
])
def test_the_first_head_learns_the_expectile_of_its_targets(targets, tau):
    """A first head that is one learnable number, its targets the rewards of terminal transitions (one state, one
    move): the value that minimises the loss is the tau-expectile of the targets by its definition (the Huber loss is
    quadratic where all errors are under 1), and with tau 0.01 a move one reply of which loses sits near the loss."""
    y = np.asarray(targets, np.float32)
    n = len(y)
    batch = {"obs": torch.zeros(n, 1), "action": torch.zeros(n, dtype=torch.long), "reward": torch.from_numpy(y),
             "discount": torch.zeros(n), "next_obs": torch.zeros(n, 1),
             "versus_fixed": torch.zeros(n, dtype=torch.bool)}
    grid = np.linspace(-0.999, 0.999, 1999)
    losses = [float(two_head_dqn_loss(TwoHeads({0.0: [float(q)]}, {0.0: [0.0]}), TwoHeads({0.0: [0.0]}, {0.0: [0.0]}),
                                      batch, torch.ones(n), expectile=tau)[0]) for q in grid]
    best = grid[int(np.argmin(losses))]
    assert best == pytest.approx(expectile_by_definition(y, tau), abs=1e-3)
    if targets[0] == -1.0:
        assert best < -0.9


def test_an_actors_initial_priority_with_an_expectile_is_the_learners():
    """The actor's priorities weigh the first head's errors as the learner's loss does (``first_head_expectile``)."""
    from distrl.models import QNetwork

    torch.manual_seed(1)
    model = QNetwork((6,), 3, hidden=(16,), dueling=True, action_mask_size=3, fixed_head_slack=0.3)
    rng = np.random.default_rng(1)
    obs = np.concatenate([rng.normal(size=(12, 3)), np.ones((12, 3))], 1).astype(np.float32)
    out = {"obs": obs, "next_obs": obs[::-1].copy(), "action": rng.integers(0, 3, 12),
           "reward": rng.choice([-1.0, 0.0, 1.0], 12).astype(np.float32), "discount": np.full(12, 1.0, np.float32),
           "versus_fixed": np.arange(12) % 3 == 0}
    with torch.no_grad():
        _, learner = two_head_dqn_loss(model, model, {k: torch.from_numpy(v) for k, v in out.items()}, torch.ones(12),
                                       expectile=0.01)
        plain = dqn_priorities(model, out, 12)
        got = dqn_priorities(model, out, 12, expectile=0.01)
    np.testing.assert_allclose(got, learner.numpy(), rtol=1e-6)
    assert not np.allclose(got, plain)  # the weights change them
