import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.agents.a2c.learner import advantages_and_returns
from distrl.agents.appo.config import APPOConfig
from distrl.agents.appo.learner import APPOLearner
from distrl.agents.common.learner_inputs import env_stream_slices
from distrl.agents.impala.config import ImpalaConfig
from distrl.agents.impala.learner import ImpalaLearner
from distrl.agents.ppo.config import PPOConfig
from distrl.envs import env_spec
from distrl.models import ActorCritic


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


# A truncated episode and the env's reset step after it, through the learners' own wiring (``discounts_and_masks``
# into V-trace's and GAE's inputs), against numbers worked by hand from the papers: the two episodes are apart, the
# truncated one bootstraps from V(its final observation) (next-step autoreset puts it at ``obs[t+1]``, the reset
# step's), and the reset step is no transition.
#
# One env, T = 4, gamma 0.9, on-policy (rho = c = 1), V(x_t) = [10, 20, 30, 40], V(x_4) = 50, r = [1, 2, 0, 4]; row 1
# is truncated, row 2 is the reset step (valid 0). By hand:
#   v_3 = 40 + (4 + 0.9 * 50 - 40) = 49;  v_2 = V(x_2) = 30 (no transition);  v_1 = 20 + (2 + 0.9 * 30 - 20) = 29
#   (the trace stops at the truncation: nothing flows back from the next episode);
#   v_0 = 10 + (1 + 0.9 * 20 - 10) + 0.9 * (v_1 - 20) = 27.1.
# IMPALA's policy-gradient advantages r_s + gamma v_{s+1} - V(x_s) (Espeholt et al. 2018, section 4.2): [17.1, 9, 0, 9]
# (the reset step's 0); GAE with lambda = 1 (Schulman et al. 2016, eq. 16): the same on the real steps.

VALUES, BOOTSTRAP = torch.tensor([[10.0], [20.0], [30.0], [40.0]]), torch.tensor([50.0])
BATCH = {"rewards": torch.tensor([[1.0], [2.0], [0.0], [4.0]]),
         "terminated": torch.tensor([[False], [False], [False], [False]]),
         "truncated": torch.tensor([[False], [True], [False], [False]]),
         "valid": torch.tensor([[True], [True], [False], [True]]),
         "behaviour_logp": torch.full((4, 1), -0.5)}
TARGETS, ADVANTAGES = [27.1, 29.0, 30.0, 49.0], [17.1, 9.0, 0.0, 9.0]


@pytest.mark.parametrize("learner,config", [(ImpalaLearner, ImpalaConfig), (APPOLearner, APPOConfig)])
def test_vtrace_inputs_keep_the_two_episodes_apart(learner, config):
    cfg = config(gamma=0.9, vtrace_lambda=1.0)
    model = ActorCritic.for_env(env_spec("CartPole-v1"), (8,), False, False, 0.99)
    vt, advantages, valid = learner(cfg, model)._vtrace(BATCH, BATCH["behaviour_logp"], VALUES, BOOTSTRAP)
    np.testing.assert_allclose(vt.vs[:, 0].numpy(), TARGETS, rtol=1e-6)
    np.testing.assert_allclose(advantages[:, 0].numpy(), ADVANTAGES, rtol=1e-6)  # APPO's: q_advantages * valid
    assert valid[:, 0].tolist() == [1.0, 1.0, 0.0, 1.0]


def test_gae_inputs_keep_the_two_episodes_apart():
    """A2C's and PPO's advantages (lambda 1 here), and their value targets, on the same case."""
    cfg = PPOConfig(gamma=0.9, gae_lambda=1.0)
    adv, returns, valid = advantages_and_returns(BATCH, VALUES, BOOTSTRAP, cfg)
    real = valid[:, 0].bool().numpy()
    np.testing.assert_allclose(adv[:, 0].numpy()[real], np.array(ADVANTAGES)[real], rtol=1e-6)
    np.testing.assert_allclose(returns[:, 0].numpy()[real], np.array(TARGETS)[real], rtol=1e-6)
