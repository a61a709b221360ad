import numpy as np
import pytest
import torch
from torch import nn

from distrl.models import ActorCritic, LSTMCore, NatureCNN, QNetwork


def test_discrete_actor_critic_shapes_and_logp():
    m = ActorCritic((4,), 3, discrete=True)
    obs = torch.randn(10, 4)
    a, logp = m.act(obs)
    assert a.shape == (10,) and logp.shape == (10,)
    logp2, ent, v = m.evaluate(obs, a)
    torch.testing.assert_close(logp, logp2)
    assert v.shape == (10,) and (ent > 0).all()


def test_gumbel_sampling_matches_policy_probabilities():
    torch.manual_seed(0)
    m = ActorCritic((1,), 3, discrete=True)
    with torch.no_grad():
        m.pi_head.bias.copy_(torch.log(torch.tensor([0.2, 0.3, 0.5])))
        m.pi_head.weight.zero_()
    a, _ = m.act(torch.zeros(20000, 1))
    freq = torch.bincount(a, minlength=3).float() / 20000
    torch.testing.assert_close(freq, torch.tensor([0.2, 0.3, 0.5]), atol=0.015, rtol=0)


def test_gaussian_actor_critic():
    m = ActorCritic((3,), 2, discrete=False)
    a, logp = m.act(torch.randn(5, 3))
    assert a.shape == (5, 2)
    logp2, ent, v = m.evaluate(torch.randn(5, 3), a)
    assert logp2.shape == (5,) and ent.shape == (5,)


def test_evaluate_unroll_matches_flat_evaluate():
    m = ActorCritic((4,), 2, discrete=True)
    obs = torch.randn(6, 3, 4)
    actions = torch.randint(0, 2, (5, 3))
    logp, ent, v, boot = m.evaluate_unroll(obs, actions)
    flat_logp, _, flat_v = m.evaluate(obs[:-1].reshape(15, 4), actions.reshape(15))
    torch.testing.assert_close(logp, flat_logp.view(5, 3))
    torch.testing.assert_close(v, flat_v.view(5, 3))
    torch.testing.assert_close(boot, m.value(obs[-1]))


