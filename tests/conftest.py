import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the clusters the tests start (and their subprocesses) give Ray's GCS as long to come up as distrl's own local
# start does (runtime/backends/ray.py: 30 s was missed once under the suite's load)
os.environ.setdefault("RAY_gcs_server_port_wait_time_s", "120")


def run_cli(*args, cwd=None, timeout=120, env=None):
    """Run the real ``distrl`` entry point in a subprocess."""
    full_env = dict(os.environ, **(env or {}))
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "distrl", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=full_env)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session")
def _ray_instance():
    """Stops the suite's shared local Ray instance (``local_ray``) at the end of the session."""
    ray = pytest.importorskip("ray")
    yield ray
    if ray.is_initialized():
        ray.shutdown()


@pytest.fixture
def local_ray(_ray_instance):
    """The ray runtime's own local instance (token authentication, as ``--runtime ray`` starts it), started once
    and shared by the tests that run ``runtime="ray"`` in this process: a run joins an initialised Ray instead of
    starting and stopping its own (~4 s each on this machine). Tests that need a Ray of their own (a two-node
    cluster) or count leftover processes stop it first (``tests/ray_cluster.py::stop_shared_ray``); the next test
    that asks for it starts it again."""
    from distrl.runtime.backends.ray import connect_ray

    if not _ray_instance.is_initialized():
        connect_ray(None, num_cpus=8)  # room for every test's actors (a run alone asks for as many CPUs as actors)
    return _ray_instance


# The longest test files go first, longest first (seconds of a worker, `python -m pytest -n 2 --durations=0` on the
# 2-core machine: the docs pages' code blocks ~320 s of a worker, the Ray cluster's ~360; every other file under ~200):
# `--dist loadfile --no-loadscope-reorder` gives each worker two files, then the next file in collection order
# whenever one has two tests or fewer left, so a long file handed out late would run alone at the end while the
# other worker has nothing left.
LONGEST_FILES_FIRST = (
    "tests/runtime/backends/test_ray_cluster.py",
    "tests/docs/test_pages.py",
    "tests/docs/test_system_pages.py",
    "tests/agents/test_impala.py",
    "tests/test_readme.py",
    "tests/test_cli.py",
    "tests/agents/test_qt_opt.py",
    "tests/agents/test_r2d2.py",
    "tests/agents/test_gorila.py",
    "tests/bench/test_runner.py",
    "tests/agents/test_r2d3.py",
    "tests/pbt/test_population.py",
)


def pytest_collection_modifyitems(items):
    first = {name: i for i, name in enumerate(LONGEST_FILES_FIRST)}
    items.sort(key=lambda item: first.get(item.nodeid.split("::")[0], len(first)))  # stable
