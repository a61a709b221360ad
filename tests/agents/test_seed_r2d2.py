"""SEED with R2D2's learner: the server keeps each env's LSTM state and its emitter cuts the served streams
into sequences whose stored state is the one the server acted with; runs on every runtime."""

import numpy as np
import pytest
import torch

import distrl
from distrl.envs import env_spec, make_vec_env
from tests.agents.r2d2_checks import learner_priorities

SMALL = dict(num_actors=2, num_envs=4, unroll_length=10, min_replay=20, batch_size=8, replay_size=500,
             sequence_length=10, overlap=5, burn_in=2, n_step=3)
ENV = "distrl/CartPoleNoVelocity-v1"


@pytest.mark.parametrize("initial_priority", ["max", "actor"])
def test_served_sequences_replay_to_the_actions_the_server_took(initial_priority):
    """... and with ``initial_priority=actor`` enter with the priorities R2D2's learner gives them with the server's
    network."""
    from distrl.agents.r2d2.actor import chunk_spec, sequences_to_insert
    from distrl.agents.r2d2.builder import make_replay
    from distrl.agents.seed_r2d2.config import SeedR2D2Config
    from distrl.agents.seed_r2d2.emitter import SequenceEmitter
    from distrl.agents.seed_r2d2.networks import RecurrentQPolicy, make_model
    from distrl.config import build as build_config
    from distrl.core.types import ArraySpec
    from distrl.runtime.services.inference.server import InferenceServer

    cfg = build_config(SeedR2D2Config, dict(SMALL, epsilon=0.0, initial_priority=initial_priority))  # greedy
    env = env_spec(ENV)
    torch.manual_seed(0)
    policy = RecurrentQPolicy(make_model(env, cfg), env, cfg, num_slots=2)
    spec = chunk_spec(env, cfg, cfg.lstm)
    server = InferenceServer(policy, ArraySpec(env.obs_shape, env.obs_dtype.name), 2, cfg.num_envs, cfg.unroll_length,
                             SequenceEmitter(cfg, spec, cfg.lstm))
    replay = make_replay(spec, cfg, pixels=False)
    envs = [make_vec_env(ENV, cfg.num_envs, seed) for seed in (0, 1)]
    requests, slots, given = [], [], []
    for e, seed in zip(envs, (0, 1)):
        obs, _ = e.reset(seed=seed)
        requests.append((obs, np.zeros(4, np.float32), np.zeros(4, bool), np.zeros(4, bool)))
    for _ in range(3 * cfg.unroll_length + 1):
        for slot in (1, 0):  # the slots' requests come one at a time, in either order
            obs, rew, term, trunc = requests[slot]
            out = server.serve(np.array([slot]), obs[None], rew[None], term[None], trunc[None])
            nobs, rew, term, trunc, _ = envs[slot].step(out["actions"][0])
            requests[slot] = (nobs, rew.astype(np.float32), term, trunc)
        for chunk, info in server.take():
            assert info["sequences"] == int(chunk["valid"].sum())
            items, priorities = sequences_to_insert(chunk)
            slots.append(replay.add(items, priorities))
            given.append(priorities)
    assert replay.size > 0 and replay.storage.dropped == 0
    if initial_priority == "actor":
        slots, given = np.concatenate(slots), np.concatenate(given)
        np.testing.assert_allclose(given, learner_priorities(cfg, policy.model, replay, slots), rtol=1e-4, atol=1e-6)
    else:
        assert all(p is None for p in given)
    seqs = replay.storage.read(replay.storage.oldest_slots(replay.size))
    for k in range(replay.size):
        n = int(seqs["mask"][k].sum())
        h0, c0 = torch.from_numpy(seqs["initial_state"][k:k + 1]).split(cfg.lstm, dim=1)
        with torch.no_grad():
            q, _ = policy.model.unroll(torch.from_numpy(seqs["obs"][k, :n]).unsqueeze(1), (h0, c0))
        assert (q.argmax(-1)[:, 0].numpy() == seqs["action"][k, :n]).all()
    for e in envs:
        e.close()


def test_a_slot_that_starts_over_never_joins_its_old_stream():
    from distrl.agents.r2d2.actor import chunk_spec
    from distrl.agents.seed_r2d2.config import SeedR2D2Config
    from distrl.agents.seed_r2d2.emitter import SequenceEmitter
    from distrl.config import build as build_config

    cfg = build_config(SeedR2D2Config, SMALL)
    env = env_spec(ENV)
    emitter = SequenceEmitter(cfg, chunk_spec(env, cfg, cfg.lstm), cfg.lstm)
    E, T = cfg.num_envs, cfg.unroll_length
    unroll = {"obs": np.zeros((T + 1, E, 2), np.float32), "actions": np.zeros((T, E), np.int64),
              "rewards": np.ones((T, E), np.float32), "terminated": np.zeros((T, E), bool),
              "truncated": np.zeros((T, E), bool), "valid": np.ones((T, E), bool),
              "core_state": np.zeros((T, E, 2 * cfg.lstm), np.float32)}
    counters = [int(emitter(unroll, {"slot": 1, "restarted": r})[0]["chunk"][0]) for r in (True, False, True, False)]
    assert counters[1] == counters[0] + 1 and counters[2] > counters[1] + 1 and counters[3] == counters[2] + 1
    chunk, _ = emitter(unroll, {"slot": 1, "restarted": False})
    assert (chunk["stream"] == E + np.arange(E)).all()  # slot 1's envs


