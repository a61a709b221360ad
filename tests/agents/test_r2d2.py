"""R2D2: sequences with their stored state, the trained-step mask, the burn-in, priorities, a recurrent
policy that forgets at episode starts, and runs on every runtime."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import distrl
from distrl.envs import env_spec
from distrl.models import RecurrentQNetwork
from distrl.replay import SampledBatch
from tests.agents.r2d2_checks import learner_priorities

SMALL = dict(num_actors=2, num_envs=4, unroll_length=10, min_replay=20, batch_size=8, replay_size=500,
             sequence_length=10, overlap=5, burn_in=2, n_step=3)


def sequence_batch(starts, burn_in_reward: float, L=8, obs_dim=3, state=5):
    """Two identical sequences of one episode (every step real, the last terminal), ``starts`` saying which of
    them starts its episode; ``burn_in_reward`` is the reward of their first step (a burn-in step)."""
    rng = np.random.default_rng(0)
    obs = np.repeat(rng.standard_normal((1, L, obs_dim)).astype(np.float32), 2, axis=0)
    reward = np.zeros((2, L), np.float32)
    reward[:, 0] = burn_in_reward
    discount = np.full((2, L), 0.9, np.float32)
    discount[:, -1] = 0.0
    items = {"obs": obs, "action": np.zeros((2, L), np.int64), "reward": reward, "discount": discount,
             "mask": np.ones((2, L), bool), "initial_state": np.zeros((2, 2 * state), np.float32),
             "burn_in_state": np.zeros((2, 2 * state), np.float32), "episode_start": np.array(starts)}
    return SampledBatch(items, np.arange(2), np.full(2, 0.5), np.ones(2, np.float32))


def test_a_sequence_that_starts_its_episode_trains_its_burn_in_steps_and_no_other_does():
    """Burn-in refreshes a stale stored state; at an episode's first step the state is exact, so those steps
    are trained there. The proof: the first step's reward moves a starting sequence's priority (|delta| of the
    steps it trains) and leaves a later one's alone."""
    from distrl.agents.r2d2.config import R2D2Config
    from distrl.agents.r2d2.learner import R2D2Learner

    cfg = R2D2Config(sequence_length=8, overlap=4, burn_in=3, n_step=1, lstm=5, hidden=(8,), lr=0.0)
    torch.manual_seed(0)
    learner = R2D2Learner(cfg, RecurrentQNetwork((3,), 2, (8,), lstm=5), replay=None)
    _, quiet = learner.update(sequence_batch([True, False], 0.0))
    _, loud = learner.update(sequence_batch([True, False], 5.0))
    assert loud[0] > quiet[0] + 0.5  # the starting sequence trains step 0: its delta carries the reward
    assert loud[1] == pytest.approx(quiet[1])  # the other one's first trained step is 3: step 0 is burn-in only
    # ... and the gradient reaches the network from those steps alone: episodes of 3 steps, all of them burn-in
    for starts, moved in (([True, True], True), ([False, False], False)):
        batch = sequence_batch(starts, 5.0)
        batch.items["mask"][:, 3:] = False
        batch.items["discount"][:, 2] = 0.0
        learner.update(batch)
        grads = [p.grad for p in learner.params]
        assert (all(g is not None and float(g.abs().sum()) > 0 for g in grads) if moved
                else all(g is None or float(g.abs().sum()) == 0 for g in grads))


def test_unroll_equals_stepping_and_carries_the_state():
    torch.manual_seed(0)
    net = RecurrentQNetwork((3,), 2, (8,), lstm=5)
    obs = torch.randn(6, 4, 3)
    h0 = (torch.randn(4, 5), torch.randn(4, 5))
    q, (h, c) = net.unroll(obs, h0)
    state = h0
    for t in range(6):
        q_t, state = net.step(obs[t], state)
        torch.testing.assert_close(q_t, q[t])
    torch.testing.assert_close(state[0], h)
    # the state matters: the same observation after a different history gives other values
    assert not torch.allclose(net.step(obs[5], net.initial_state(4))[0], q[5])


