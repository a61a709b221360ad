"""A two-node Ray cluster on this machine for the tests (two raylets, one CPU each, loopback only).

Started with retries: on a busy machine Ray's head raylet sometimes does not register within Ray's own
30 s ("The current node timed out during startup"); a failed attempt's processes are stopped before the
next one, so the suite's no-process-left check still holds.
"""

import subprocess
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
            if cluster is not None:
                try:
                    cluster.shutdown()
                except Exception:
                    pass
            # what a failed start left (a GCS without its raylet): no Ray instance of the suite runs now
            subprocess.run([sys.executable, "-m", "ray.scripts.scripts", "stop", "--force"], capture_output=True,
                           timeout=60)
            if attempt == attempts - 1:
                raise
