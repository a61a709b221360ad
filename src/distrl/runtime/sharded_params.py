"""A sharded parameter server that applies gradients asynchronously and drops stale ones (GORILA).

Nair et al. 2015 (arXiv:1507.04296), section 4: the parameters are split into shards, each shard
applies the gradients sent to it on its own, and a gradient computed from parameters more than
``max_staleness`` versions old is discarded. Each shard has its own version (one per applied
gradient) and its own optimizer statistics; together the shards hold exactly the model's tensors.

- :class:`SharedShards` (``local``): every shard in shared memory; workers apply gradients in place.
- :class:`ShardServer` / :class:`RemoteShards` (``ray``): one Ray actor per shard.

Workers call ``pull(model) -> versions`` and ``push(model, versions) -> (applied, dropped, staleness)``,
or ``exchange(model, versions)``: a push that also brings the latest weights back (one round trip per
shard on Ray instead of two, for workers that compute gradients back to back).
The optimizer comes from the system as a factory (``make_optimizer(params)``), so this module knows no
algorithm; its learning rate is multiplied by ``lr_scale``, which the learner sets from the run's
progress (a schedule such as A3C's linear annealing to zero).
"""

from __future__ import annotations

import numpy as np
import torch


def shard_indices(num_tensors: int, num_shards: int) -> list[list[int]]:
    """Parameter tensors dealt round-robin into ``num_shards`` groups (none empty)."""
    num_shards = max(1, min(num_shards, num_tensors))
    return [list(range(s, num_tensors, num_shards)) for s in range(num_shards)]


class SharedShards:
    """With one shard and no staleness limit this is A3C's Hogwild: lock-free in-place updates."""

    def __init__(self, model: torch.nn.Module, make_optimizer, num_shards: int, max_staleness: int | None):
        self.model = model.share_memory()
        params = list(model.parameters())
        self.shards = shard_indices(len(params), num_shards)
        self.optimizers = [make_optimizer([params[i] for i in shard]).share_memory() for shard in self.shards]
        self.versions = torch.zeros(len(self.shards), dtype=torch.int64).share_memory_()
        self.dropped = torch.zeros(len(self.shards), dtype=torch.int64).share_memory_()
        self.max_staleness = max_staleness
        self.base_lrs = [[g["lr"] for g in opt.param_groups] for opt in self.optimizers]
        self.lr_scale = torch.ones(1, dtype=torch.float64).share_memory_()
        self.replay = None  # a global replay the workers share with the parameters (GORILA), if any

    def pull(self, local: torch.nn.Module) -> np.ndarray:
        with torch.no_grad():
            for lp, sp in zip(local.parameters(), self.model.parameters()):
                lp.copy_(sp)
        return self.versions.numpy().copy()

    def push(self, local: torch.nn.Module, versions: np.ndarray) -> tuple[int, int, float]:
        shared, mine = list(self.model.parameters()), list(local.parameters())
        applied = dropped = 0
        staleness = []
        for s, shard in enumerate(self.shards):
            lag = int(self.versions[s]) - int(versions[s])
            staleness.append(lag)
            if self.max_staleness is not None and lag > self.max_staleness:
                self.dropped[s] += 1
                dropped += 1
                continue
            for i in shard:
                shared[i].grad = mine[i].grad
            step_scaled(self.optimizers[s], self.base_lrs[s], float(self.lr_scale))
            self.versions[s] += 1
            applied += 1
        return applied, dropped, float(np.mean(staleness))

    def exchange(self, local: torch.nn.Module, versions: np.ndarray) -> tuple[int, int, float, np.ndarray]:
        return (*self.push(local, versions), self.pull(local))


def step_scaled(optimizer: torch.optim.Optimizer, base_lrs: list[float], scale: float) -> None:
    for group, base in zip(optimizer.param_groups, base_lrs):
        group["lr"] = base * scale
    optimizer.step()


