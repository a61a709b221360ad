"""What the inference services hand their policy when the learner publishes: a copy the policy may keep (a
deferred swap, SEED + R2D2's), whatever the learner writes into its buffer afterwards."""

import threading

import numpy as np
import pytest

from distrl.core.program import Inference
from distrl.runtime.services.inference.inline import InlineInference
from distrl.runtime.services.inference.loop import ThreadedInference
from tests.runtime.services.inference.fakes import OBS, E, EchoPolicy

pytestmark = pytest.mark.timeout(30)


class KeepingPolicy(EchoPolicy):
    """Keeps the array it is handed, as a policy that swaps weights in later does."""

    def __init__(self):
        super().__init__()
        self.kept = None
        self.handed = threading.Event()

    def set_weights(self, flat, version):
        self.kept, self.version = flat, version
        self.handed.set()


class IdleTransport:
    """No actor ever connects: the loop thread only picks up weights."""

    on_disconnect = None

    def __init__(self, *args):
        self.stopped = threading.Event()

    def poll(self, timeout):
        self.stopped.wait(timeout)
        return []

    def close(self):
        self.stopped.set()


def service(kind: str, policy: KeepingPolicy):
    spec = Inference(make_policy=lambda: policy, obs=OBS, num_envs=E, unroll_length=4, max_batch=1, max_wait_s=0.0,
                     emits="unrolls")
    if kind == "inline":
        return InlineInference(spec, {"actor": 0}, num_slots=1)
    return ThreadedInference(spec, num_slots=1, make_transport=IdleTransport, queue_size=1)


@pytest.mark.parametrize("kind", ["inline", "threaded"])
def test_the_policy_keeps_what_the_learner_published_not_its_buffer(kind):
    policy = KeepingPolicy()
    svc = service(kind, policy)
    try:
        learner_buffer = np.full(8, 1.0, np.float32)
        svc.publish(lambda: learner_buffer, 1)
        assert policy.handed.wait(10), "the weights never reached the policy"
        learner_buffer[:] = 2.0  # the learner's next update writes its buffer again
        assert policy.version == 1
        np.testing.assert_array_equal(policy.kept, np.full(8, 1.0, np.float32))
    finally:
        svc.close()


def test_the_loop_hands_each_published_set_once_and_the_newest_wins():
    """The loop thread reads the newest published set between batches and never clears it (a clear after the read
    would drop a set published in between): each set reaches the policy once, and sets superseded before the loop
    looked are skipped."""
    from types import SimpleNamespace

    from distrl.runtime.services.inference.loop import InferenceLoop

    handed = []
    policy = SimpleNamespace(set_weights=lambda flat, version: handed.append(version))
    loop = InferenceLoop(SimpleNamespace(policy=policy), IdleTransport(), max_batch=1, max_wait_s=0.0, queue_size=1)
    loop._step()  # nothing published yet
    loop.set_weights(np.zeros(2), 1)
    loop._step()
    loop._step()
    loop.set_weights(np.zeros(2), 2)
    loop.set_weights(np.zeros(2), 3)
    loop._step()
    assert handed == [1, 3]
