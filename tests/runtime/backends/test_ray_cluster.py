"""The runtime contract and an IMPALA run on a real two-node Ray cluster started on this machine.

The cluster (two raylets, one CPU each, loopback only) is started once for the module and torn
down at the end, and the last test checks that no Ray process is left behind.
"""

import csv
import os
import sys
import time

import psutil
import pytest

ray = pytest.importorskip("ray", reason="ray extra not installed")

import distrl  # noqa: E402
from distrl.runtime.backends import make_backend  # noqa: E402
from tests.ray_cluster import is_ray_process, own_ray_processes, two_node_cluster  # noqa: E402
from tests.runtime.backends import contract  # noqa: E402
from tests.runtime.backends.contract import WAIT_S  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    c = two_node_cluster()
    ray.init(address=c.address, include_dashboard=False, logging_level="ERROR")
    yield c
    ray.shutdown()
    c.shutdown()


def _ray(cluster):
    return lambda: make_backend("ray", seed=0, ray_address=cluster.address)


def test_contract_intact_in_order_weights_advance(cluster):
    contract.check_intact_and_ordered(_ray(cluster))


def test_contract_hyperparameters_reach_components(cluster):
    contract.check_hyperparameters_reach_components(_ray(cluster))


def test_contract_adapters_declare_their_contracts(cluster):
    contract.check_adapters_declare_their_contracts(_ray(cluster))


def test_contract_shared_service(cluster):
    contract.check_shared_service("ray", _ray(cluster), num_actors=1)  # the cluster's two CPUs: one actor each


def test_contract_replay_service(cluster):
    contract.check_replay_service(_ray(cluster))


@pytest.mark.parametrize("with_replay", [False, True], ids=["params", "params+partitioned-replay"])
def test_contract_parameter_server(cluster, with_replay):
    contract.check_param_server(_ray(cluster), with_replay)


def test_contract_constant_array(cluster):
    contract.check_constant_array(_ray(cluster))


def test_contract_periodic_role(cluster):
    contract.check_periodic_role(_ray(cluster))


def test_contract_killed_actor_is_restarted_by_ray(cluster):
    contract.check_kill_restarts(_ray(cluster))


def test_contract_component_whose_step_raises_is_replaced(cluster):
    contract.check_step_error_restarts(_ray(cluster))


def test_contract_shutdown_kills_actors(cluster):
    contract.check_shutdown_leaves_nothing(_ray(cluster))


def test_impala_trains_on_both_nodes(cluster, tmp_path):
    s = distrl.train("impala", env="CartPole-v1", runtime="ray", ray_address=cluster.address, total_steps=60_000,
                     num_envs=16, unroll_length=16, run_dir=str(tmp_path / "r"), num_actors=2)
    assert s["learner_updates"] >= 200
    assert s["actor_nodes"] == 2  # SPREAD placed one actor on each node
    assert s["policy_lag_mean"] is not None and s["episodes"] > 0


def test_an_autoscaled_run_from_one_actor_on_a_sleeping_env_grows_onto_the_second_node(cluster, tmp_path):
    """SlowCartPole sleeps 1 ms a step: one actor starves the learner, so the run adds the second actor (the cluster's
    CPUs allow two), which SPREAD places on the other node, and keeps it: two actors step about twice as fast. (On a
    busy machine the cores look saturated and the run may try one again, so the count it ends with is not asserted.)"""
    s = distrl.train("impala", env="distrl/SlowCartPole-v0", runtime="ray", ray_address=cluster.address,
                     num_actors=1, autoscale="on", max_actors=2, total_steps=40_000, run_dir=str(tmp_path / "r"))
    with (tmp_path / "r" / "autoscale.csv").open() as f:
        changes = list(csv.DictReader(f))
    assert changes[0]["actors_before"] == "1" and changes[0]["actors"] == "2", changes
    assert not any("no faster" in c["why"] for c in changes), changes  # the move up was kept
    assert s["actor_nodes"] == 2 and s["autoscale"]["sps_by_actors"]["2"] > s["autoscale"]["sps_by_actors"]["1"]


def test_apex_dqn_on_ray_with_the_replay_in_its_own_actor(cluster, tmp_path):
    """Actors on both nodes insert straight into a replay-server actor; the learner samples from it; a
    resumed run gets the checkpointed replay back into a new server."""
    import csv
    import json

    kw = dict(env="CartPole-v1", runtime="ray", ray_address=cluster.address, num_actors=2, num_envs=4, unroll_length=8,
              min_replay=200, batch_size=32, run_dir=str(tmp_path / "r"), log_interval_s=0.2)
    s = distrl.train("apex-dqn", total_steps=4000, **kw)
    assert s["env_steps"] >= 4000 and s["learner_updates"] > 0 and s["actor_nodes"] == 2
    rows = list(csv.DictReader(open(tmp_path / "r" / "metrics.csv")))
    assert float(rows[-1]["replay_size"]) > 200  # as the server reports it
    ckpt = sorted((tmp_path / "r" / "checkpoints").glob("step-*"))[-1]
    saved = json.loads((ckpt / "replay.json").read_text())["storage"]["size"]
    assert saved >= 3000  # the server's contents reached the run directory
    s2 = distrl.train("apex-dqn", total_steps=6000, resume=True, **kw)
    rows = list(csv.DictReader(open(tmp_path / "r" / "metrics.csv")))
    resumed = [r for r in rows if int(r["env_steps"]) > s["env_steps"]]
    assert s2["env_steps"] >= 6000 and float(resumed[0]["replay_size"]) >= saved  # nothing lost on resume