def test_a_recurrent_policy_forgets_at_reset():
    torch.manual_seed(0)
    net = RecurrentQNetwork((3,), 2, (8,), lstm=5)
    x = torch.randn(1, 3)
    first = net.step(x, net.initial_state(1))[0]
    net.reset_state()
    net.greedy(x)
    net.greedy(x)  # carries its state from call to call
    state_after_two = net._policy_state[0].clone()
    net.reset_state()
    assert net.greedy(x).item() == first.argmax(-1).item()
    assert not torch.allclose(net._policy_state[0], state_after_two)


def test_sequences_carry_the_state_the_actor_had_at_their_first_step(tmp_path):
    """Replaying a stored sequence from its stored state gives the Q values the actor computed."""
    from distrl.agents.common.exploration import EpsilonGreedy
    from distrl.agents.r2d2.actor import SequenceActor, chunk_spec, sequences_to_insert
    from distrl.agents.r2d2.builder import make_replay
    from distrl.agents.r2d2.config import R2D2Config
    from distrl.agents.r2d2.networks import make_model
    from distrl.config import build as build_config
    from distrl.core.types import allocate

    class Fixed:  # a weights reader that never has newer weights
        def pull(self, version):
            return None

    cfg = build_config(R2D2Config, dict(SMALL, num_actors=1))
    env = env_spec("distrl/CartPoleNoVelocity-v1")
    torch.manual_seed(0)
    model = make_model(env, cfg)
    actor = SequenceActor("distrl/CartPoleNoVelocity-v1", env, cfg, 0, model, EpsilonGreedy(np.zeros(4), 2), Fixed())
    actor.version = 0
    spec = chunk_spec(env, cfg, cfg.lstm)
    replay = make_replay(spec, cfg, pixels=False)
    out = allocate(spec)
    for _ in range(3):
        actor.step(out)
        replay.add(*sequences_to_insert(out))
    actor.close()
    assert replay.size > 0
    slots = replay.storage.oldest_slots(replay.size)
    seqs = replay.storage.read(slots)
    step_ids = replay.storage.items.arrays["positions"][slots]  # the step ring has not wrapped: positions are ids
    per_chunk = cfg.unroll_length * cfg.num_envs
    spans_chunks = 0
    for k in range(replay.size):
        L = int(seqs["mask"][k].sum())
        h0, c0 = torch.from_numpy(seqs["initial_state"][k:k + 1]).split(cfg.lstm, dim=1)
        with torch.no_grad():
            q, _ = model.unroll(torch.from_numpy(seqs["obs"][k, :L]).unsqueeze(1), (h0, c0))
        # epsilon 0: the actor took the argmax of the Q values it computed with its state; from the stored state
        # the replay computes the same ones, also for sequences whose steps came in two chunks
        assert (q.argmax(-1)[:, 0].numpy() == seqs["action"][k, :L]).all()
        spans_chunks += step_ids[k, 0] // per_chunk != step_ids[k, L - 1] // per_chunk
    assert spans_chunks > 0


