import torch

from distrl.ops import baseline_loss, entropy_loss, policy_gradient_loss


def test_policy_gradient_flows_through_logp_only():
    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    adv = torch.tensor([[2.0, -1.0]], requires_grad=True)
    loss = policy_gradient_loss(logp, adv)
    torch.testing.assert_close(loss, torch.tensor(-(-2.0 + 2.0) / 2))
    loss.backward()
    torch.testing.assert_close(logp.grad, torch.tensor([[-1.0, 0.5]]))
    assert adv.grad is None


def test_baseline_loss_masked():
    v = torch.tensor([[1.0, 5.0]], requires_grad=True)
    t = torch.tensor([[3.0, 0.0]], requires_grad=True)
    loss = baseline_loss(v, t, mask=torch.tensor([[1.0, 0.0]]))
    torch.testing.assert_close(loss, torch.tensor(2.0))
    loss.backward()
    torch.testing.assert_close(v.grad, torch.tensor([[-2.0, 0.0]]))
    assert t.grad is None


def test_entropy_loss_sign():
    assert entropy_loss(torch.tensor([[0.5, 1.5]])) == -1.0
