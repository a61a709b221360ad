"""The inference loop's batch: it waits for a request from every connected actor (at most ``max_batch``), an actor
counting from its first request until its transport says it left, so slots no actor holds, or an actor retired by
the autoscaler, cost no wait; and a slot whose request arrives later still joins the next batch."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from distrl.runtime.services.inference.loop import InferenceLoop


class ScriptedTransport:
    """Hands out the slots of ``arrivals`` in order, one list per poll (an empty list: nothing arrived before the
    timeout); records every poll's timeout and the slots each batch answered."""

    def __init__(self, arrivals: list[list[int]], slots: int = 4):
        self.arrivals = list(arrivals)
        self.polls: list[float] = []
        self.answered: list[list[int]] = []
        self.requests = {"obs": np.zeros((slots, 1, 1), np.float32), "rewards": np.zeros((slots, 1), np.float32),
                         "terminated": np.zeros((slots, 1), bool), "truncated": np.zeros((slots, 1), bool),
                         "timings": np.zeros((slots, 2)), "final": np.zeros((slots, 1), bool)}
        self.actions = np.zeros((slots, 1), np.int64)
        self.on_disconnect = lambda slot: None

    def poll(self, timeout: float) -> list[int]:
        self.polls.append(timeout)
        return self.arrivals.pop(0) if self.arrivals else []

    def respond(self, slots: np.ndarray) -> None:
        self.answered.append(slots.tolist())


def _loop(transport: ScriptedTransport, max_batch: int = 8, max_wait_s: float = 0.0) -> InferenceLoop:
    served = SimpleNamespace(policy=SimpleNamespace(set_weights=lambda *a: None), served=[], finished=[],
                             take=lambda: [], drop=lambda slot: None)
    served.serve = lambda slots, *a: (served.served.append(slots.tolist()),
                                      {"actions": np.zeros((len(slots), 1), np.int64)})[1]
    served.finish = lambda slots, *a: served.finished.append(slots.tolist())
    return InferenceLoop(served, transport, max_batch, max_wait_s, queue_size=4)


def test_a_batch_waits_for_every_connected_actor_and_no_more():
    """Slot 0 connects alone and is served at once; once 1 has connected too, each request waits for the other's,
    which arrives at the next poll; max_batch 8 is never waited for (a wait of 60 s, had it been)."""
    transport = ScriptedTransport([[0], [1], [0], [1], [0]])
    loop = _loop(transport, max_wait_s=60.0)
    for _ in range(3):
        loop._step()
    assert transport.answered == [[0], [1, 0], [1, 0]]


def test_an_actor_that_left_is_not_waited_for():
    """Two actors connected; one leaves (its transport calls ``on_disconnect``): the other's requests are each a
    batch of one, served with no poll for a request that will never come (a wait of 60 s here, had it polled)."""
    transport = ScriptedTransport([[0, 1], [0], [0]])
    loop = _loop(transport, max_wait_s=60.0)
    loop._step()
    transport.on_disconnect(1)
    polls = len(transport.polls)
    loop._step()
    loop._step()
    assert transport.answered == [[0, 1], [0], [0]]
    assert transport.polls[polls:] == [0.05, 0.05]  # only the polls that wait for a first request


def test_max_batch_still_caps_the_batch_and_the_rest_waits_for_the_next():
    transport = ScriptedTransport([[0, 1, 2]])
    loop = _loop(transport, max_batch=2)
    loop._step()
    loop._step()
    assert transport.answered == [[0, 1], [2]]


def test_a_final_request_is_finished_not_served_answered_and_no_longer_waited_for():
    """Slots 0 and 1 connected; 1's next request is its last (``final``, a retired actor's): the batch of both
    finishes 1 and serves 0, answers both, and 0's next request is a batch of its own, with no poll for 1's."""
    transport = ScriptedTransport([[0, 1], [0, 1], [0]])
    loop = _loop(transport, max_wait_s=60.0)
    loop._step()
    transport.requests["final"][1] = True
    loop._step()
    polls = len(transport.polls)
    loop._step()
    assert loop.server.served == [[0, 1], [0], [0]] and loop.server.finished == [[1]]
    assert transport.answered == [[0, 1], [0, 1], [0]] and loop.connected == {0}
    assert transport.polls[polls:] == [0.05]


def test_the_completed_unrolls_held_follow_the_actors_connected_not_the_slots_made():
    """The queue holds two batches at the least (``queue_size``) and one unroll more per actor connected beyond:
    an autoscaled run's server has slots for ``max_actors``, and 2 actors holding 8 actors' unrolls ran twice as
    far behind the learner (SEED's policy lag on CartPole 277 -> 630 updates)."""
    transport = ScriptedTransport([[0], [0, 1, 2, 3, 4, 5], [0]], slots=8)
    loop = _loop(transport, max_wait_s=0.0)
    loop._step()
    assert loop.unrolls.maxsize == 4  # one actor connected: the least
    loop._step()
    assert loop.unrolls.maxsize == 6  # six
    loop.disconnect(5)
    loop.disconnect(4)
    loop._step()
    assert loop.unrolls.maxsize == 4