def stored_sequences(settings: dict, chunks: int):
    """R2D2's real actor on the masked CartPole (one actor, SMALL's sequences, gamma 0.9, the model seeded) stepped
    ``chunks`` times into a prioritized sequence replay: (cfg, the actor's model, the replay, the sequences' slots,
    the priorities the actor gave them, or None where it gives none)."""
    from distrl.agents.common.exploration import EpsilonGreedy
    from distrl.agents.r2d2.actor import SequenceActor, chunk_spec, sequences_to_insert
    from distrl.agents.r2d2.builder import make_replay
    from distrl.agents.r2d2.config import R2D2Config
    from distrl.agents.r2d2.networks import make_model
    from distrl.config import build as build_config
    from distrl.core.types import allocate

    class Fixed:  # a weights reader that never has newer weights
        def pull(self, version):
            return None

    cfg = build_config(R2D2Config, dict(SMALL, num_actors=1, gamma=0.9, **settings))
    env = env_spec("distrl/CartPoleNoVelocity-v1")
    torch.manual_seed(0)
    model = make_model(env, cfg)
    actor = SequenceActor("distrl/CartPoleNoVelocity-v1", env, cfg, 0, model, EpsilonGreedy(np.full(4, 0.5), 2),
                          Fixed())
    actor.version = 0
    spec = chunk_spec(env, cfg, cfg.lstm)
    replay, out, slots, given = make_replay(spec, cfg, pixels=False), allocate(spec), [], []
    for _ in range(chunks):
        actor.step(out)
        items, priorities = sequences_to_insert(out)
        slots.append(replay.add(items, priorities))
        given.append(priorities)
    actor.close()
    scored = all(isinstance(g, np.ndarray) and g.ndim == 1 for g in given)  # the actor's own (initial_priority=actor)
    return cfg, model, replay, np.concatenate(slots), np.concatenate(given) if scored else None


@pytest.mark.parametrize("alpha", [0.0, 0.7])
def test_actor_priorities_are_the_learners_for_the_network_the_actor_acted_with(alpha):
    """``initial_priority=actor``: each sequence enters with the priority R2D2's learner would give it with the
    actor's network (stored state, burn-in, trained steps, n-step double-Q under h, advantage learning's correction
    where set, eta max + (1 - eta) mean), over several chunks (sequences spanning two of them, episode starts and ends
    among them)."""
    cfg, model, replay, slots, given = stored_sequences(dict(initial_priority="actor", advantage_learning=alpha), 6)
    seqs = replay.storage.read(slots)
    assert seqs["episode_start"].any() and (~seqs["episode_start"]).any() and (seqs["mask"].sum(1) < 10).any()
    assert (given > 0).all() and len(np.unique(given)) == len(given)
    np.testing.assert_allclose(given, learner_priorities(cfg, model, replay, slots), rtol=1e-4, atol=1e-6)


def h(x, eps):
    return np.sign(x) * (np.sqrt(np.abs(x) + 1) - 1) + eps * x


def h_inv(x, eps):  # R2D2 / Pohlen et al. 2018, the closed form of h's inverse
    return np.sign(x) * (((np.sqrt(1 + 4 * eps * (np.abs(x) + 1 + eps)) - 1) / (2 * eps)) ** 2 - 1)


