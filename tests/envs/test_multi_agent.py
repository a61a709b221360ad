"""PettingZoo's two-player games as Gymnasium envs: the learner's seat alternates, the opponent moves inside
``step``, the legal-action mask ends the observation and the actor-critic networks honour it; PPO learns
tic-tac-toe against a random player; systems that do not honour masks refuse such envs in one line."""

import numpy as np
import pytest
import torch

import distrl
from distrl.envs import env_spec, make_env
from distrl.errors import ConfigError
from distrl.models import ActorCritic

GAME = "pettingzoo:classic.tictactoe_v3"


def test_the_seat_alternates_the_opponent_moves_and_results_are_the_learners():
    env = make_env(GAME)
    rng = np.random.default_rng(0)
    seats, returns = [], []
    for episode in range(40):
        obs, info = env.reset(seed=episode) if episode < 2 else env.reset()
        seats.append(info["seat"])
        done, total = False, 0.0
        while not done:
            assert obs.shape == (27,) and obs.dtype == np.float32
            mask = obs[-9:]
            action = int(rng.choice(np.flatnonzero(mask)))
            obs, reward, terminated, truncated, info = env.step(action)
            assert "illegal" not in info
            total += reward
            done = terminated or truncated
        returns.append(total)
    assert seats[:4] == [0, 1, 0, 1] and set(seats) == {0, 1}
    assert set(returns) <= {-1.0, 0.0, 1.0} and len(set(returns)) > 1


def test_an_illegal_move_loses():
    env = make_env(GAME)
    obs, _ = env.reset(seed=1)  # second seat: the opponent has taken a cell
    taken = int(np.flatnonzero(obs[-9:] == 0)[0])
    _, reward, terminated, _, info = env.step(taken)
    assert reward == -1.0 and terminated and info["illegal"]


def test_the_actor_critic_gives_illegal_actions_no_probability():
    spec = env_spec(GAME)
    assert spec.action_mask_size == 9
    model = ActorCritic.for_env(spec, (32,))
    obs = torch.rand(64, 27)
    obs[:, -9:] = (torch.rand(64, 9) < 0.4).float()
    obs[0, -9:] = 0  # no legal action at all (a finished game): nothing masked, no NaN
    legal = obs[:, -9:] > 0.5
    actions, logp = model.act(obs)
    ok = legal[torch.arange(64), actions] | ~legal.any(-1)
    assert ok.all() and torch.isfinite(logp).all()
    greedy = model.greedy(obs)
    assert (legal[torch.arange(64), greedy] | ~legal.any(-1)).all()
    logp_all, entropy, _ = model.evaluate(obs, actions)
    assert torch.isfinite(logp_all).all() and torch.isfinite(entropy).all()


def test_ppo_learns_tic_tac_toe_against_a_random_player(tmp_path):
    """Greedy play over 100 games, both seats: random against random scores 0 on average; seeds 0-2 here scored
    0.67, 0.63, 0.56 at this budget (0.98 at 100k env steps of the default batch)."""
    run = tmp_path / "ttt"
    distrl.train("ppo", env=GAME, runtime="inline", total_steps=40_000, run_dir=str(run), progress=False,
                 num_envs=8, unroll_length=128)
    assert distrl.evaluate(run, episodes=100)["mean_return"] >= 0.4


def test_an_exported_game_policy_masks_as_the_run_does(tmp_path):
    from distrl.deploy import run_exported

    run = tmp_path / "ttt"
    distrl.train("appo", env=GAME, runtime="inline", total_steps=2000, run_dir=str(run), progress=False,
                 num_envs=8, unroll_length=16)
    out = distrl.export(run, "onnx", out=tmp_path / "ttt.onnx")
    policy = distrl.load_policy(run)
    env = make_env(GAME)
    obs = np.stack([env.reset(seed=s)[0] for s in range(8)])
    actions, _ = run_exported(out["out"], "onnx", {"obs": obs})
    assert list(actions) == [policy.act(o) for o in obs]
    assert all(o[-9:][a] == 1 for o, a in zip(obs, actions))


