"""The parameter-server service: a sharded model that applies gradients asynchronously and drops stale ones.

Nair et al. 2015 (GORILA, arXiv:1507.04296), section 4: the parameters are split into shards, each
shard applies the gradients sent to it on its own, and a gradient computed from parameters more than
``max_staleness`` versions old is discarded. Each shard has its own version (one per applied
gradient) and its own optimizer statistics; together the shards hold exactly the model's tensors.
With one shard and no limit this is A3C's Hogwild (Mnih et al. 2016): lock-free in-place updates.

- :class:`SharedShards` (``inline``, ``local``): every shard in shared memory; workers apply gradients
  in place. Adapter: :class:`SharedParamServer`.
- :class:`ShardServer` / :class:`RemoteShards` (``ray``): one Ray actor per shard; the trainer keeps a
  copy of the model and the optimizers for checkpoints, refreshed by ``sync``. Adapter: :class:`RayParamServer`.

Workers call ``pull(model) -> versions`` and ``push(model, versions) -> (applied, dropped, staleness)``,
or ``exchange(model, versions)``: a push that also brings the latest weights back (one round trip per
shard on Ray instead of two); ``send_many`` sends several gradients computed from the same parameters
in one round trip (each still checked against the staleness limit as it is applied) and returns a
function that waits for the reply, so a worker can step its envs while the gradients travel. The
learning rate is the run's hyperparameter ``lr`` (schedules and PBT change it through the trainer's
mutation point).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.multiprocessing as mp

from distrl.runtime.compute import setup_compute
from distrl.runtime.services.base import AppliesUpdates, ServiceAdapter, Stateful


def shard_indices(num_tensors: int, num_shards: int) -> list[list[int]]:
    """Parameter tensors dealt round-robin into ``num_shards`` groups (none empty)."""
    num_shards = max(1, min(num_shards, num_tensors))
    return [list(range(s, num_tensors, num_shards)) for s in range(num_shards)]


def step_at(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.step()


class SharedShards:
    bytes = 0  # moved between a worker and the shared shards: weights read, shards written by its updates

    def __init__(self, model: torch.nn.Module, make_optimizer, num_shards: int, max_staleness: int | None):
        self.model = model.share_memory()
        params = list(model.parameters())
        self.shards = shard_indices(len(params), num_shards)
        self.shard_bytes = [sum(params[i].numel() * params[i].element_size() for i in shard) for shard in self.shards]
        self.optimizers = [make_optimizer([params[i] for i in shard]).share_memory() for shard in self.shards]
        self.versions = torch.zeros(len(self.shards), dtype=torch.int64).share_memory_()
        self.dropped = torch.zeros(len(self.shards), dtype=torch.int64).share_memory_()
        self.max_staleness = max_staleness
        self.lr = torch.full((1,), self.optimizers[0].param_groups[0]["lr"], dtype=torch.float64).share_memory_()
        # The weights are Hogwild (lock-free, as the papers run them); the counters are not: ``+= 1`` on a
        # shared tensor is a read-modify-write, and two workers pushing at once would lose a version.
        # a named semaphore, reopened by name in each component however it was started (spawn or forkserver)
        self.counting = mp.get_context("spawn").Lock()

    def pull(self, local: torch.nn.Module) -> np.ndarray:
        with torch.no_grad():
            for lp, sp in zip(local.parameters(), self.model.parameters()):
                lp.copy_(sp)
        self.bytes += sum(self.shard_bytes)
        return self.versions.numpy().copy()

    def push(self, local: torch.nn.Module, versions: np.ndarray) -> tuple[int, int, float]:
        shared, mine = list(self.model.parameters()), list(local.parameters())
        applied = dropped = 0
        staleness = []
        lr = float(self.lr)
        for s, shard in enumerate(self.shards):
            lag = int(self.versions[s]) - int(versions[s])
            staleness.append(lag)
            if self.max_staleness is not None and lag > self.max_staleness:
                self._count(self.dropped, s)
                dropped += 1
                continue
            for i in shard:
                shared[i].grad = mine[i].grad
            step_at(self.optimizers[s], lr)
            self._count(self.versions, s)
            self.bytes += self.shard_bytes[s]
            applied += 1
        return applied, dropped, float(np.mean(staleness))

    def _count(self, counter: torch.Tensor, s: int) -> None:
        # bounded: a worker killed inside this one-line section must not stop the others for good (they
        # count without the lock then, as before it existed)
        locked = self.counting.acquire(timeout=1.0)
        try:
            counter[s] += 1
        finally:
            if locked:
                self.counting.release()

    def exchange(self, local: torch.nn.Module, versions: np.ndarray) -> tuple[int, int, float, np.ndarray]:
        return (*self.push(local, versions), self.pull(local))

    travels = False  # an exchange is an in-place update here: nothing to save by batching

    def send_many(self, local: torch.nn.Module, grads: list[list[torch.Tensor]], versions: np.ndarray):
        applied = dropped = 0
        lags = []
        for g in grads:
            for p, gi in zip(local.parameters(), g):
                p.grad = gi
            a, d, lag = self.push(local, versions)
            applied, dropped = applied + a, dropped + d
            lags.append(lag)
        result = applied, dropped, float(np.mean(lags)), self.pull(local)
        return lambda: result


class SharedParamServer(ServiceAdapter, Stateful, AppliesUpdates):
    """``inline`` and ``local``: the shards in shared memory, handed to worker processes as file descriptors."""

    def __init__(self, spec):
        self.shards = SharedShards(spec.make_model(), spec.make_optimizer, spec.num_shards, spec.max_staleness)

    def worker_handle(self, role: str, index: int):
        return self.shards

    def set_hyperparameters(self, values) -> None:
        if "lr" in values:
            self.shards.lr.fill_(values["lr"])

    def checkpoint_parts(self):
        return _parts(self.shards)

    def counters(self) -> dict:
        return {"shard_versions": self.shards.versions.tolist(), "dropped": self.shards.dropped.tolist()}

    def load_counters(self, c: dict) -> None:
        if "shard_versions" in c:
            self.shards.versions[:] = torch.tensor(c["shard_versions"])
        if isinstance(c.get("dropped"), list):
            self.shards.dropped[:] = torch.tensor(c["dropped"])

    def stats(self, whole_run: bool = False) -> dict:
        return _stats(self.shards)

    def applied_updates(self) -> int:
        return int(self.shards.versions.sum())


def _parts(shards: SharedShards):
    return {"model": shards.model}, {f"optimizer_shard{s}": opt for s, opt in enumerate(shards.optimizers)}


def _stats(shards: SharedShards) -> dict:
    return {"updates_total": float(shards.versions.sum()), "dropped_gradients": float(shards.dropped.sum()),
            "lr": float(shards.lr)}


class ShardServer:
    """One shard's state on Ray: its tensors, its optimizer, its version and drop count. ``lr`` is the run's applied
    rate (the one road a rate takes, with :meth:`set_lr`): every step applies it, whatever rate the optimizer was
    built or saved with."""

    def __init__(self, values: list[np.ndarray], make_optimizer, max_staleness: int | None, lr: float, version: int = 0,
                 dropped: int = 0, optimizer_state: dict | None = None):
        setup_compute(1)
        self.params = [torch.nn.Parameter(torch.from_numpy(np.array(v))) for v in values]
        self.optimizer = make_optimizer(self.params)
        if optimizer_state is not None:
            self.optimizer.load_state_dict(optimizer_state)
        self.lr = lr
        self.version, self.dropped = version, dropped
        self.max_staleness = max_staleness

    def set_lr(self, lr: float) -> None:
        self.lr = lr

    def learning_rate(self) -> float:
        return self.lr

    def apply(self, grads: list[np.ndarray], version: int) -> tuple[bool, int]:
        lag = self.version - version
        if self.max_staleness is not None and lag > self.max_staleness:
            self.dropped += 1
            return False, lag
        for p, g in zip(self.params, grads):
            p.grad = torch.from_numpy(np.array(g))  # arrays from the object store are read-only
        step_at(self.optimizer, self.lr)
        self.version += 1
        return True, lag

    def weights(self) -> tuple[list[np.ndarray], int, int]:
        return [p.detach().numpy().copy() for p in self.params], self.version, self.dropped

    def counts(self) -> tuple[int, int]:
        return self.version, self.dropped

    def state(self) -> tuple[list[np.ndarray], int, int, dict]:
        return (*self.weights(), self.optimizer.state_dict())

    def exchange(self, grads: list[np.ndarray], version: int) -> tuple[bool, int, list[np.ndarray], int]:
        ok, lag = self.apply(grads, version)
        values, version, _ = self.weights()
        return ok, lag, values, version

    def exchange_many(
        self, grads: list[list[np.ndarray]], version: int
    ) -> tuple[int, list[int], list[np.ndarray], int]:
        """Several gradients computed from the same parameters (``version``), applied one after another,
        each dropped if by then it is more than ``max_staleness`` versions old; then the latest weights."""
        results = [self.apply(g, version) for g in grads]
        values, latest, _ = self.weights()
        return sum(ok for ok, _ in results), [lag for _, lag in results], values, latest


class RemoteShards:
    """A worker's handle on the shard servers (the same calls as :class:`SharedShards`)."""

    travels = True  # an exchange is a round trip: worth batching gradients into one
    bytes = 0  # gradients sent and weights received

    def __init__(self, servers: list, shards: list[list[int]]):
        self.servers, self.shards = servers, shards

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

    def send_many(self, local: torch.nn.Module, grads: list[list[torch.Tensor]], versions: np.ndarray):
        """``grads`` (each a list over ``local``'s parameters) were all computed from the parameters of
        ``versions``: one round trip per shard applies them all and brings the latest weights back. The
        calls leave at once; the returned function waits for the replies and loads the weights."""
        import ray

        calls = [server.exchange_many.remote([[g[i].numpy() for i in shard] for g in grads], int(v))
                 for server, shard, v in zip(self.servers, self.shards, versions)]
        self.bytes += sum(t.numel() * t.element_size() for g in grads for t in g)

        def receive():
            results = ray.get(calls)
            applied = sum(n for n, _, _, _ in results)
            lags = [lag for _, shard_lags, _, _ in results for lag in shard_lags]
            new_versions = self._load(local, [(values, version) for _, _, values, version in results])
            return applied, len(lags) - applied, float(np.mean(lags)), new_versions

        return receive

    def _gradients(self, local: torch.nn.Module, versions: np.ndarray):
        """Each shard's server, the gradients it is sent (counted in ``bytes``) and the version they came from."""
        params = list(local.parameters())
        out = [(server, [params[i].grad.numpy() for i in shard], int(v))
               for server, shard, v in zip(self.servers, self.shards, versions)]
        self.bytes += sum(g.nbytes for _, grads, _ in out for g in grads)
        return out

    def _load(self, local: torch.nn.Module, per_shard: list) -> np.ndarray:
        params = list(local.parameters())
        with torch.no_grad():
            for (values, _), shard in zip(per_shard, self.shards):
                for i, v in zip(shard, values):
                    params[i].copy_(torch.from_numpy(np.array(v)))
                    self.bytes += params[i].numel() * params[i].element_size()
        return np.array([version for _, version in per_shard])