class ShardServer:
    """One shard's state on Ray: its tensors, its optimizer, its version and drop count."""

    def __init__(self, values: list[np.ndarray], make_optimizer, max_staleness: int | None):
        torch.set_num_threads(1)
        self.params = [torch.nn.Parameter(torch.from_numpy(np.array(v))) for v in values]
        self.optimizer = make_optimizer(self.params)
        self.base_lrs = [g["lr"] for g in self.optimizer.param_groups]
        self.lr_scale = 1.0
        self.version = 0
        self.dropped = 0
        self.max_staleness = max_staleness

    def set_lr_scale(self, scale: float) -> None:
        self.lr_scale = scale

    def apply(self, grads: list[np.ndarray], version: int) -> tuple[bool, int]:
        lag = self.version - version
        if self.max_staleness is not None and lag > self.max_staleness:
            self.dropped += 1
            return False, lag
        for p, g in zip(self.params, grads):
            p.grad = torch.from_numpy(np.array(g))  # arrays from the object store are read-only
        step_scaled(self.optimizer, self.base_lrs, self.lr_scale)
        self.version += 1
        return True, lag

    def weights(self) -> tuple[list[np.ndarray], int, int]:
        return [p.detach().numpy().copy() for p in self.params], self.version, self.dropped

    def exchange(self, grads: list[np.ndarray], version: int) -> tuple[bool, int, list[np.ndarray], int]:
        ok, lag = self.apply(grads, version)
        values, version, _ = self.weights()
        return ok, lag, values, version


class RemoteShards:
    def __init__(self, servers: list, shards: list[list[int]]):
        self.servers, self.shards = servers, shards
        self.replay = None  # the served global replay, if the system has one

    def pull(self, local: torch.nn.Module) -> np.ndarray:
        import ray

        return self._load(local, [(values, version) for values, version, _ in
                                  ray.get([s.weights.remote() for s in self.servers])])

    def push(self, local: torch.nn.Module, versions: np.ndarray) -> tuple[int, int, float]:
        import ray

        results = ray.get([server.apply.remote(g, v) for server, g, v in self._gradients(local, versions)])
        applied = sum(ok for ok, _ in results)
        return applied, len(results) - applied, float(np.mean([lag for _, lag in results]))

    def exchange(self, local: torch.nn.Module, versions: np.ndarray) -> tuple[int, int, float, np.ndarray]:
        import ray

        results = ray.get([server.exchange.remote(g, v) for server, g, v in self._gradients(local, versions)])
        applied = sum(ok for ok, _, _, _ in results)
        new_versions = self._load(local, [(values, version) for _, _, values, version in results])
        return applied, len(results) - applied, float(np.mean([lag for _, lag, _, _ in results])), new_versions

    def _gradients(self, local: torch.nn.Module, versions: np.ndarray):
        params = list(local.parameters())
        return [(server, [params[i].grad.numpy() for i in shard], int(v))
                for server, shard, v in zip(self.servers, self.shards, versions)]

    def _load(self, local: torch.nn.Module, per_shard: list) -> np.ndarray:
        params = list(local.parameters())
        with torch.no_grad():
            for (values, _), shard in zip(per_shard, self.shards):
                for i, v in zip(shard, values):
                    params[i].copy_(torch.from_numpy(np.array(v)))
        return np.array([version for _, version in per_shard])


def remote_shards(ray, learner) -> tuple[RemoteShards, list]:
    """Start one :class:`ShardServer` actor per shard, seeded with ``learner``'s current weights."""
    make_optimizer, num_shards, max_staleness = learner.param_spec()
    params = [p.detach().numpy() for p in learner.model.parameters()]
    shards = shard_indices(len(params), num_shards)
    server_cls = ray.remote(num_cpus=0, max_restarts=-1)(ShardServer)
    servers = [server_cls.remote([params[i] for i in shard], make_optimizer, max_staleness) for shard in shards]
    ray.get([s.set_lr_scale.remote(float(learner.shards.lr_scale)) for s in servers])  # a resumed run's schedule
    return RemoteShards(servers, shards), servers


def pull_into(remote: RemoteShards, model: torch.nn.Module) -> tuple[int, int]:
    """Copy the shards' weights into ``model``; returns (total applied updates, total dropped)."""
    import ray

    results = ray.get([s.weights.remote() for s in remote.servers])
    versions = remote._load(model, [(values, version) for values, version, _ in results])
    return int(versions.sum()), sum(dropped for _, _, dropped in results)


def shared_params(learner) -> SharedShards:
    """The learner's shards in shared memory (it builds them with its model), for worker processes."""
    return learner.shards