def test_ape_x_dqn_learns_tic_tac_toe_against_a_random_player(tmp_path):
    """Greedy play over 100 games, both seats: seeds 0-2 here scored 0.69, 0.77, 0.67 at this budget."""
    run = tmp_path / "ttt"
    distrl.train("apex-dqn", env=GAME, runtime="inline", total_steps=30_000, run_dir=str(run), progress=False)
    assert distrl.evaluate(run, episodes=100)["mean_return"] >= 0.45


def test_gorila_learns_tic_tac_toe_against_a_random_player(tmp_path):
    """Its Q-values mask as Ape-X DQN's do. Greedy play over 100 games, both seats: seeds 0-2 here scored 0.89,
    0.82, 0.84 at this budget."""
    run = tmp_path / "ttt"
    distrl.train("gorila", env=GAME, runtime="inline", total_steps=30_000, run_dir=str(run), progress=False)
    assert distrl.evaluate(run, episodes=100)["mean_return"] >= 0.6


@pytest.mark.parametrize("recurrent", [False, True], ids=["q-network", "recurrent-q-network"])
def test_q_values_and_epsilon_greedy_keep_to_legal_actions(recurrent):
    """Ape-X DQN's and GORILA's network, and R2D2's at every step of a sequence: an illegal action's Q is ILLEGAL_Q,
    so neither the greedy choice nor an epsilon-greedy draw is ever illegal."""
    from distrl.agents.common.exploration import EpsilonGreedy
    from distrl.models import QNetwork, RecurrentQNetwork
    from distrl.models.q_networks import ILLEGAL_Q

    obs = torch.rand(256, 27)
    obs[:, -9:] = (torch.rand(256, 9) < 0.3).float()
    obs[:, -1] = 1.0  # at least one legal action in every row
    legal = (obs[:, -9:] > 0.5).numpy()
    if recurrent:
        model = RecurrentQNetwork((27,), 9, (16,), 8, action_mask_size=9)
        with torch.no_grad():  # 256 steps of 4 envs, one sequence each
            q = model.unroll(obs.view(64, 4, 27), model.initial_state(4))[0].reshape(256, 9).numpy()
    else:
        model = QNetwork((27,), 9, (16,), action_mask_size=9)
        with torch.no_grad():
            q = model(obs).numpy()
    assert (q[~legal] == ILLEGAL_Q).all() and (q[legal] > ILLEGAL_Q / 2).all()
    actions = EpsilonGreedy(np.ones(256), 9).choose(q, np.random.default_rng(0))  # every action a random draw
    assert legal[np.arange(256), actions].all()
    assert legal[np.arange(256), q.argmax(-1)].all()
    assert len(set(actions.tolist())) > 5  # random among the legal ones, not always the same


def test_seed_r2d2s_inference_acts_only_legally():
    """SEED + R2D2's server acts for ``slots x envs`` copies at once, each with its own rate: legal moves only."""
    from distrl.agents.common.exploration import epsilon_greedy
    from distrl.models.q_networks import ILLEGAL_Q

    rng = np.random.default_rng(0)
    q = rng.normal(size=(5, 3, 9)).astype(np.float32)
    legal = rng.random((5, 3, 9)) < 0.3
    legal[..., 0] = True
    q[~legal] = ILLEGAL_Q
    for epsilon in (0.0, 1.0):
        actions = epsilon_greedy(q, np.full((5, 3), epsilon), rng)
        assert actions.shape == (5, 3)
        assert np.take_along_axis(legal, actions[..., None], -1).all()


@pytest.mark.parametrize("system", ["es"])
def test_systems_that_do_not_honour_masks_refuse_the_game_in_one_line(system):
    from distrl.api import plan_run

    with pytest.raises(ConfigError, match="does not honour legal-action masks") as e:
        plan_run(system, GAME, runtime="inline")
    assert "ppo" in str(e.value) and "\n" not in str(e.value)


def test_an_unknown_game_is_one_line():
    with pytest.raises(ConfigError, match="no module pettingzoo.classic.nogame_v0"):
        env_spec("pettingzoo:classic.nogame_v0")


def test_an_opponent_named_in_the_id_sits_in_the_other_seat():
    from tests.envs.games import random_play

    returns = [total for _, total in random_play(make_env(GAME + "?opponent=minimax"), 30, 9)]
    assert max(returns) <= 0 and min(returns) == -1  # random play never beats minimax