def reference_priority(cfg, q, action, reward, discount, first, length, start, eps=1e-3, q_target=None):
    """One sequence's priority from the formulas written out (one env: arrays ``[T, ...]``): delta_t = h(sum_k gamma^k
    r_{t+k} + gamma^n h^-1(max_a q_{t+n}) - alpha (h^-1(max_a q_t) - h^-1(q_t(a_t)))) - q_t(a_t) over the steps after
    burn-in (all of them where the sequence starts its episode) whose bootstrap step is one of the sequence's, or whose
    window an episode end cuts first; p = eta max |delta| + (1 - eta) mean |delta| (R2D2 section 2.3); 0 where no step
    is trained. With ``q_target`` (the target network's Q) the bootstrap is double Q's, q_target(x_{t+n},
    argmax_a q(x_{t+n}, a)), and advantage learning's correction is the target's; without it the two networks are
    one (the actor's scorer)."""
    q_target = q if q_target is None else q_target
    last = first + length - 1
    deltas = []
    for t in range(first, last + 1):
        if t - first < cfg.burn_in and not start:
            continue
        if t + cfg.n_step > last and not any(discount[j] == 0 for j in range(t, last + 1)):
            continue
        g, scale = 0.0, 1.0
        for j in range(t, min(t + cfg.n_step, last + 1)):
            g += scale * reward[j]
            scale *= discount[j]
            if scale == 0:
                break
        if scale:
            g += scale * h_inv(q_target[t + cfg.n_step, q[t + cfg.n_step].argmax()], eps)
        g -= cfg.advantage_learning * (h_inv(q_target[t].max(), eps)
                                       - h_inv(q_target[t, action[t]], eps))  # Bellemare et al. 2016
        deltas.append(abs(h(g, eps) - q[t, action[t]]))
    return cfg.priority_eta * max(deltas) + (1 - cfg.priority_eta) * np.mean(deltas) if deltas else 0.0


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_learner_priorities_with_a_target_network_apart_from_the_online_one_follow_the_formula(alpha):
    """R2D2's learner on stored sequences (the real actor, adder and replay) with its target network moved away from
    the online one: every sequence's priority is :func:`reference_priority`'s, both networks stepped one step at a
    time from the stored state over the whole sequence, the online one choosing the bootstrap action and the target
    valuing it (double Q). Any swap of the two networks, or a target unrolled from another state, fails it."""
    import copy
    import dataclasses

    from distrl.agents.r2d2.learner import R2D2Learner

    cfg, model, replay, slots, _ = stored_sequences(dict(advantage_learning=alpha), 4)
    seqs = replay.storage.read(slots)
    assert seqs["episode_start"].any() and (~seqs["episode_start"]).any() and (seqs["mask"].sum(1) < 10).any()

    learner = R2D2Learner(dataclasses.replace(cfg, lr=0.0), copy.deepcopy(model), replay=None)
    torch.manual_seed(1)
    with torch.no_grad():  # each network moved its own way (a fresh head scores every action alike: no argmax)
        for net in (learner.model, learner.target):
            for p in net.parameters():
                p.add_(0.3 * torch.randn_like(p))
    online, target = copy.deepcopy(learner.model), learner.target
    batch = SampledBatch(seqs, slots, np.full(len(slots), 0.5), np.ones(len(slots), np.float32))
    got = learner.update(batch)[1]

    def stepped(net, i):  # Q over sequence i, one step at a time from its stored state: [L, A]
        state = tuple(s[None] for s in torch.as_tensor(seqs["initial_state"][i]).split(net.state_size))
        rows = []
        with torch.no_grad():
            for t in range(seqs["obs"].shape[1]):
                q, state = net.step(torch.as_tensor(seqs["obs"][i, t:t + 1]), state)
                rows.append(q[0].double().numpy())
        return np.stack(rows)

    want = [reference_priority(cfg, stepped(online, i), seqs["action"][i], seqs["reward"][i], seqs["discount"][i], 0,
                               int(seqs["mask"][i].sum()), bool(seqs["episode_start"][i]), q_target=stepped(target, i))
            for i in range(len(slots))]
    argmax_differs = [(stepped(online, i).argmax(-1) != stepped(target, i).argmax(-1)).mean() for i in range(len(want))]
    assert 0.1 < np.mean(argmax_differs) < 0.9  # the double-Q choice matters here
    assert len(set(np.round(want, 6))) == len(want) and min(want) > 0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_actor_priorities_match_the_papers_formula_step_by_step(alpha):
    """A hand-built stream of one env, the scorer's ring wrapping twice, against :func:`reference_priority` (with and
    without advantage learning)."""
    from types import SimpleNamespace

    from distrl.agents.r2d2.actor import SequenceScorer

    cfg = SimpleNamespace(sequence_length=6, unroll_length=4, n_step=2, burn_in=1, value_rescale_eps=1e-3,
                          priority_eta=0.9, advantage_learning=alpha)
    rng = np.random.default_rng(3)
    T, gamma = 25, 0.9  # the scorer's ring holds 10 steps
    q = rng.normal(size=(T, 3)).astype(np.float32)
    action = rng.integers(0, 3, T)
    reward = rng.normal(size=T).astype(np.float32)
    discount = np.full(T, gamma, np.float32)
    discount[8] = 0.0  # the first episode ends at step 8
    # sequences (first step, length, starts its episode), as the adder would cut them at period 3: 0-5, 3-8 (ends its
    # episode: terminal), 9-14 (the next episode's first), 12-17, 15-20, and 18-22, cut short by a time limit at 22
    # (no zero discount: its last n steps have no bootstrap in the sequence and are not trained)
    sequences = [(0, 6, True), (3, 6, False), (9, 6, True), (12, 6, False), (15, 6, False), (18, 5, False)]
    ends = {first + length - 1: (length, start) for first, length, start in sequences}
    scorer, got = SequenceScorer(cfg), []
    for t in range(T):
        length, start = ends.get(t, (None, None))
        one = [0] if length else []
        ended = {"env": np.array(one, np.int64), "length": np.array([length] * len(one), np.int64),
                 "episode_start": np.array([start] * len(one), bool)}
        scorer.record(q[t][None], action[t:t + 1], reward[t:t + 1], discount[t:t + 1], ended)
        if t % cfg.unroll_length == cfg.unroll_length - 1 or t == T - 1:  # scored at each chunk's end
            got.extend(scorer.scores())
    want = [reference_priority(cfg, q, action, reward, discount, *seq) for seq in sequences]
    np.testing.assert_allclose(got, want, rtol=1e-4)  # float32 against float64


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), envs=st.integers(1, 3), length=st.integers(3, 8), overlap_frac=st.floats(0, 0.9),
       unroll=st.integers(1, 6), n=st.integers(1, 3), burn_in=st.integers(0, 3),
       end_prob=st.sampled_from([0.0, 0.1, 0.3]), alpha=st.sampled_from([0.0, 0.5]))
