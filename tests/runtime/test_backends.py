"""The runtime contract on inline and local (ray runs the same checks in test_ray_cluster.py)."""

import pytest

from distrl.runtime.inline import InlineBackend
from distrl.runtime.local import LocalBackend
from tests.runtime import contract


def make_inline(topo):
    return InlineBackend(topo, seed=0)


def make_local(topo):
    return LocalBackend(topo, seed=0)


@pytest.mark.parametrize("make_backend", [make_inline, make_local], ids=["inline", "local"])
def test_messages_intact_in_order_and_weights_advance(make_backend):
    contract.check_intact_and_ordered(make_backend)


def test_local_killed_actor_is_replaced():
    contract.check_kill_restarts(make_local)


def test_local_shutdown_leaves_no_process():
    contract.check_shutdown_leaves_nothing(make_local)


def test_local_processes_are_named():
    from tests.runtime.fakes import CheckingLearner, counting_topology

    backend = make_local(counting_topology())
    backend.start(CheckingLearner())
    try:
        contract.drive(backend, CheckingLearner(), 1)
        names = sorted(open(f"/proc/{pid}/comm").read().strip() for pid in backend.pids())
        assert names == ["distrl-actor-0", "distrl-actor-1"]
    finally:
        backend.close()