def test_a3c_pushes_gradients_to_a_parameter_server_on_ray(cluster, tmp_path):
    s = distrl.train("a3c", env="CartPole-v1", runtime="ray", ray_address=cluster.address, total_steps=4000,
                     num_actors=2, num_envs=4, t_max=8, segments_per_report=5, run_dir=str(tmp_path / "r"))
    assert s["env_steps"] >= 4000 and s["actor_nodes"] == 2
    assert s["policy_lag_mean"] is not None and s["policy_lag_mean"] >= 0  # gradient staleness, in updates
    # the checkpoint holds the parameter server's weights, not the coordinator's initial ones
    import json

    ckpt = sorted((tmp_path / "r" / "checkpoints").glob("step-*"))[-1]
    counters = json.loads((ckpt / "state.json").read_text())["counters"]
    # the paper's update: one gradient per segment of 4 envs x 8 steps
    assert sum(counters["services"]["params"]["shard_versions"]) >= 4000 // 32


def test_gorila_shards_are_ray_actors(cluster, tmp_path):
    s = distrl.train("gorila", env="CartPole-v1", runtime="ray", ray_address=cluster.address, total_steps=3000,
                     num_actors=2, num_envs=4, unroll_length=8, min_replay=100, batch_size=32, num_shards=2,
                     run_dir=str(tmp_path / "r"))
    assert s["env_steps"] >= 3000 and s["actor_nodes"] == 2
    import json

    ckpt = sorted((tmp_path / "r" / "checkpoints").glob("step-*"))[-1]
    assert sum(json.loads((ckpt / "state.json").read_text())["counters"]["services"]["params"]["shard_versions"]) > 0


def test_gorila_global_replay_is_a_ray_actor_and_resumes_whole(cluster, tmp_path):
    """Bundles on both nodes write their partitions of one served replay and sample all of it; the
    checkpoint holds the served contents and a resumed run starts from them."""
    import csv
    import json

    kw = dict(
        env="CartPole-v1",
        runtime="ray",
        ray_address=cluster.address,
        num_actors=2,
        num_envs=4,
        unroll_length=8,
        min_replay=100,
        batch_size=32,
        replay="global",
        prioritized=False,
        replay_capacity=5000,
        run_dir=str(tmp_path / "r"),
        log_interval_s=0.2,
    )
    s = distrl.train("gorila", total_steps=4000, **kw)
    assert s["env_steps"] >= 4000 and s["actor_nodes"] == 2 and s["learner_updates"] > 0
    rows = list(csv.DictReader(open(tmp_path / "r" / "metrics.csv")))
    assert float(rows[-1]["actor_shards_applied"]) > 0  # learners sampled the served replay and pushed gradients
    ckpt = sorted((tmp_path / "r" / "checkpoints").glob("step-*"))[-1]
    saved = [size for _, size in json.loads((ckpt / "replay.json").read_text())["counts"]]
    assert min(saved) > 0 and sum(saved) >= 3500  # both partitions, everything written (CartPole: 1 item per step)
    distrl.train("gorila", total_steps=6000, resume=True, **kw)
    final = sorted((tmp_path / "r" / "checkpoints").glob("step-*"))[-1]
    resumed = [size for _, size in json.loads((final / "replay.json").read_text())["counts"]]
    assert sum(resumed) >= sum(saved) + 1500  # the resumed run kept what was saved