def test_actor_priorities_match_the_formula_for_every_sequence_the_adder_cuts(seed, envs, length, overlap_frac, unroll,
                                                                             n, burn_in, end_prob, alpha):
    """Generated streams of several envs (episode ends, time limits, next-step autoreset's invalid steps) cut by the
    real ``SequenceAdder`` and scored at chunk ends through ``write_step``: every sequence's priority is
    :func:`reference_priority`'s, in the order the chunk lists the sequences."""
    from types import SimpleNamespace

    from distrl.agents.r2d2.actor import SequenceScorer, write_step
    from distrl.replay import SequenceAdder

    n, burn_in = min(n, length - 1), min(burn_in, length - 1 - min(n, length - 1))
    overlap = min(int(overlap_frac * length), length - 1)
    cfg = SimpleNamespace(sequence_length=length, unroll_length=unroll, n_step=n, burn_in=burn_in,
                          value_rescale_eps=1e-3, priority_eta=0.9, advantage_learning=alpha)
    rng = np.random.default_rng(seed)
    T, gamma = 40, 0.9
    q = rng.normal(size=(T, envs, 3)).astype(np.float32)
    action = rng.integers(0, 3, (T, envs))
    reward = rng.normal(size=(T, envs)).astype(np.float32)
    terminated, truncated = rng.random((T, envs)) < end_prob, rng.random((T, envs)) < end_prob / 2
    adder, scorer = SequenceAdder(envs, length, overlap, 1, burn_in), SequenceScorer(cfg)
    valid = np.ones((T, envs), bool)
    got, want, out = [], [], None
    for t in range(T):
        if t % unroll == 0:
            out = {k: np.zeros((unroll * envs,) + shape, dtype) for k, shape, dtype in (
                ("step.obs", (1,), np.float32), ("step.action", (), np.int64), ("step.reward", (), np.float32),
                ("step.discount", (), np.float32), ("seq_env", (), np.int64), ("seq_end", (), np.int64),
                ("seq_length", (), np.int64), ("initial_state", (1,), np.float32),
                ("burn_in_state", (1,), np.float32), ("episode_start", (), bool), ("valid", (), bool))}
            filled = 0
        if t:
            valid[t] = ~((terminated[t - 1] | truncated[t - 1]) & valid[t - 1])  # the step after an end resets
        filled = write_step(out, t % unroll, filled, adder, np.zeros((envs, 1), np.float32), action[t], reward[t],
                            terminated[t], truncated[t], valid[t], np.zeros((envs, 1), np.float32), gamma, q[t], scorer)
        discount = gamma * (1.0 - terminated.astype(np.float32))
        for k in range(len(out["seq_env"][:filled])) if t % unroll == unroll - 1 or t == T - 1 else ():
            e, end, size = out["seq_env"][k], t - (t % unroll) + out["seq_end"][k], out["seq_length"][k]
            want.append(reference_priority(cfg, q[:, e], action[:, e], reward[:, e], discount[:, e], end - size + 1,
                                           size, out["episode_start"][k]))
        if t % unroll == unroll - 1 or t == T - 1:
            got.extend(scorer.scores())
    # float32 against float64: h^-1's closed form cancels ~1 / (4 eps) of float32's precision away
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("runtime", ["inline", "local", "ray"])
def test_r2d2_runs_on_every_runtime_and_its_policy_evaluates(tmp_path, runtime, request):
    if runtime == "ray":
        request.getfixturevalue("local_ray")  # the suite's shared instance (skips without the ray extra)
    run = tmp_path / "r"
    scored = "max" if runtime == "inline" else "actor"  # the actors' priorities through both transports
    s = distrl.train("r2d2", env="distrl/CartPoleNoVelocity-v1", runtime=runtime, total_steps=4000, run_dir=str(run),
                     initial_priority=scored, eval_interval_steps=1000, eval_episodes=1, **SMALL)
    assert s["env_steps"] >= 4000 and s["learner_updates"] > 0
    result = distrl.evaluate(run, episodes=2)
    assert result["episodes"] == 2 and result["mean_return"] > 0
    # the evaluator's weights cross each transport with its first evaluation (on local and ray the run may end
    # before a report arrives: then it kept none, and eval plays the last checkpoint)
    kept = s.get("best_policy")
    assert result["snapshot"] == ("best" if kept else "last") and (runtime != "inline" or kept)
    if kept:
        assert 1000 <= kept["env_steps"] <= s["env_steps"] and kept["eval_episodes"] == 1
    policy = distrl.load_policy(run)
    policy.reset()
    assert policy.act(np.zeros(2, np.float32)) in (0, 1)


