"""The observation normaliser against numpy's moments of everything it saw; PopArt against its defining
property (the unnormalised outputs do not move when the statistics do) and the moments of its targets."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from distrl.models import ActorCritic, FlatParameters, QNetwork
from distrl.models.normalisers import OBS_CLIP, ObsNormaliser, PopArt


def test_obs_normaliser_holds_the_moments_of_every_valid_observation():
    rng = np.random.default_rng(0)
    norm = ObsNormaliser((3,))
    batches = [rng.normal([1.0, -5.0, 100.0], [0.5, 2.0, 30.0], size=(7, 4, 3)) for _ in range(5)]
    masks = [rng.random((7, 4)) < 0.8 for _ in range(5)]
    for x, m in zip(batches, masks):
        norm.update(torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(m, dtype=torch.float32))
    seen = np.concatenate([x[m] for x, m in zip(batches, masks)]).astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(norm.mean.numpy(), seen.mean(0), rtol=1e-5)
    np.testing.assert_allclose(norm.std.numpy(), seen.std(0), rtol=1e-4)
    out = norm(torch.as_tensor(seen, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(out, np.clip((seen - seen.mean(0)) / seen.std(0), -OBS_CLIP, OBS_CLIP), atol=1e-4)


def test_a_constant_feature_and_a_non_finite_batch_do_not_break_it():
    norm = ObsNormaliser((2,))
    norm.update(torch.tensor([[0.0, 1.0], [0.0, 3.0]]))
    before = (norm.mean.clone(), norm.std.clone(), norm.count.clone())
    norm.update(torch.tensor([[float("nan"), 1.0], [0.0, float("inf")]]))
    assert torch.equal(norm.mean, before[0]) and torch.equal(norm.std, before[1]) and norm.count == before[2]
    out = norm(torch.tensor([[1.0, 2.0]]))
    assert torch.isfinite(out).all() and out[0, 0] == OBS_CLIP  # std floored, the result clipped


def test_summed_shards_give_the_moments_of_the_whole_batch():
    """Two data-parallel learners reduce their moments with a sum: each ends where one learner with both
    halves does."""
    x = torch.randn(10, 3) * 4 + 2
    whole = ObsNormaliser((3,))
    whole.update(x)
    halves = [ObsNormaliser((3,)), ObsNormaliser((3,))]

    def other_rank_sums(sums):  # what an all-reduce returns: this rank's sums plus the other's
        return sums + other

    other = torch.cat([torch.ones(1, dtype=torch.float64) * 5, x[5:].double().sum(0), x[5:].double().square().sum(0)])
    halves[0].update(x[:5], reduce=other_rank_sums)
    torch.testing.assert_close(halves[0].mean, whole.mean)
    torch.testing.assert_close(halves[0].std, whole.std)


def _head_and_popart(seed: int):
    torch.manual_seed(seed)
    head = nn.Linear(4, 1)
    return head, PopArt(decay=0.3)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 1000), scale=st.floats(1e-3, 1e4), shift=st.floats(-1e4, 1e4))
def test_popart_preserves_the_unnormalised_outputs_precisely(seed, scale, shift):
    head, popart = _head_and_popart(seed)
    features = torch.randn(16, 4)
    for _ in range(3):
        before = popart.unnormalise(head(features)).detach().double()
        targets = torch.randn(32) * scale + shift
        popart.update(head, targets)
        after = popart.unnormalise(head(features)).detach().double()
        # float32 arithmetic: exact up to rounding at the scale of the outputs and of the statistics
        tolerance = 1e-5 * (float(before.abs().max()) + float(popart.sigma) + abs(float(popart.mu)) + 1.0)
        torch.testing.assert_close(after, before, rtol=1e-5, atol=tolerance)


def test_popart_moments_are_debiased_moving_averages_of_the_targets():
    head, popart = _head_and_popart(0)
    first = torch.tensor([10.0, 20.0, 30.0, 40.0])
    popart.update(head, first)  # debiased: the first batch's moments exactly, not a step from (0, 1)
    assert abs(float(popart.mu) - 25.0) < 1e-4 and abs(float(popart.sigma) - float(first.std(unbiased=False))) < 1e-4
    second = torch.tensor([-100.0, 100.0])
    popart.update(head, second)
    beta = 0.3
    w = (1 - beta) * beta + beta  # sum of the two weights before normalising
    m1 = ((1 - beta) * beta * 25.0 + beta * 0.0) / w
    m2 = ((1 - beta) * beta * float((first ** 2).mean()) + beta * 10_000.0) / w
    assert abs(float(popart.mu) - m1) < 1e-3 and abs(float(popart.sigma) - (m2 - m1 ** 2) ** 0.5) < 1e-3


def test_popart_ignores_a_batch_without_valid_or_finite_targets():
    head, popart = _head_and_popart(0)
    popart.update(head, torch.tensor([1.0, 3.0]))
    state = {k: v.clone() for k, v in [*popart.state_dict().items(), *head.state_dict().items()]}
    popart.update(head, torch.tensor([5.0, 7.0]), valid=torch.zeros(2))
    popart.update(head, torch.tensor([float("nan"), 7.0]))
    assert all(torch.equal(state[k], v) for k, v in [*popart.state_dict().items(), *head.state_dict().items()])


def test_the_statistics_travel_with_the_flat_weights():
    """An actor loading the learner's flat weights normalises as the learner does (SEED's server and distrl
    eval load the same vector)."""
    learner = ActorCritic((3,), 2, True, (8,), obs_norm=True, value_norm=True)
    flat = FlatParameters(learner)
    learner.obs_norm.update(torch.randn(50, 3) * 7 + 3)
    learner.popart.update(learner.v_head, torch.randn(50) * 30 - 10)
    actor = ActorCritic((3,), 2, True, (8,), obs_norm=True, value_norm=True)
    FlatParameters(actor).load(flat.to_numpy())
    obs = torch.randn(5, 3) * 7 + 3
    torch.testing.assert_close(actor.greedy(obs), learner.greedy(obs))
    torch.testing.assert_close(actor.value(obs), learner.value(obs))


def test_a_q_network_normalises_with_the_statistics_it_was_sent():
    """Ape-X DQN's network (``obs_norm``): an actor loading the learner's flat weights computes the learner's Q
    values, those of the normalised inputs."""
    learner = QNetwork((3,), 4, (8,), obs_norm=True)
    flat = FlatParameters(learner)
    learner.obs_norm.update(torch.randn(200, 3) * 50 + 100)
    actor = QNetwork((3,), 4, (8,), obs_norm=True)
    FlatParameters(actor).load(flat.to_numpy())
    obs = torch.randn(16, 3) * 50 + 100
    torch.testing.assert_close(actor(obs), learner(obs))
    raw = QNetwork((3,), 4, (8,))
    raw.load_state_dict({k: v for k, v in learner.state_dict().items() if not k.startswith("obs_norm")})
    torch.testing.assert_close(learner(obs), raw(learner.obs_norm(obs)))
    assert QNetwork((84, 84, 4), 4, (8,), obs_norm=True).obs_norm is None  # pixels are scaled by the torso