@pytest.mark.parametrize("query, says", [
    ("?colour=red", "opponent=NAME, or league=DIR&player=ID"),
    ("?opponent=", "opponent=NAME, or league=DIR&player=ID"),
    ("?opponent=random&opponent=minimax", "each once"),
    ("?league=/tmp/l", "league=DIR&player=ID together"),
    ("?league=/tmp/l&player=main&opponent=random", "and no opponent="),
    ("?opponent=perfect", "is random, minimax, heuristic or module:function"),
    ("?opponent=league", "is the league's own"),
    ("?opening=two", "opening= is a number of random plies from 0 to 64"),
    ("?opening=65", "opening= is a number of random plies from 0 to 64"),
])
def test_a_bad_opponent_in_the_id_is_one_line(query, says):
    with pytest.raises(ConfigError, match=says) as e:
        make_env(GAME + query)
    assert "\n" not in str(e.value)


def test_a_random_opening_starts_training_episodes_anywhere_and_evaluation_from_the_start():
    """``?opening=2``: each training episode begins after 0, 1 or 2 random plies, so both seats meet every opening;
    the learner still alternates seats, and an evaluation env plays the game from its own start."""
    training = make_env(GAME + "?opening=2&opponent=minimax", training=True)
    marks, seats, openings = [], [], set()
    for episode in range(60):
        obs, info = training.reset(seed=episode)
        planes = obs[:-9].reshape(9, 2)
        marks.append(int(planes.sum()))
        seats.append(info["seat"])
        if planes.sum() == 1 and info["seat"] == 1:  # one opening ply, the learner's to answer
            openings.add(int(np.flatnonzero(planes[:, 1])[0]))
        assert np.array_equal(obs[-9:], (planes.sum(1) == 0).astype(np.float32))  # the mask fits the board
    assert set(marks) == {0, 1, 2, 3} and seats[:4] == [0, 1, 0, 1]  # 0-2 random plies, then minimax's reply
    assert len(openings) > 3  # openings the opponent (minimax, always in the centre or a corner) never plays too
    evaluation = make_env(GAME + "?opening=2&opponent=minimax")
    assert {int(evaluation.reset(seed=s)[0][:-9].sum()) for s in range(0, 20, 2)} == {0}


def test_an_opening_drawn_again_tells_the_opponent_its_game_restarted():
    """``?opening=9`` can end a game before the learner's first move; the env draws the opening again, and an opponent
    with ``game_restarts()`` (a league's recurrent one forgets its moves there) hears of each redraw."""
    env = make_env(GAME + "?opening=9", training=True)
    game, calls = env.unwrapped.game, {"resets": 0, "restarts": 0}
    reset = game.reset

    def counted_reset(*args, **kwargs):
        calls["resets"] += 1
        return reset(*args, **kwargs)

    def opponent(observation, mask):
        return int(np.flatnonzero(mask)[0])

    game.reset = counted_reset
    opponent.game_restarts = lambda: calls.update(restarts=calls["restarts"] + 1)
    env.unwrapped.opponent = opponent
    redrawn = 0
    for episode in range(200):
        calls.update(resets=0, restarts=0)
        env.reset(seed=episode)
        assert not env.unwrapped._done()  # the learner has a move to make
        assert calls["restarts"] == calls["resets"] - 1  # one for each game started again
        redrawn += calls["restarts"]
    assert redrawn > 0


def test_minimax_plays_tic_tac_toe_only():
    pytest.importorskip("pettingzoo.classic.connect_four_v3")
    with pytest.raises(ConfigError, match="plays classic.tictactoe only"):
        make_env("pettingzoo:classic.connect_four_v3?opponent=minimax")


def test_a_runs_identity_is_the_game_whoever_sits_opposite():
    from distrl.envs.multi_agent import identity

    assert identity(GAME + "?opponent=minimax") == identity(GAME + "?league=/x&player=main") == GAME
    assert identity("CartPole-v1") == "CartPole-v1"


GAME3 = "pettingzoo:tests.envs.odd_one_out"  # three players, PettingZoo's parallel API only