def test_the_sequence_replay_is_checkpointed_and_a_resumed_run_continues_it(tmp_path):
    import json

    run = tmp_path / "r"
    distrl.train(
        "r2d2", env="distrl/CartPoleNoVelocity-v1", runtime="inline", total_steps=3000, run_dir=str(run), **SMALL
    )
    ckpt = sorted((run / "checkpoints").glob("step-*"))[-1]
    saved = json.loads((ckpt / "replay.json").read_text())["storage"]["inserted"]
    assert saved > 0 and (ckpt / "replay.safetensors").is_file()
    s = distrl.train("r2d2", env="distrl/CartPoleNoVelocity-v1", runtime="inline", total_steps=6000, run_dir=str(run),
                     resume=True)
    assert s["env_steps"] >= 6000
    final = sorted((run / "checkpoints").glob("step-*"))[-1]
    assert json.loads((final / "replay.json").read_text())["storage"]["inserted"] > saved


def test_the_staleness_metric_is_zero_for_the_actors_own_state_and_grows_with_a_wrong_one():
    from distrl.agents.r2d2.learner import staleness

    torch.manual_seed(0)
    net = RecurrentQNetwork((3,), 2, (8,), lstm=5)
    obs = torch.randn(4, 3)
    state = (torch.randn(4, 5), torch.randn(4, 5))
    stored = torch.cat(state, dim=1)
    real = torch.tensor([1.0, 1.0, 1.0, 0.0])
    assert staleness(net, obs, state, stored, real).item() == pytest.approx(0.0, abs=1e-6)
    zero = net.initial_state(4)
    q, q_actor = net.step(obs, zero)[0], net.step(obs, state)[0]
    expected = ((q - q_actor).norm(dim=-1) / q_actor.abs().max(dim=-1).values)[:3].mean()
    assert staleness(net, obs, zero, stored, real).item() == pytest.approx(expected.item(), rel=1e-5) and expected > 0