def test_seed_actors_stream_to_the_inference_server_and_one_joins_by_address(cluster, tmp_path, monkeypatch, capsys):
    """Two Ray actors and one actor that joins by address (here a thread; any machine could run it), all over
    TLS: Ray's actors are handed the certificate, the joining one is given it (``--tls-ca``)."""
    import socket
    import threading

    from distrl.agents.common import env_actor
    from tests.runtime.services.inference.tls import self_signed

    cert, key = self_signed("127.0.0.1")
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)

    with socket.socket() as sock:  # a free port for the server, so the joining actor knows where to dial
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    joined_steps = []
    original_advance = env_actor.EnvActor.advance

    def counting_advance(self, actions):
        if threading.current_thread().name == "joiner":
            joined_steps.append(1)
        return original_advance(self, actions)

    monkeypatch.setattr(env_actor.EnvActor, "advance", counting_advance)
    joiner = threading.Thread(
        target=distrl.join,
        args=(f"127.0.0.1:{port}",),
        kwargs={"token": "a-run-secret", "tls_ca": str(tmp_path / "cert.pem")},
        name="joiner",
        daemon=True,
    )
    joiner.start()
    s = distrl.train("seed", env="CartPole-v1", runtime="ray", ray_address=cluster.address, total_steps=30_000,
                     num_actors=2, num_envs=8, unroll_length=8, remote_actors=1, bind=f"127.0.0.1:{port}",
                     run_dir=str(tmp_path / "r"), token="a-run-secret", tls_cert=str(tmp_path / "cert.pem"),
                     tls_key=str(tmp_path / "key.pem"))
    joiner.join(timeout=WAIT_S)
    assert not joiner.is_alive()  # the joined actor left when the server stopped
    assert s["env_steps"] >= 30_000 and s["learner_updates"] > 0 and s["latency_p50_ms"] > 0
    assert len(joined_steps) > 50
    said = capsys.readouterr()  # how to join is said on stderr, naming the token's file, never the token itself
    assert "a-run-secret" not in said.out + said.err and "--token-file RUN_DIR/token" in said.err


def test_two_apex_learners_on_ray(cluster, tmp_path):
    """A second learner as a Ray actor: rendezvous through the store actor, gradients over gloo, the replay
    server's samples shared out and their priorities gathered back."""
    s = distrl.train("apex-dqn", env="CartPole-v1", runtime="ray", ray_address=cluster.address, total_steps=3000,
                     num_actors=1, num_envs=4, unroll_length=8, min_replay=200, batch_size=16, num_learners=2,
                     run_dir=str(tmp_path / "r"))
    assert s["env_steps"] >= 3000 and s["learner_updates"] > 0
    from ray._private.state import actors

    # the GCS's actor table (Ray's state API needs a dashboard, which the test cluster does not run)
    def ours_alive():
        return [a["ActorClassName"] for a in actors().values() if a["State"] != "DEAD"
                and a["ActorClassName"] in ("ReplicaHost", "StoreActor")]

    deadline = time.monotonic() + WAIT_S  # ray.kill is asynchronous: the table says DEAD shortly after
    while ours_alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not ours_alive()


def _ray_processes() -> list[str]:
    """Ray processes this test process started (its cluster's, its workers'): not the machine's, where another
    test worker (``pytest -n 2``) or a user may run a Ray of their own."""
    out = []
    for p in psutil.Process().children(recursive=True):
        if is_ray_process(p):
            try:
                out.append(f"{p.pid} " + " ".join(p.cmdline())[:120])
            except psutil.Error:
                pass
    return out

def test_a_run_joins_a_token_auth_cluster_without_ray_auth_mode_in_its_environment(tmp_path):
    """The docs' recipe starts the cluster with ``RAY_AUTH_MODE=token``; ``distrl train --runtime ray --set
    ray_address=...`` joins it with nothing set in its own environment (the token in ~/.ray/auth_token, shared here
    as between a head and a worker machine that copied it). With a wrong token: one line, exit 2, no run dir."""
    import json
    import subprocess

    from tests.ray_cluster import token_cluster

    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    with token_cluster() as c:
        argv = [sys.executable, "-m", "distrl", "train", "impala", "--env", "CartPole-v1", "--runtime", "ray", "--set",
                f"ray_address={c.address}", "--total-steps", "4000", "--quiet", "--json", "--set", "num_envs=8"]
        r = subprocess.run(argv + ["--run-dir", str(tmp_path / "r")], env=env, capture_output=True, text=True,
                           timeout=WAIT_S * 4)
        assert r.returncode == 0, r.stderr[-3000:]
        assert json.loads(r.stdout.strip().splitlines()[-1])["env_steps"] >= 4000
        r = subprocess.run(argv + ["--run-dir", str(tmp_path / "w")], env={**env, "RAY_AUTH_TOKEN": "x" * 32},
                           capture_output=True, text=True, timeout=WAIT_S * 4)
        assert r.returncode == 2 and r.stderr.strip().splitlines() == [r.stderr.strip()], r.stderr[-3000:]
        assert "did not accept this machine" in r.stderr and "RAY_AUTH_TOKEN" in r.stderr
        assert not (tmp_path / "w").exists()



def test_zz_teardown_leaves_no_ray_process(cluster):
    before = own_ray_processes()  # workers outliving their raylet would be no descendants of this process after
    ray.shutdown()
    cluster.shutdown()
    _, alive = psutil.wait_procs(before, timeout=WAIT_S)  # workers exit shortly after their raylet
    assert not alive, [p.pid for p in alive]
    assert _ray_processes() == []