@pytest.mark.parametrize("seat", ["p0", "p1", "p2"])
def test_a_parallel_game_plays_through_pettingzoos_conversion_and_scores_each_round(seat):
    """Simultaneous moves, taken in turn and applied together (``parallel_to_aec``): against two players who always
    show 1, showing 0 is the odd one out in each of the five rounds, whichever seat (first, middle, last) is the
    learner's."""
    env = make_env(f"{GAME3}?seat={seat}&opponent=tests.envs.odd_one_out:shows_one")
    _, info = env.reset(seed=0)
    done, total = False, 0.0
    while not done:
        _, reward, terminated, truncated, _ = env.step(0)
        total, done = total + reward, terminated or truncated
    assert info["seat"] == int(seat[1]) and total == 5.0


class SeatByShow:
    """An opponent that plays each seat as a player of its own: ``p0`` and ``p1`` show fixed values, ``p2`` draws."""

    def __init__(self):
        self.rng, self.starts, self.moves = np.random.default_rng(3), [], []

    def game_starts(self, others, outcomes):
        self.starts.append((others, outcomes))
        self.moves = []

    def play_seat(self, agent, observation, mask):
        shown = {"p0": 0, "p1": 1}.get(agent, int(self.rng.integers(2)))
        self.moves.append((agent, shown))
        return shown


def _odd_one_out_returns(shown: list[dict[str, int]]) -> dict[str, float]:
    """Each agent's return over the rounds, by the game's rules worked here: the one who shows what neither other
    does scores +1 and the others -0.5; a round of three alike scores nothing."""
    returns = dict.fromkeys(("p0", "p1", "p2"), 0.0)
    for round_ in shown:
        odd = [a for a in returns if sum(v == round_[a] for v in round_.values()) == 1]
        for a in returns:
            returns[a] += (1.0 if a in odd else -0.5) if odd else 0.0
    return returns


def test_an_opponent_of_every_seat_hears_the_learners_result_against_each():
    """Three players: a seat-aware opponent (a league's) is asked for each other agent's move by name, and hears at
    each reset the learner's result against each agent of the episode before, its return above, equal to or below
    that agent's by the game's rules; at the first reset, none."""
    env = make_env(GAME3)
    opponent = SeatByShow()
    env.unwrapped.opponent = opponent
    rng = np.random.default_rng(0)
    expected = None
    for episode in range(12):
        _, info = env.reset(seed=episode)
        me = f"p{info['seat']}"
        others, outcomes = opponent.starts[-1]
        assert others == [a for a in ("p0", "p1", "p2") if a != me] and outcomes == expected
        done = False
        while not done:
            mine = int(rng.integers(2))
            opponent.moves.append((me, mine))
            _, _, terminated, truncated, _ = env.step(mine)
            done = terminated or truncated
        # every agent's moves in the order taken: p0, p1, p2 each round, the others' asked of the opponent by name
        assert [a for a, _ in opponent.moves] == ["p0", "p1", "p2"] * 5
        rounds = [dict(opponent.moves[i:i + 3]) for i in range(0, 15, 3)]
        returns = _odd_one_out_returns(rounds)
        expected = {a: "win" if returns[me] > returns[a] else "loss" if returns[me] < returns[a] else "draw"
                    for a in others}
    assert {r for _, o in opponent.starts[1:] for r in o.values()} == {"win", "draw", "loss"}


def test_an_illegal_move_is_a_loss_against_every_seat_and_an_unfinished_seat_has_no_result():
    """An illegal move ends the learner's episode as a loss against each other agent, whatever the game's rewards;
    and a seat-aware opponent hears no result against an agent whose game had not ended with the learner's."""
    env = make_env(GAME)
    opponent = SeatByShow()
    opponent.play_seat = lambda agent, observation, mask: int(np.flatnonzero(mask)[0])
    env.unwrapped.opponent = opponent
    obs, info = env.reset(seed=0)  # the learner first: every square free
    env.step(int(np.flatnonzero(obs[-9:])[0]))
    taken = int(np.flatnonzero(obs[-9:])[0])
    _, reward, terminated, _, step_info = env.step(taken)  # a square already played
    assert reward == -1.0 and terminated and step_info["illegal"] is True
    env.reset(seed=2)
    assert opponent.starts[-1][1] == {"player_2": "loss"}
    for seat, results in (("p2", set()), ("p0", {"p1", "p2"})):  # p2 leaves echo_team after round 2 of 4
        env = make_env(f"pettingzoo:tests.envs.echo_team?seat={seat}")
        opponent = SeatByShow()
        env.unwrapped.opponent = opponent
        obs, _ = env.reset(seed=0)
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(int(obs[1]))
            done = terminated or truncated
        env.reset(seed=1)
        assert set(opponent.starts[-1][1]) == results  # p2 out: p0 and p1 still playing, so no result yet


