"""The runtime contract on inline and local (ray runs the same checks in test_ray_cluster.py)."""

import pytest

from distrl.runtime.backends import make_backend
from tests.runtime.backends import contract


def make_inline():
    return make_backend("inline", seed=0)


def make_local():
    return make_backend("local", seed=0)


BOTH = pytest.mark.parametrize("make", [make_inline, make_local], ids=["inline", "local"])


@BOTH
def test_messages_intact_in_order_and_weights_advance(make):
    contract.check_intact_and_ordered(make)


@BOTH
def test_adapters_declare_their_contracts(make):
    contract.check_adapters_declare_their_contracts(make)


@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_a_service_shared_by_two_programs_reaches_every_component(runtime):
    contract.check_shared_service(runtime, lambda: make_backend(runtime, seed=0))


@BOTH
def test_hyperparameters_reach_every_component(make):
    contract.check_hyperparameters_reach_components(make)


@BOTH
def test_replay_service_counts_inserts_and_keeps_the_ratio(make):
    contract.check_replay_service(make)


@BOTH
@pytest.mark.parametrize("with_replay", [False, True], ids=["params", "params+partitioned-replay"])
def test_parameter_server_applies_pushes_and_takes_the_learning_rate(make, with_replay):
    contract.check_param_server(make, with_replay)


@BOTH
def test_constant_array_is_shared_read_only(make):
    contract.check_constant_array(make)


@BOTH
def test_periodic_role_steps_when_requested(make):
    contract.check_periodic_role(make)


def test_local_killed_actor_is_replaced():
    contract.check_kill_restarts(make_local)


def test_local_component_whose_step_raises_is_replaced():
    contract.check_step_error_restarts(make_local)


def test_local_stuck_component_is_replaced():
    contract.check_stuck_component_is_replaced(lambda: make_backend("local", seed=0, step_timeout_s=2.0))


def test_local_shutdown_leaves_no_process():
    contract.check_shutdown_leaves_nothing(make_local)


def test_local_processes_are_named_by_role():
    from tests.runtime.backends.fakes import counting_program

    backend, learner = contract.started(make_local, counting_program())
    try:
        seen = set()
        while seen != {0, 1}:  # both processes are up (and have named themselves)
            seen.update(i["actor_index"] for i in contract.drive(backend, learner, 1)[0])
        names = sorted(open(f"/proc/{pid}/comm").read().strip() for pid in backend.pids())
        assert names == ["distrl-actor-0", "distrl-actor-1"]
    finally:
        backend.close()
