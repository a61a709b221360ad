"""The ray runtime's own local instance (no ray_address): what `distrl train ... --runtime ray` starts."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import os
import ray  # imported before distrl starts the instance, as a user's script or a benchmark may
import distrl
trainer = distrl.make_trainer("impala", env="CartPole-v1", runtime="ray", num_actors=1, total_steps=4000,
                              run_dir={run_dir!r})
trainer.start()
stats = trainer.step(env_steps=2000)
from ray._raylet import AuthenticationMode, get_authentication_mode
token_mode = get_authentication_mode() == AuthenticationMode.TOKEN  # this process sends the token
trainer.close()
print("RESULT", token_mode, "AUTH", os.environ["RAY_AUTH_MODE"], "STEPS", stats["env_steps"])
"""

@pytest.mark.timeout(180)
def test_a_local_instance_requires_a_token_even_if_ray_was_imported_first(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    code = SCRIPT.format(run_dir=str(tmp_path / "r"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=170, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT")][-1].split()
    assert line[1] == "True" and line[3] == "token" and int(line[5]) >= 2000


def test_a_local_start_that_times_out_once_is_tried_again(monkeypatch):
    """Ray's raylet can miss its 30-s start-up window on a loaded machine: two more starts, then the error."""
    ray = pytest.importorskip("ray")
    from distrl.runtime.backends.ray import connect_ray

    calls = []

    def init(**kwargs):
        calls.append("init")
        if calls.count("init") <= failures:
            raise Exception("The current node timed out during startup. This could happen because ...")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: calls.append("shutdown"))
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    failures = 2
    assert connect_ray(None, 1) is True and calls == ["init", "shutdown", "init", "shutdown", "init"]
    calls.clear()
    failures = 3  # a third time-out is the error
    with pytest.raises(Exception, match="timed out during startup"):
        connect_ray(None, 1)
    assert calls == ["init", "shutdown"] * 3


def test_the_processes_a_failed_start_left_are_ended_before_the_next(monkeypatch):
    """Ray keeps no handle on the GCS or raylet of a start that gave up: they are ended before the next try (a CI
    run saw the next start's GCS never come up beside them), and children that were there before are kept."""
    ray = pytest.importorskip("ray")
    psutil = pytest.importorskip("psutil")
    from distrl.runtime.backends.ray import connect_ray

    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    ray_file = os.path.join(os.path.dirname(ray.__file__), "_private", "stand_in.py")  # named as Ray's daemons are
    older = subprocess.Popen([*sleeper, ray_file])  # a child from before the start
    started = []

    def init(**kwargs):
        if not started:
            started.append(subprocess.Popen([*sleeper, ray_file]))
            started.append(subprocess.Popen([*sleeper, "not-its-own"]))  # another thread's child, say
            raise RuntimeError("Timed out waiting for file /tmp/ray/session_x/gcs_server_port_abc")
        assert started[0].poll() is not None  # ended before this second start, not after it

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    try:
        assert connect_ray(None, 1) is True
        assert started[0].wait(timeout=30) is not None  # ended before the second start
        assert started[1].poll() is None and older.poll() is None
        assert older.pid in {p.pid for p in psutil.Process().children()}
    finally:
        for p in (older, *started):
            p.kill()
            p.wait()


def test_a_gcs_that_misses_its_port_file_window_is_given_longer_and_started_again(monkeypatch):
    """The GCS server has 30 s by Ray's default to write its port file (missed once here, a fresh install's first
    start under the suite's load): a local start gives it Ray's slow-start 120 s and one more try."""
    ray = pytest.importorskip("ray")
    from distrl.runtime.backends.ray import connect_ray

    calls, waits = [], []

    def init(**kwargs):
        calls.append("init")
        waits.append(os.environ.get("RAY_gcs_server_port_wait_time_s"))
        if calls.count("init") == 1:
            raise RuntimeError("Timed out waiting for file /tmp/ray/session_x/gcs_server_port_abc")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: calls.append("shutdown"))
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_gcs_server_port_wait_time_s", "")  # recorded, so that the test leaves none behind
    monkeypatch.delenv("RAY_gcs_server_port_wait_time_s")
    assert connect_ray(None, 1) is True and calls == ["init", "shutdown", "init"]
    assert waits == ["120", "120"]
    assert "RAY_gcs_server_port_wait_time_s" not in os.environ  # a later connection to a cluster keeps Ray's wait
    monkeypatch.setenv("RAY_gcs_server_port_wait_time_s", "300")  # a user's own value stands
    calls.clear()
    waits.clear()
    connect_ray(None, 1)
    assert waits == ["300", "300"]


STRAY_CLUSTER_SCRIPT = """
import os
import sys
sys.path.insert(0, {tests_parent!r})
from tests.ray_cluster import two_node_cluster
cluster = two_node_cluster()  # another Ray on this machine (a user's `ray start`, another run's), not initialised here
try:
    assert os.path.exists("/tmp/ray/ray_current_cluster")  # where an address-less ray.init() would look
    import distrl
    s = distrl.train("impala", env="CartPole-v1", runtime="ray", num_actors=1, total_steps=2000, run_dir={run_dir!r})
    print("RESULT", s["env_steps"], cluster.head_node.remaining_processes_alive())  # ours ran; theirs is untouched
finally:
    cluster.shutdown()
"""


@pytest.mark.timeout(180)
def test_a_run_without_an_address_starts_its_own_instance_beside_a_running_cluster(tmp_path):
    """Without an address the ray runtime starts a Ray of its own (``address="local"``): joining a cluster that
    happens to run on the machine (Ray's default) made ``ray.init`` refuse ``num_cpus`` with a traceback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    code = STRAY_CLUSTER_SCRIPT.format(run_dir=str(tmp_path / "r"), tests_parent=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=170, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT")][-1].split()
    assert int(line[1]) >= 2000 and line[2] == "True"