class RayParamServer(ServiceAdapter, Stateful, AppliesUpdates):
    """``ray``: one :class:`ShardServer` actor per shard, started from the trainer's copy (and a restored
    checkpoint's weights, optimizer statistics and versions); ``sync`` copies them back."""

    def __init__(self, ray, spec):
        self.ray, self.spec = ray, spec
        self.shards = SharedShards(spec.make_model(), spec.make_optimizer, spec.num_shards, spec.max_staleness)
        self.servers: list = []
        self._sent_lr: float | None = None

    def start(self) -> None:
        params = [p.detach().numpy() for p in self.shards.model.parameters()]
        # not restarted by Ray: a restarted shard would start again from this session's first weights; a
        # dead shard fails its workers' exchanges, the run stops, and resumes from its last checkpoint
        server_cls = self.ray.remote(num_cpus=0, max_restarts=0)(ShardServer)
        lr = float(self.shards.lr)
        self.servers = [server_cls.remote([params[i] for i in shard], self.spec.make_optimizer, self.spec.max_staleness,
                                          lr, int(self.shards.versions[s]), int(self.shards.dropped[s]),
                                          self.shards.optimizers[s].state_dict())
                        for s, shard in enumerate(self.shards.shards)]
        self._sent_lr = lr

    def worker_handle(self, role: str, index: int):
        return RemoteShards(self.servers, self.shards.shards)

    def set_hyperparameters(self, values) -> None:
        """A new rate reaches the shard actors in one message each once it moved by 1% from the one they hold (a
        schedule changes it on every report); ``shards.lr``, which the metrics log, is always the rate they hold,
        so the logged ``lr`` is the applied one (a linear schedule's steps of at most 1%)."""
        if "lr" not in values:
            return
        lr, sent = float(values["lr"]), self._sent_lr
        if not self.servers:  # not started yet: start() hands the shards this rate
            self.shards.lr.fill_(lr)
        elif sent is None or abs(lr - sent) > 0.01 * abs(sent) or (lr == 0.0) != (sent == 0.0):
            for server in self.servers:
                server.set_lr.remote(lr)
            self._sent_lr = lr
            self.shards.lr.fill_(lr)

    def sync(self) -> None:
        if not self.servers:
            return
        params = list(self.shards.model.parameters())
        with torch.no_grad():
            for s, (values, version, dropped, opt_state) in enumerate(
                self.ray.get([srv.state.remote() for srv in self.servers])
            ):
                for i, v in zip(self.shards.shards[s], values):
                    params[i].copy_(torch.from_numpy(np.array(v)))
                self.shards.versions[s], self.shards.dropped[s] = version, dropped
                self.shards.optimizers[s].load_state_dict(opt_state)

    def checkpoint_parts(self):
        return _parts(self.shards)

    def counters(self) -> dict:
        return {"shard_versions": self.shards.versions.tolist(), "dropped": self.shards.dropped.tolist()}

    def load_counters(self, c: dict) -> None:
        SharedParamServer.load_counters(self, c)

    def stats(self, whole_run: bool = False) -> dict:
        self._refresh()
        return _stats(self.shards)

    def applied_updates(self) -> int:
        self._refresh()
        return int(self.shards.versions.sum())

    def _refresh(self) -> None:
        if self.servers:
            for s, (version, dropped) in enumerate(self.ray.get([srv.counts.remote() for srv in self.servers])):
                self.shards.versions[s], self.shards.dropped[s] = version, dropped

    def close(self) -> None:
        for server in self.servers:
            try:
                self.ray.kill(server, no_restart=True)
            except Exception:
                pass
        self.servers = []