def test_nature_cnn_on_uint8_frames():
    net = NatureCNN(4)
    out = net(torch.randint(0, 255, (2, 4, 84, 84), dtype=torch.uint8))
    assert out.shape == (2, 512)
    m = ActorCritic((4, 84, 84), 6, discrete=True)
    assert m.shared


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nature_cnn_starts_keeping_the_frames_scale_and_their_differences(seed):
    """He et al. 2015: a ReLU layer whose weights have variance 2 / fan_in keeps the second moment of its input;
    orthogonal weights with gain sqrt(2) have that variance. So the torso's output at init has about the mean
    square of its [0, 1] input, and two frames' difference reaches the heads at about its own size. (PyTorch's
    default init passes on ~0.1% of the mean square and ~2% of the difference: the torso Pong never trained.)"""
    torch.manual_seed(seed)
    net = NatureCNN(4)
    frames = torch.randint(0, 256, (64, 4, 84, 84), dtype=torch.uint8)
    scaled = frames.float() / 255.0
    with torch.no_grad():
        out = net(frames)
        diff = net(frames[:32]) - net(frames[32:])
    assert 0.25 < out.pow(2).mean() / scaled.pow(2).mean() < 4.0
    assert diff.pow(2).mean().sqrt() / (scaled[:32] - scaled[32:]).pow(2).mean().sqrt() > 0.25
    layers = [m for m in net.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    assert all(float(m.bias.detach().abs().max()) == 0.0 for m in layers)


def test_dueling_q_network_mean_zero_advantage():
    q = QNetwork((4,), 3, dueling=True)
    obs = torch.randn(7, 4)
    out = q(obs)
    feat = q.torso(obs)
    torch.testing.assert_close(out.mean(-1), q.value(feat).squeeze(-1), atol=1e-6, rtol=0)


def test_lstm_core_resets_state_at_episode_start():
    core = LSTMCore(5, 8)
    x = torch.randn(4, 2, 5)
    state = (torch.randn(2, 8), torch.randn(2, 8))
    first = torch.tensor([[1, 0], [0, 0], [0, 0], [0, 0]])
    out, _ = core(x, state, first)
    out_zero, _ = core(x[:, :1], core.initial_state(1), torch.zeros(4, 1))
    torch.testing.assert_close(out[:, 0], out_zero[:, 0])  # env 0 was reset: the old state did not leak in
    out_b, _ = core(x[:, 1:], (state[0][1:], state[1][1:]), torch.zeros(4, 1))
    torch.testing.assert_close(out[:, 1], out_b[:, 0])


@pytest.mark.parametrize("nvec", [(3, 2, 2), (2,), (5, 1, 4)])
def test_multi_categorical_matches_independent_categoricals(nvec):
    """Several categorical actions: the log-probability and entropy are the sums over torch's own Categorical of
    each action's logits; greedy is each one's argmax; sampling never draws a padded option and follows the
    probabilities (Gumbel-max)."""
    from torch.distributions import Categorical

    torch.manual_seed(0)
    model = ActorCritic((4,), sum(nvec), True, (16,), nvec=nvec)
    with torch.no_grad():
        model.pi_head.weight.normal_()  # logits far from uniform
    obs = torch.randn(6, 4)
    actions, logp = model.act(obs)
    assert actions.shape == (6, len(nvec)) and (actions < torch.tensor(nvec)).all() and (actions >= 0).all()
    logits = model._heads(obs, with_value=False)[0].split(list(nvec), dim=-1)
    dists = [Categorical(logits=part) for part in logits]
    want_logp = sum(d.log_prob(actions[:, i]) for i, d in enumerate(dists))
    torch.testing.assert_close(logp, want_logp)
    got_logp, entropy, _ = model.evaluate(obs, actions)
    torch.testing.assert_close(got_logp, want_logp)
    torch.testing.assert_close(entropy, sum(d.entropy() for d in dists))
    assert torch.equal(model.greedy(obs), torch.stack([part.argmax(-1) for part in logits], dim=-1))
    many = model.act(obs[:1].expand(20_000, 4))[0]
    for i, d in enumerate(dists):
        freq = torch.bincount(many[:, i], minlength=nvec[i]).float() / len(many)
        torch.testing.assert_close(freq, d.probs[0], atol=0.02, rtol=0)
    got_logp.sum().backward()  # finite gradients, padding included
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_qt_opts_greedy_action_for_an_observation_does_not_depend_on_the_rest_of_its_batch():
    torch.manual_seed(0)
    from distrl.models.continuous_q import ContinuousQ

    q = ContinuousQ(3, 2, np.full(2, -2.0), np.full(2, 2.0), hidden=(16,), cem_samples=8, cem_elites=2)
    obs = torch.randn(5, 3)
    batch = q.greedy(obs)
    for i in range(5):
        torch.testing.assert_close(batch[i:i + 1], q.greedy(obs[i:i + 1]))


def test_a_one_head_q_network_is_the_q_network_it_was():
    """One head (no ``fixed_head_slack``): the parameters a saved run holds and the values they give, unchanged."""
    torch.manual_seed(0)
    q = QNetwork((4,), 3, dueling=True, action_mask_size=3)
    assert {k: tuple(v.shape) for k, v in q.state_dict().items() if "torso" not in k} == {
        "advantage.weight": (3, 64), "advantage.bias": (3,), "value.weight": (1, 64), "value.bias": (1,)}
    obs = torch.tensor([[0.3, 1.0, 0.0, 1.0], [-1.0, 1.0, 1.0, 1.0]])  # the last three: the legal moves
    feat = q.torso(obs)
    adv = q.advantage(feat)
    expected = torch.where(obs[:, 1:] > 0.5, q.value(feat) + adv - adv.mean(-1, keepdim=True), -1e30)
    torch.testing.assert_close(q(obs), expected)


def test_two_heads_act_lexicographically_on_legal_moves():
    """``fixed_head_slack``: ``heads`` gives both tables (illegal moves masked in each), ``forward`` the lexicographic
    acting values over them (``ops/lexicographic.py``) and ``greedy`` their argmax."""
    from distrl.models.q_networks import ILLEGAL_Q
    from distrl.ops.lexicographic import lexicographic_values

    torch.manual_seed(1)
    q = QNetwork((5,), 3, hidden=(16,), dueling=True, action_mask_size=3, fixed_head_slack=0.1)
    obs = torch.cat([torch.randn(64, 2), (torch.rand(64, 3) < 0.6).float()], dim=1)
    obs[:, 2] = 1.0  # one legal move at least
    heads = q.heads(obs)
    assert heads.shape == (64, 2, 3)
    assert torch.all((heads == ILLEGAL_Q) == (obs[:, None, 2:] < 0.5))
    torch.testing.assert_close(q(obs), lexicographic_values(heads[:, 0], heads[:, 1], 0.1, ILLEGAL_Q))
    assert torch.all(obs[torch.arange(64), 2 + q.greedy(obs)] == 1.0)