def test_r2d2_on_pong_runs_end_to_end_and_keeps_each_frame_once(tmp_path):
    """Atari smoke: Nature CNN + LSTM on local; the replay holds about one frame per env step, not the
    4-frame stacks of every step of every overlapping sequence (8 frames per step at overlap m/2)."""
    pytest.importorskip("ale_py", reason="atari extra not installed")
    import csv

    s = distrl.train("r2d2", env="ALE/Pong-v5", runtime="local", total_steps=600, num_actors=2, num_envs=2,
                     unroll_length=10, sequence_length=10, overlap=5, burn_in=2, n_step=3, min_replay=8, batch_size=4,
                     replay_size=200, lstm=32, run_dir=str(tmp_path / "r"), log_interval_s=0.1)
    assert s["env_steps"] >= 600 and s["learner_updates"] > 0
    rows = [r for r in csv.DictReader(open(tmp_path / "r" / "metrics.csv")) if r.get("replay_bytes_per_step")]
    per_step = float(rows[-1]["replay_bytes_per_step"])
    assert per_step < 1.2 * (84 * 84 + 16), per_step


def test_a_saved_replay_that_does_not_fit_is_one_line_on_resume(tmp_path):
    """E.g. a checkpoint of an older replay layout: the resume stops with one line, not a traceback."""
    from safetensors.numpy import save_file

    from distrl.errors import ConfigError

    run = tmp_path / "r"
    distrl.train(
        "r2d2", env="distrl/CartPoleNoVelocity-v1", runtime="inline", total_steps=2000, run_dir=str(run), **SMALL
    )
    for ckpt in (run / "checkpoints").glob("step-*"):
        save_file({"storage.obs": np.zeros((3, 2), np.float32)}, str(ckpt / "replay.safetensors"))
    with pytest.raises(ConfigError, match="the saved 'replay' does not fit") as e:
        distrl.train("r2d2", env="distrl/CartPoleNoVelocity-v1", runtime="inline", total_steps=4000, run_dir=str(run),
                     resume=True)
    assert "\n" not in str(e.value)


def test_a_replay_smaller_than_two_chunks_is_one_line():
    from distrl.errors import ConfigError

    with pytest.raises(ConfigError, match="raise replay_size"):
        distrl.train("r2d2", env="distrl/CartPoleNoVelocity-v1", runtime="inline", total_steps=100, replay_size=2)


