"""A two-node Ray cluster on this machine for the tests (two raylets, one CPU each, loopback only).

Started with retries: on a busy machine Ray's head raylet sometimes does not register within Ray's own
30 s ("The current node timed out during startup"); a failed attempt's processes are stopped before the
next one, so the suite's no-process-left check still holds.
"""

import os
import sys


def stop_shared_ray() -> None:
    """Stop the suite's shared local Ray instance (conftest's ``local_ray``) if this process runs one: before a
    test joins a Ray of its own (one at a time per process) or counts the processes a run left behind."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


def two_node_cluster(attempts: int = 3):
    from ray.cluster_utils import Cluster

    stop_shared_ray()

    for attempt in range(attempts):
        cluster = None
        try:
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            return cluster
        except Exception:
            started = own_ray_processes()
            if cluster is not None:
                try:
                    cluster.shutdown()
                except Exception:
                    pass
            stop_own_ray_processes(known=started)  # what a failed start left (a GCS without its raylet)
            if attempt == attempts - 1:
                raise


def own_ray_processes() -> list:
    """The Ray processes this process started (psutil handles, safe against a reused pid): taken before a
    shutdown, since what outlives its raylet is then no descendant of this process any more."""
    import psutil

    return [p for p in psutil.Process().children(recursive=True) if is_ray_process(p)]


def stop_own_ray_processes(grace_s: float = 10.0, known: list | None = None) -> None:
    """Stop the Ray processes this process started (those in ``known``, taken before a shutdown, too), and only
    those: not ``ray stop``, which would also stop the Ray instance of another test worker (``pytest -n 2``)
    or of a user's cluster on the machine. The suite's shared instance is shut down first (properly, while
    its driver is connected)."""
    import psutil

    stop_shared_ray()
    own = list({p.pid: p for p in (known or []) + own_ray_processes()}.values())
    for p in own:
        try:
            p.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(own, timeout=grace_s)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=grace_s)


def is_ray_process(p) -> bool:
    """Ray's own: its binaries, its workers (``ray::...``), or a script of the ``ray`` package. Not every process
    whose command line mentions Ray: a forkserver's carries the parent's ``sys.path`` (with Ray's folders in
    it once Ray was imported), and a user's home may be ``/home/ray``."""
    import psutil

    try:
        name, cmdline = p.name(), p.cmdline()
    except psutil.Error:
        return False
    if name in ("raylet", "gcs_server") or (cmdline and cmdline[0].startswith("ray::")):
        return True
    if cmdline and cmdline[0].startswith("ray-dashboard-"):  # the dashboard's module processes
        return True
    ray = sys.modules.get("ray")
    package = os.path.dirname(ray.__file__) + os.sep if ray is not None else None
    return package is not None and any(arg.startswith(package) and arg.endswith(".py") for arg in cmdline[1:])


TOKEN_CLUSTER = """
import os, sys
os.environ["RAY_AUTH_MODE"] = "token"
from ray.cluster_utils import Cluster
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
cluster.wait_for_nodes()
print(cluster.address, flush=True)
sys.stdin.read()  # until the test closes it
cluster.shutdown()
"""


class token_cluster:
    """A one-node Ray cluster started with token authentication (``RAY_AUTH_MODE=token``, as the docs' recipe
    starts one) in a process of its own, so the process under test joins it as a user's would; its address is
    ``address``. Closing the context stops it (bounded waits)."""

    def __enter__(self):
        import subprocess

        self.proc = subprocess.Popen([sys.executable, "-c", TOKEN_CLUSTER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.address = self.proc.stdout.readline().strip()  # the cluster's first line, once it is up
        if not self.address:
            self.__exit__()
            raise RuntimeError("the token-auth cluster did not start")
        return self

    def __exit__(self, *exc):
        import subprocess

        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