@pytest.mark.parametrize("sync_steps", [1, 3])
def test_the_server_swaps_weights_in_every_actor_sync_steps(sync_steps):
    """As R2D2's actors pull every ``actor_sync_steps`` vector steps, the server swaps in new weights once a slot has
    taken that many steps on the present ones (1: at once, SEED's paper); the newest waiting weights win (the
    services hand the policy a copy of the learner's buffer: ``tests/runtime/services/inference/test_weights.py``)."""
    from distrl.agents.seed_r2d2.config import SeedR2D2Config
    from distrl.agents.seed_r2d2.networks import RecurrentQPolicy, make_model
    from distrl.config import build as build_config

    cfg = build_config(SeedR2D2Config, dict(SMALL, actor_sync_steps=sync_steps))
    env = env_spec(ENV)
    policy = RecurrentQPolicy(make_model(env, cfg), env, cfg, num_slots=2)
    size = policy.flat.buffer.numel()
    obs, state = np.zeros((1, cfg.num_envs, 2), np.float32), policy.initial_state(cfg.num_envs)[None]

    def weights(value):
        return np.full(size, value, np.float32)

    def step(slot):
        policy(obs, state, np.array([slot]))

    policy.set_weights(weights(0.5), 7)  # the first weights: at once
    assert policy.version == 7
    for version in (1, 2):  # the newest waiting weights replace older ones
        policy.set_weights(weights(version), version)
    if sync_steps == 1:
        assert policy.version == 2
    else:
        for _ in range(sync_steps):  # slot 0's steps on version 7; slot 1 idle
            step(0)
            assert policy.version == 7
        step(1)  # some slot took sync_steps steps: the newest weights come in before this step
        assert policy.version == 2
        policy.set_weights(weights(3), 3)
        step(0)
        step(1)
        assert policy.version == 2  # each slot took one step on version 2
    assert (policy.flat.buffer.numpy() == 2.0).all()


@pytest.mark.parametrize("epsilon", [1.0, 0.0], ids=["every-move-random", "greedy"])
def test_the_server_plays_only_legal_moves_of_a_game(epsilon):
    """In a game the server's epsilon-greedy moves, random or greedy, keep to each env's legal actions."""
    from distrl.agents.seed_r2d2.config import SeedR2D2Config
    from distrl.agents.seed_r2d2.networks import RecurrentQPolicy, make_model
    from distrl.config import build as build_config

    cfg = build_config(SeedR2D2Config, dict(SMALL, epsilon=epsilon))
    env = env_spec("pettingzoo:classic.tictactoe_v3")
    policy = RecurrentQPolicy(make_model(env, cfg), env, cfg, num_slots=3, seed=1)
    rng = np.random.default_rng(0)
    obs = rng.random((2, cfg.num_envs, 27)).astype(np.float32)
    legal = rng.random((2, cfg.num_envs, 9)) < 0.3
    legal[..., 4] = True
    obs[..., -9:] = legal
    state = np.stack([policy.initial_state(cfg.num_envs)] * 2)
    moves = np.concatenate([policy(obs, state, np.array([0, 2]))[0]["actions"] for _ in range(50)])
    assert np.take_along_axis(np.concatenate([legal] * 50), moves[..., None], -1).all()
    assert len(np.unique(moves)) > (3 if epsilon else 0)


def test_an_unroll_is_labelled_with_the_weights_of_its_first_step():
    """When the swap comes at the step that opens an unroll (after one ends, or a returning actor's first), the
    unroll's version is the new one (its policy lag is measured from the weights that acted, not those before)."""
    from distrl.agents.seed_r2d2.config import SeedR2D2Config
    from distrl.agents.seed_r2d2.networks import RecurrentQPolicy, make_model
    from distrl.config import build as build_config
    from distrl.core.types import ArraySpec
    from distrl.runtime.services.inference.server import InferenceServer

    cfg = build_config(SeedR2D2Config, dict(SMALL, actor_sync_steps=2, unroll_length=2))
    env = env_spec(ENV)
    policy = RecurrentQPolicy(make_model(env, cfg), env, cfg, num_slots=1)
    server = InferenceServer(policy, ArraySpec(env.obs_shape, env.obs_dtype.name), 1, cfg.num_envs, 2)
    size, E = policy.flat.buffer.numel(), cfg.num_envs

    def serve():
        server.serve(np.array([0]), np.zeros((1, E, 2), np.float32), np.zeros((1, E), np.float32),
                     np.zeros((1, E), bool), np.zeros((1, E), bool))

    policy.set_weights(np.full(size, 1.0, np.float32), 1)
    serve()
    serve()
    policy.set_weights(np.full(size, 2.0, np.float32), 2)  # due at the next step, which opens the second unroll
    for _ in range(3):
        serve()
    assert [info["version"] for _, info in server.take()] == [1, 2]
    server.drop(0)  # the actor leaves; back, its first request falls on the next swap
    policy.set_weights(np.full(size, 3.0, np.float32), 3)
    for _ in range(3):
        serve()
    assert [info["version"] for _, info in server.take()] == [3]


@pytest.mark.parametrize("runtime", ["inline", "local", "ray"])
def test_seed_r2d2_runs_on_every_runtime_and_its_policy_evaluates(tmp_path, runtime, request):
    if runtime == "ray":
        request.getfixturevalue("local_ray")  # the suite's shared instance (skips without the ray extra)
    run = tmp_path / "r"
    scored = "max" if runtime == "inline" else "actor"  # the server's priorities through both replay services
    s = distrl.train("seed-r2d2", env=ENV, runtime=runtime, total_steps=4000, run_dir=str(run),
                     initial_priority=scored, **SMALL)
    assert s["env_steps"] >= 4000 and s["learner_updates"] > 0 and s["episodes"] > 0
    result = distrl.evaluate(run, episodes=2)
    assert result["episodes"] == 2 and result["mean_return"] > 0
