"""The inference server's bookkeeping, with no transport: batching, unroll assembly, recurrent state."""

import numpy as np

from distrl.runtime.services.inference.server import InferenceServer
from tests.runtime.services.inference.fakes import (
    EPISODE,
    OBS,
    CheckingEnvActor,
    E,
    EchoPolicy,
    expected_action,
)

T = 4


def drive(server, actors, order_rng, rounds):
    """Serve random subsets of the actors (each actor's requests stay in its own order)."""
    reqs = [a.reset() for a in actors]
    for _ in range(rounds):
        slots = np.sort(order_rng.choice(len(actors), size=order_rng.integers(1, len(actors) + 1), replace=False))
        stack = {k: np.stack([reqs[s][k] for s in slots]) for k in reqs[0]}
        out = server.serve(slots, stack["obs"], stack["rewards"], stack["terminated"], stack["truncated"])
        np.testing.assert_array_equal(out["actions"], expected_action(stack["obs"]))  # each gets its own
        for j, s in enumerate(slots):
            reqs[s] = actors[s].advance(out["actions"][j])


def test_unrolls_are_assembled_per_actor_in_order():
    server = InferenceServer(EchoPolicy(), OBS, num_slots=3, num_envs=E, unroll_length=T)
    actors = [CheckingEnvActor(i, 0) for i in range(3)]
    drive(server, actors, np.random.default_rng(0), rounds=60)
    unrolls = server.take()
    assert len(unrolls) >= 6
    next_start = {}
    for u, info in unrolls:
        actor = int(u["obs"][0, 0, 0])
        assert info["slot"] == actor and info["env_steps"] == T * E
        steps = u["obs"][:, 0, 1]
        start = next_start.get(actor, 0)
        # obs[0..T] are consecutive steps of this actor; the next unroll starts where this one ended
        np.testing.assert_array_equal(steps, np.arange(start, start + T + 1))
        next_start[actor] = start + T
        np.testing.assert_array_equal(u["actions"], expected_action(u["obs"][:-1]))
        np.testing.assert_array_equal(u["rewards"], np.where(u["valid"], 1.0, 1.0))  # every step pays 1
        # env 0 ends an episode every EPISODE steps; the step after an end is the (invalid) reset step
        ends = (steps[1:] % EPISODE == 0)
        np.testing.assert_array_equal(u["terminated"][:, 0], ends)
        np.testing.assert_array_equal(u["valid"][:, 0], ~((steps[:-1] % EPISODE == 0) & (steps[:-1] > 0)))
        assert u["valid"][:, 1:].all()


def test_episode_returns_are_counted_once_each():
    server = InferenceServer(EchoPolicy(), OBS, num_slots=2, num_envs=E, unroll_length=T)
    actors = [CheckingEnvActor(i, 0) for i in range(2)]
    drive(server, actors, np.random.default_rng(1), rounds=80)
    infos = [info for _, info in server.take()]
    returns = np.concatenate([i["episode_returns"] for i in infos])
    lengths = np.concatenate([i["episode_lengths"] for i in infos])
    assert returns.size >= 4
    # the first episode has EPISODE rewarded steps; later ones lose the reset step: EPISODE - 1
    assert set(lengths.tolist()) <= {EPISODE, EPISODE - 1} and np.array_equal(returns, lengths.astype(float))


def test_recurrent_state_stays_with_its_env_and_resets_at_episode_start():
    server = InferenceServer(EchoPolicy(recurrent=True), OBS, num_slots=4, num_envs=E, unroll_length=T)
    actors = [CheckingEnvActor(i, 0) for i in range(4)]
    drive(server, actors, np.random.default_rng(2), rounds=100)
    for u, _ in server.take():
        steps = u["obs"][:-1, 0, 1].astype(int)
        # envs 1, 2 never end an episode: the count is the number of steps the env has taken + 1
        np.testing.assert_array_equal(u["count"][:, 1], steps + 1)
        np.testing.assert_array_equal(u["count"][:, 2], steps + 1)
        # env 0's episode ends on every EPISODE-th observation; the reset step after it returns the
        # observation that opens the next episode, and only there does the state start again
        since = np.where(steps <= EPISODE, steps + 1, (steps - EPISODE - 1) % EPISODE + 1)
        np.testing.assert_array_equal(u["count"][:, 0], since)
        np.testing.assert_array_equal(u["initial_state"], u["count"][0] - 1)  # state before the first step