def test_obs_norm_counts_the_real_steps_of_a_batch_after_an_applied_update():
    """The normaliser learns from the replayed batch's real steps (padding, here a huge sentinel, left out), once
    the update is applied: that update and its target used one set of statistics."""
    from distrl.agents.r2d2.config import R2D2Config
    from distrl.agents.r2d2.learner import R2D2Learner

    cfg = R2D2Config(sequence_length=8, overlap=4, burn_in=2, n_step=1, lstm=5, hidden=(8,), obs_norm=True)
    torch.manual_seed(0)
    model = RecurrentQNetwork((3,), 2, (8,), lstm=5, obs_norm=True)
    learner = R2D2Learner(cfg, model, replay=None)
    batch = sequence_batch([True, False], 0.0)
    batch.items["mask"][:, 6:] = False
    batch.items["obs"][:, 6:] = 1e6  # padding: never counted
    real = batch.items["obs"][:, :6].reshape(-1, 3).astype(np.float64)
    learner.update(batch)
    norm = model.obs_norm
    assert float(norm.count) == len(real)
    np.testing.assert_allclose(norm.mean.numpy(), real.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(norm.std.numpy(), real.std(0), rtol=1e-4, atol=1e-6)
    batch.items["obs"][:, :6] = np.nan  # a non-finite batch: no update, and the statistics stay
    before = norm.mean.clone()
    learner.update(batch)
    assert float(norm.count) == len(real) and torch.equal(norm.mean, before)


def test_obs_norm_statistics_travel_with_the_weights_to_the_policy(tmp_path):
    run = tmp_path / "r"
    distrl.train("r2d2", env="distrl/CartPoleNoVelocity-v1", runtime="inline", total_steps=3000, run_dir=str(run),
                 obs_norm=True, **SMALL)
    norm = distrl.load_policy(run, snapshot="last").model.obs_norm
    # learned from CartPole's steps (positions near 0, small spread), not the initial mean 0 and std 1
    assert norm.count > 0 and torch.all(norm.std < 1.0) and torch.all(norm.std > 1e-3)
    # the best evaluated weights (the run's one evaluation, at its end) carry the statistics the policy acts with
    # (mean and std travel with the weights; the count is the learner's bookkeeping)
    best = distrl.load_policy(run)
    assert best.snapshot == "best"
    torch.testing.assert_close(best.model.obs_norm.std, norm.std)
    torch.testing.assert_close(best.model.obs_norm.mean, norm.mean)


def test_r2d2_honours_legal_action_masks_and_learns_tic_tac_toe(tmp_path):
    """Its recurrent Q-values mask as Ape-X DQN's do, at every step of a sequence. Greedy play over 100 games against
    random play, both seats: seeds 0-2 scored 0.79 each at this budget (0.84-0.90 on other evaluation seeds)."""
    run = tmp_path / "ttt"
    distrl.train("r2d2", env="pettingzoo:classic.tictactoe_v3", runtime="inline", total_steps=30_000, run_dir=str(run),
                 progress=False)
    played = distrl.evaluate(run, episodes=100, snapshot="last")
    assert played["mean_return"] >= 0.6, played


def test_the_staleness_metric_of_a_game_counts_the_legal_actions_only():
    """With a legal-action mask the illegal actions' ILLEGAL_Q (the same in both) is neither gap nor scale: the metric
    is the one computed on the legal actions' Q-values alone."""
    from distrl.agents.r2d2.learner import staleness

    torch.manual_seed(0)
    net = RecurrentQNetwork((6,), 3, (8,), lstm=5, action_mask_size=3)
    obs = torch.randn(4, 6)
    obs[:, -3:] = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    state = (torch.randn(4, 5), torch.randn(4, 5))
    zero = net.initial_state(4)
    q, q_actor = net.step(obs, zero)[0], net.step(obs, state)[0]
    legal = obs[:, -3:] > 0.5
    expected = torch.stack([(q[i][legal[i]] - q_actor[i][legal[i]]).norm() / q_actor[i][legal[i]].abs().max()
                            for i in range(4)]).mean()
    got = staleness(net, obs, zero, torch.cat(state, dim=1), torch.ones(4)).item()
    assert got == pytest.approx(expected.item(), rel=1e-5) and expected > 0


def test_r2d2_and_seed_r2d2_actors_play_whole_games(monkeypatch):
    """R2D2 disables the loss-of-life-as-episode-end heuristic (Kapturowski et al. 2019, section 2.3): its actors'
    envs, SEED + R2D2's env actors, and SEED + R2D2's server's handshake to joining actors ask for whole games; the
    other systems' training envs keep the heuristic."""
    import distrl.agents.common.env_actor as env_actor
    import distrl.agents.r2d2.actor as sequence_actor
    from distrl.api import plan_run
    from distrl.core.program import Inference

    asked = []
    for module in (env_actor, sequence_actor):
        real = module.make_vec_env
        monkeypatch.setattr(module, "make_vec_env",
                            lambda *a, _real=real, **k: (asked.append(k.get("life_loss_ends")), _real(*a, **k))[1])
    served = {}
    for system in ("r2d2", "seed-r2d2", "seed"):
        program = plan_run(system, "distrl/CartPoleNoVelocity-v1", runtime="inline")[4]
        actor = next(r for r in program.roles if r.name == "actor").make(0, 0, {"weights": None, "inference": None})
        actor.env.close()
        served[system] = [s.whole_games for s in program.services.values() if isinstance(s, Inference)]
    assert asked == [False, False, True]  # r2d2's sequence actor, seed-r2d2's env actor, seed's (the heuristic)
    assert served == {"r2d2": [], "seed-r2d2": [True], "seed": [False]}