def test_more_than_two_players_rotate_the_learners_seat_and_seat_fixes_it():
    """Three players: the learner's seat goes round with the seeds, or stays where ``?seat=`` puts it, in training
    envs (vectorised) and evaluation alike; a seat that is not an agent is one line naming the agents."""
    from distrl.envs import make_vec_env

    rotating = make_env(GAME3)
    assert [rotating.reset(seed=s)[1]["seat"] for s in (0, 1, 2, 3)] == [0, 1, 2, 0]
    fixed = make_env(f"{GAME3}?seat=p1")
    assert {fixed.reset(seed=s)[1]["seat"] for s in range(4)} == {1}
    _, infos = make_vec_env(f"{GAME3}?seat=p2", 3, seed=0).reset(seed=0)
    assert list(infos["seat"]) == [2, 2, 2]
    with pytest.raises(ConfigError, match=r"seat=p9 is not one of its agents \(p0, p1, p2\)") as e:
        make_env(f"{GAME3}?seat=p9")
    assert "\n" not in str(e.value)


def test_agents_of_different_spaces_train_in_the_seat_named_and_real_actions_are_one_line():
    """One policy cannot play seats that act or observe differently: ``?seat=`` names the learner's, in the vectorised
    training envs too, and the other plays an opponent over its own mask; an agent with real-valued actions is one
    line."""
    from distrl.envs import make_vec_env

    with pytest.raises(ConfigError, match="observe or act in different spaces.*give .seat=AGENT"):
        make_env("pettingzoo:tests.envs.lopsided")
    for seat, actions, size in (("p0", 2, 2 + 2), ("p1", 3, 5 + 3)):
        env = make_vec_env(f"pettingzoo:tests.envs.lopsided?seat={seat}", 2, seed=0)
        obs, _ = env.reset(seed=0)
        assert obs.shape == (2, size) and env.single_action_space.n == actions
        _, rewards, terminated, _, _ = env.step(np.zeros(2, np.int64))
        assert terminated.all() and set(rewards) <= {-1.0, 1.0}
    with pytest.raises(ConfigError, match="an agent's actions are Box") as e:
        make_env("pettingzoo:tests.envs.box_actions?seat=p0")
    assert "\n" not in str(e.value)


def test_ppo_learns_three_player_kuhn_poker_against_two_random_players(tmp_path):
    """Greedy play over 300 hands, every seat: random play against random play scores 0 on average over the seats.
    Seeds 0-2 here scored 0.69 chips a hand at this budget (their greedy policies played the same hands alike)."""
    pytest.importorskip("pyspiel", reason="games extra not installed")
    run = tmp_path / "kuhn3"
    distrl.train("ppo", env="openspiel:kuhn_poker(players=3)", runtime="inline", total_steps=30_000,
                 run_dir=str(run), progress=False, num_envs=8, unroll_length=128)
    result = distrl.evaluate(run, episodes=300)
    assert len(result["seats"]) == 3 and result["mean_return"] >= 0.35


def test_a_named_opponent_takes_its_tie_breaks_from_the_episodes_seed():
    """Minimax opens anywhere (every opening square draws): env copies seeded apart open apart, one seed always alike
    (a copy's fixed player once started from seed 0 in every copy, so a vector env's copies chose in step)."""
    def opening(seed):  # odd seeds seat the learner second: minimax has moved when the episode starts
        obs, info = make_env(GAME + "?opponent=minimax").reset(seed=seed)
        assert info["seat"] == 1
        return int(np.flatnonzero(obs[:18].reshape(9, 2)[:, 1])[0])

    openings = [opening(seed) for seed in range(1, 40, 2)]
    assert len(set(openings)) > 3
    assert [opening(seed) for seed in range(1, 40, 2)] == openings
