"""The sharded parameter server: versions, staleness drops, shards covering the model exactly."""

import numpy as np
import torch

from distrl.agents.common.shared_optim import SharedRMSprop
from distrl.runtime.services.param_server import SharedShards, shard_indices


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


def grads_on(local):
    local.zero_grad()
    local(torch.ones(2, 3)).sum().backward()


def test_shards_hold_exactly_the_model():
    for n_tensors, n_shards in ((4, 2), (4, 3), (4, 9), (1, 1)):
        shards = shard_indices(n_tensors, n_shards)
        flat = sorted(i for s in shards for i in s)
        assert flat == list(range(n_tensors)) and all(shards)
    server = SharedShards(model(), lambda p: SharedRMSprop(p, lr=0.1), num_shards=2, max_staleness=5)
    covered = [p for s, opt in zip(server.shards, server.optimizers) for g in opt.param_groups for p in g["params"]]
    assert sorted(map(id, covered)) == sorted(map(id, server.model.parameters()))


def test_versions_advance_once_per_applied_gradient_and_stale_ones_are_dropped():
    server = SharedShards(model(), lambda p: SharedRMSprop(p, lr=0.1), num_shards=2, max_staleness=2)
    local = model()
    old = server.pull(local)
    grads_on(local)
    before = [p.detach().clone() for p in server.model.parameters()]
    applied, dropped, staleness = server.push(local, old)
    assert (applied, dropped, staleness) == (2, 0, 0.0)
    assert server.versions.tolist() == [1, 1]
    assert all(not torch.equal(b, p) for b, p in zip(before, server.model.parameters()))
    for _ in range(2):  # two more fresh updates: versions 3
        server.push(local, server.pull(local))
    assert server.versions.tolist() == [3, 3]
    frozen = [p.detach().clone() for p in server.model.parameters()]
    applied, dropped, staleness = server.push(local, old)  # computed from version 0: 3 behind > K = 2
    assert (applied, dropped, staleness) == (0, 2, 3.0)
    assert server.versions.tolist() == [3, 3] and server.dropped.tolist() == [1, 1]
    assert all(torch.equal(f, p) for f, p in zip(frozen, server.model.parameters()))


def test_bytes_count_the_weights_read_and_the_shards_written():
    server = SharedShards(model(), lambda p: SharedRMSprop(p, lr=0.1), num_shards=2, max_staleness=2)
    total = sum(p.numel() * 4 for p in server.model.parameters())  # float32
    local = model()
    old = server.pull(local)
    assert server.bytes == total
    grads_on(local)
    server.push(local, old)  # both shards written
    assert server.bytes == 2 * total
    for _ in range(3):
        server.push(local, server.pull(local))
    before = server.bytes
    server.push(local, old)  # 4 versions behind > K = 2: both shards dropped, nothing written
    assert server.bytes == before


def test_no_staleness_limit_applies_everything():
    server = SharedShards(model(), lambda p: SharedRMSprop(p, lr=0.1), num_shards=1, max_staleness=None)
    local = model()
    old = server.pull(local)
    grads_on(local)
    for _ in range(5):
        server.push(local, old)
    assert server.versions.tolist() == [5] and server.dropped.tolist() == [0]
    assert np.isfinite(sum(p.sum().item() for p in server.model.parameters()))


def test_the_learning_rate_set_on_the_shards_drives_every_applied_step():
    """The run's learning rate reaches the shards as one shared value (the trainer's schedule sets it): 0
    freezes the model (versions still count), 0.05 gives RMSProp's first step the size 0.05 (lr * g / |g|)."""
    server = SharedShards(model(), lambda p: SharedRMSprop(p, lr=0.1, alpha=0.0, eps=1e-12), num_shards=2,
                          max_staleness=None)
    local = model()
    grads_on(local)
    server.lr.fill_(0.0)
    before = [p.detach().clone() for p in server.model.parameters()]
    server.push(local, server.pull(local))
    assert all(torch.equal(b, p) for b, p in zip(before, server.model.parameters()))
    assert server.versions.tolist() == [1, 1]
    server.lr.fill_(0.05)
    grads_on(local)
    server.push(local, server.versions.numpy())
    for b, p, g in zip(before, server.model.parameters(), local.parameters()):
        nonzero = g.grad != 0
        torch.testing.assert_close((b - p.detach())[nonzero], 0.05 * torch.sign(g.grad[nonzero]))


def test_exchange_applies_the_gradient_and_returns_the_latest_weights():
    server = SharedShards(model(), lambda p: SharedRMSprop(p, lr=0.1), num_shards=2, max_staleness=5)
    local = model()
    versions = server.pull(local)
    grads_on(local)
    applied, dropped, staleness, new_versions = server.exchange(local, versions)
    assert (applied, dropped, staleness) == (2, 0, 0.0) and new_versions.tolist() == [1, 1]
    assert all(torch.equal(a, b) for a, b in zip(local.parameters(), server.model.parameters()))


def test_send_many_applies_each_gradient_against_the_limit_and_returns_the_latest_weights():
    """Three gradients from the same version: with K = 1 the third is two versions stale when it arrives
    and is dropped on both shards; the reply holds the weights after the two applied ones."""
    server = SharedShards(model(), lambda p: SharedRMSprop(p, lr=0.1), num_shards=2, max_staleness=1)
    local = model()
    versions = server.pull(local)
    grads_on(local)
    grads = [[p.grad.clone() for p in local.parameters()] for _ in range(3)]
    receive = server.send_many(local, grads, versions)
    applied, dropped, staleness, new_versions = receive()
    assert (applied, dropped) == (4, 2) and staleness == 1.0 and new_versions.tolist() == [2, 2]
    assert all(torch.equal(a, b) for a, b in zip(local.parameters(), server.model.parameters()))


def test_on_ray_the_logged_rate_is_the_one_the_shard_actors_apply(local_ray):
    """Shard actors get a new rate once it moved by 1% (a schedule moves it on every report); the rate the metrics
    log is at every point the one the actors hold, never the schedule's newer value they were not sent."""
    from functools import partial

    from distrl.core.program import ParamServer
    from distrl.runtime.services.param_server import RayParamServer

    spec = ParamServer(make_model=model, make_optimizer=partial(SharedRMSprop, lr=0.1), num_shards=2)
    adapter = RayParamServer(local_ray, spec)
    try:
        adapter.set_hyperparameters({"lr": 0.1})
        adapter.start()
        for lr in np.linspace(0.1, 0.0, 401):  # a linear schedule's values, report by report
            adapter.set_hyperparameters({"lr": float(lr)})
            held = local_ray.get([s.learning_rate.remote() for s in adapter.servers])
            assert held == [adapter.stats()["lr"]] * 2, (lr, held)
            assert abs(held[0] - lr) <= 0.01 * held[0] + 1e-12  # within the 1% step of the schedule
        assert adapter.stats()["lr"] == 0.0  # the schedule's end reaches the actors
    finally:
        adapter.close()