def test_a_dropped_actor_loses_its_partial_unroll_and_a_new_one_starts_fresh():
    server = InferenceServer(EchoPolicy(), OBS, num_slots=1, num_envs=E, unroll_length=T)
    actor = CheckingEnvActor(0, 0)
    req = actor.reset()
    for _ in range(T + 2):  # one complete unroll and a partial one
        out = server.serve(
            np.array([0]), req["obs"][None], req["rewards"][None], req["terminated"][None], req["truncated"][None]
        )
        req = actor.advance(out["actions"][0])
    server.drop(0)
    assert server.unrolls_dropped == 1 and len(server.take()) == 1
    fresh = CheckingEnvActor(0, 0)
    req = fresh.reset()
    for _ in range(T + 1):
        out = server.serve(
            np.array([0]), req["obs"][None], req["rewards"][None], req["terminated"][None], req["truncated"][None]
        )
        req = fresh.advance(out["actions"][0])
    (u, _), = server.take()
    np.testing.assert_array_equal(u["obs"][:, 0, 1], np.arange(T + 1))  # the new actor's own steps from 0


def test_stats_report_batch_sizes_in_observations():
    server = InferenceServer(EchoPolicy(), OBS, num_slots=3, num_envs=E, unroll_length=T)
    actors = [CheckingEnvActor(i, 0) for i in range(3)]
    reqs = [a.reset() for a in actors]
    stack = {k: np.stack([r[k] for r in reqs]) for k in reqs[0]}
    timings = np.array([[0.002, 0.001]] * 3)
    server.serve(np.arange(3), stack["obs"], stack["rewards"], stack["terminated"], stack["truncated"], timings)
    s = server.stats()
    assert s["inference_batch_mean"] == 3 * E and s["latency_p50_ms"] == 2.0
    assert abs(s["actor_idle_frac"] - 2 / 3) < 1e-9


def test_whole_run_latency_samples_stay_bounded_and_representative():
    from distrl.runtime.services.inference.server import _Samples

    samples = _Samples(cap=1000)
    values = np.random.default_rng(3).exponential(size=100_000)
    for chunk in np.split(values, 1000):
        samples.add(chunk)
    kept = samples.values()
    assert kept.size <= 2000
    assert abs(np.median(kept) - np.log(2)) < 0.1  # the exponential's median


def test_every_inference_adapter_declares_the_contracts_its_backend_calls():
    """A backend takes the channel's items from its inference adapter (``ChannelSource``); the shared-memory one must
    also hear of each spawned actor, to drop its copy of the pipe end (``OwnsSpawnedCopies``): a missing base would
    silently lose the items or leak the pipes."""
    from distrl.core.protocols import ChannelSource, ServiceAdapter
    from distrl.runtime.services.base import OwnsSpawnedCopies
    from distrl.runtime.services.inference.inline import InlineInference
    from distrl.runtime.services.inference.local import SharedMemoryInference
    from distrl.runtime.services.inference.ray import GrpcInference

    for adapter in (InlineInference, SharedMemoryInference, GrpcInference):
        assert {ServiceAdapter, ChannelSource} <= set(adapter.__mro__), adapter
    assert OwnsSpawnedCopies in SharedMemoryInference.__mro__


def _serve(server, slots, reqs):
    stack = {k: np.stack([reqs[s][k] for s in slots]) for k in reqs[slots[0]]}
    return server.serve(np.array(slots), stack["obs"], stack["rewards"], stack["terminated"], stack["truncated"])


def test_a_final_request_completes_an_unroll_at_its_length_and_drops_a_shorter_one():
    """Three actors: 0 has served T steps (its final request brings the outcome that completes the unroll, whole
    and in order), 1 only 2 (its partial unroll is discarded and counted), 2 never asked (nothing pending: finished in
    the same batch, it is no error and no loss). None of them begins a new step, and a disconnect after it drops
    nothing more."""
    server = InferenceServer(EchoPolicy(), OBS, num_slots=3, num_envs=E, unroll_length=T)
    actors = [CheckingEnvActor(i, 0) for i in range(3)]
    reqs = {i: actors[i].reset() for i in range(2)}
    for step in range(T):
        slots = [0, 1] if step < 2 else [0]
        out = _serve(server, slots, reqs)
        for j, s in enumerate(slots):
            reqs[s] = actors[s].advance(out["actions"][j])
    reqs[2] = actors[2].reset()
    final = {k: np.stack([reqs[s][k] for s in (0, 1, 2)]) for k in reqs[0]}
    server.finish(np.array([0, 1, 2]), final["obs"], final["rewards"], final["terminated"], final["truncated"])
    (unroll, info), = server.take()
    assert info["slot"] == 0 and server.unrolls_dropped == 1
    np.testing.assert_array_equal(unroll["obs"][:, 0, 1], np.arange(T + 1))  # every step, to the last outcome's
    assert not server.pending.any() and not server.t.any()
    for slot in range(3):
        server.drop(slot)
    assert server.unrolls_dropped == 1
