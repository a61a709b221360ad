"""``distrl league``: players train in turn against the coordinator's choices, snapshots join on their schedule, a
main exploiter starts again after its snapshot, the records and pictures are written, a resumed league keeps its
payoff counts and pool, and bad input is one line with nothing written."""

import csv
import json
from functools import partial

import numpy as np
import pytest
import yaml

import distrl
from distrl.cli import main
from distrl.league.run import run_league

GAME = "pettingzoo:classic.tictactoe_v3"
SMALL = {"num_envs": 8, "unroll_length": 128}  # PPO's batches of 1,024 env steps


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    folder = tmp_path_factory.mktemp("league") / "ttt&co?"  # quoted in the players' env ids
    summary = run_league("ppo", GAME + "?opening=2", players="main=1,main_exploiter=1", fixed="random",
                         total_steps=2048, slice_steps=1024, snapshot_steps=1024, player_runtime="inline",
                         run_dir=str(folder), settings=SMALL)
    return folder, summary


def test_players_train_in_turn_and_snapshots_join_on_their_schedule(league):
    folder, summary = league
    rows = _rows(folder / "league.csv")
    assert [(r["player"], int(r["env_steps"])) for r in rows] == [
        ("main", 1024), ("main_exploiter", 1024), ("main", 2048), ("main_exploiter", 2048)]
    assert all(int(r["games"]) == int(r["wins"]) + int(r["draws"]) + int(r["losses"]) > 0 for r in rows)
    joined = _rows(folder / "joined.csv")
    assert [(r["snapshot"], r["player"], r["reset"]) for r in joined] == [
        ("main@0", "main", "0"), ("main_exploiter@0", "main_exploiter", "1"), ("main@1", "main", "0"),
        ("main_exploiter@1", "main_exploiter", "1")]
    assert sorted(p.name for p in (folder / "pool").iterdir()) == sorted(f"{r['snapshot']}.safetensors"
                                                                         for r in joined)
    assert summary["snapshots"] == [r["snapshot"] for r in joined]
    assert summary["games"] == sum(int(r["games"]) for r in rows)
    # the main exploiter plays the main agent (its latest weights, then its snapshot) from its first slice on
    assert "main" in dict(pair.rsplit(":", 1) for pair in rows[1]["opponents"].split())
    for name in ("payoff.png", "ratings.png", "summary.json", "state.json"):
        assert (folder / name).stat().st_size > 0
    state = json.loads((folder / "state.json").read_text())
    assert sum(map(sum, state["payoff"]["totals"][0])) > 0  # games between different players were counted


def test_a_player_is_an_ordinary_run_that_eval_plays(league):
    folder, _ = league
    config = (folder / "players" / "main" / "config.yaml").read_text()
    assert "tictactoe_v3?opening=2&league=" in config  # the league's random openings reach its players' games
    result = distrl.evaluate(folder / "players" / "main", episodes=10, opponent="random")
    assert result["wins"] + result["draws"] + result["losses"] == 10


def test_a_resumed_league_keeps_its_counts_and_its_pool(league, tmp_path):
    import shutil

    folder = tmp_path / "again"
    shutil.copytree(league[0], folder)  # a league moved elsewhere: its players are bound to its new folder
    saved = json.loads((folder / "league.json").read_text())
    del saved["fixed_share"]  # as a league saved before the setting was: it resumes with none
    (folder / "league.json").write_text(json.dumps(saved))
    before = json.loads((folder / "state.json").read_text())
    summary = run_league("ppo", resume=True, run_dir=str(folder), total_steps=3072, mode="pfsp", fixed=" random",
                         players="main=1, main_exploiter=1", fixed_share=0.0,  # (as a league without it has)
                         settings={"num_envs": "8"})  # the league's own settings, given again as text: accepted
    after = json.loads((folder / "state.json").read_text())
    old = len(before["payoff"]["players"])
    for i in range(old):
        for j in range(old):
            assert after["payoff"]["totals"][0][i][j] >= before["payoff"]["totals"][0][i][j]
    assert sum(map(sum, after["payoff"]["totals"][0])) > sum(map(sum, before["payoff"]["totals"][0]))
    assert [p["env_steps"] for p in summary["players"]] == [3072, 3072]
    assert len(_rows(folder / "league.csv")) == 6 and summary["snapshots"][:4] == league[1]["snapshots"]
    walls = [float(r["wall_s"]) for r in _rows(folder / "league.csv")]  # its clock goes on from the session before's
    assert walls == sorted(walls)


def test_an_exploiters_reset_is_checkpointed_when_it_happens(league):
    """state.json records the reset at once; so does the player's checkpoint (a league killed before the next one
    would otherwise resume the exploiter from the weights it froze)."""
    import torch
    from safetensors.torch import load_file

    folder = league[0] / "players" / "main_exploiter"
    initial = torch.load(folder / "initial.pt", weights_only=True)["modules"]["model"]
    at_reset = load_file(folder / "checkpoints" / "step-000000001024" / "model.safetensors")
    assert all(torch.equal(at_reset[name], value) for name, value in initial.items())


def test_a_player_killed_before_its_first_checkpoint_starts_anew_when_the_league_resumes(league, tmp_path):
    """Its config.yaml is written when its trainer is made, its first checkpoint only once it has trained: a league
    killed in between resumes that player from nothing, and the others from their checkpoints."""
    import shutil

    folder = tmp_path / "killed"
    shutil.copytree(league[0], folder)
    shutil.rmtree(folder / "players" / "main_exploiter" / "checkpoints")
    summary = run_league("ppo", resume=True, run_dir=str(folder), total_steps=3072)
    rows = _rows(folder / "league.csv")[4:]
    assert [(r["player"], int(r["env_steps"])) for r in rows] == [
        ("main", 3072), ("main_exploiter", 1024), ("main_exploiter", 2048), ("main_exploiter", 3072)]
    assert [p["env_steps"] for p in summary["players"]] == [3072, 3072]


def test_a_league_resumed_after_a_default_changed_builds_its_opponents_as_its_players_were(tmp_path):
    """appo's obs_norm became a default after leagues of it were saved: their players resume without the normaliser
    (the setting absent from config.yaml, OLDER_RUN_DEFAULTS), and the pool must build its opponents so too, or the
    snapshots' weights would not load in the games."""
    folder = tmp_path / "old"
    small = {"num_envs": 4, "unroll_length": 32}
    run_league("appo", GAME, total_steps=256, slice_steps=128, snapshot_steps=128, player_runtime="inline",
               run_dir=str(folder), settings={**small, "obs_norm": False})
    saved = json.loads((folder / "league.json").read_text())
    del saved["settings"]["obs_norm"]  # as a league saved before the setting's default changed
    (folder / "league.json").write_text(json.dumps(saved))
    config = yaml.safe_load((folder / "players" / "main" / "config.yaml").read_text())
    del config["system_config"]["obs_norm"]
    (folder / "players" / "main" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    summary = run_league("appo", resume=True, run_dir=str(folder), total_steps=512)
    assert summary["players"][0]["env_steps"] >= 512 and summary["games"] > 0
    assert [r["player"] for r in _rows(folder / "league.csv")][-1] == "main"


def test_a_league_on_local_plays_its_games_in_actor_processes(tmp_path):
    folder = tmp_path / "local"
    summary = run_league("appo", GAME, total_steps=512, slice_steps=256, snapshot_steps=256, player_runtime="local",
                         run_dir=str(folder), settings={"num_actors": 2, "num_envs": 4, "unroll_length": 32})
    assert summary["players"][0]["env_steps"] >= 512 and summary["games"] > 0
    assert summary["snapshots"][0] == "main@0"


@pytest.mark.parametrize("argv, says", [
    (["--players", "main=0"], "at least one main agent"),
    (["--players", "boss=1"], "kinds main, main_exploiter, league_exploiter"),
    (["--players", "main=1,main=2"], "each kind once"),
    (["--mode", "chaos"], "--mode must be one of naive, uniform, pfsp"),
    (["--snapshot-rule", "never"], "--snapshot-rule must be one of schedule, win_rate"),
    (["--runtime", "k8s"], "--runtime must be one of local, ray"),
    (["--player-runtime", "ray"], "--player-runtime must be one of local, inline"),
    (["--runtime", "ray", "--player-runtime", "local"], "running its system inline"),
    (["--set", "seed=3"], "set by the league itself"),
    (["--env", "CartPole-v1"], "a league plays a game: --env pettingzoo:GAME"),
    (["--env", "pettingzoo:tests.envs.lopsided"], "observe or act in different spaces"),
    (["--env", GAME + "?opponent=random"], "its '?' part at most opening=N"),
    (["--bind", "127.0.0.1:0"], "nothing listens"),  # inline players (ppo's own runtime)
    (["--fixed", "perfect"], "is random, minimax, heuristic or module:function"),
    (["--fixed", "random,random"], "each fixed player once"),
    (["--fixed-share", "0.2"], "above 0 only with --fixed"),
    (["--fixed", "random", "--fixed-share", "1.5"], "--fixed-share is the share of games"),
    (["--fixed", "random", "--fixed-share", "nan"], "--fixed-share is the share of games"),
    (["--fixed", "main"], "each fixed player once"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    folder = tmp_path / "league"
    assert main(["league", "ppo", "--env", GAME, "--run-dir", str(folder), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1
    assert not folder.exists()


@pytest.mark.parametrize("bind", ["nowhere", "256.1.1.1:0"])  # refused as given, or when the coordinator tries
def test_a_coordinator_that_cannot_listen_is_one_line_and_leaves_no_league(tmp_path, capsys, bind):
    folder = tmp_path / "league"
    assert main(["league", "appo", "--env", GAME, "--run-dir", str(folder), "--bind", bind]) == 2
    err = capsys.readouterr().err.strip()
    assert f"cannot listen on '{bind}'" in err and len(err.splitlines()) == 1
    assert not folder.exists()


def test_recurrent_players_play_a_league(tmp_path):
    """R2D2's players: their snapshots join and their games are played, each opponent's LSTM state its game's own
    (``test_opponent.py``)."""
    summary = run_league("r2d2", GAME, players="main=1,main_exploiter=1", total_steps=2048, slice_steps=1024,
                         snapshot_steps=1024, player_runtime="inline", run_dir=str(tmp_path / "r2d2"),
                         settings={"num_envs": 8})
    assert summary["games"] > 0 and {"main@0", "main_exploiter@0"} <= set(summary["snapshots"])
    assert all(p["env_steps"] >= 2048 for p in summary["players"])


@pytest.mark.parametrize("system, says", [("es", "does not honour legal-action masks"), ("a3c", "need a learner"),
                                          ("gorila", "need a learner")])  # its learners are many, with a server
def test_systems_that_cannot_be_players_are_refused(tmp_path, capsys, system, says):
    assert main(["league", system, "--env", GAME, "--run-dir", str(tmp_path / "l")]) == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize("damage, says", [
    (lambda f: (f / "state.json").write_text('{"payoff": {"players": ["main"]}}'), "state.json or the pool is damaged"),
    (lambda f: next((f / "pool").iterdir()).write_bytes(b"not safetensors"), "state.json or the pool is damaged"),
    (lambda f: (f / "state.json").write_text((f / "state.json").read_text().replace(
        '"main": ', '"main": NaN, "was": ', 1)), "state.json or the pool is damaged"),
    # a player's checkpoints all damaged: its resume is the error, not a fresh start that would delete them
    (lambda f: [(c / "state.json").write_text("{") for c in (f / "players" / "main_exploiter" / "checkpoints")
                .glob("step-*")], "no loadable checkpoint"),
])
def test_a_damaged_league_is_one_line_on_resume_and_left_as_it_was(league, tmp_path, capsys, damage, says):
    import shutil

    folder = tmp_path / "damaged"
    shutil.copytree(league[0], folder)
    damage(folder)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert main(["league", "ppo", "--resume", "--run-dir", str(folder), "--total-steps", "9999"]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before  # league.json too


@pytest.mark.parametrize("argv, says", [(["appo"], "this command gives system 'appo' (started with 'ppo')"),
                                        (["ppo", "--env", "openspiel:kuhn_poker"], "--env 'openspiel:kuhn_poker'"),
                                        (["ppo", "--mode", "naive"], "--mode 'naive' (started with 'pfsp')"),
                                        (["ppo", "--fixed", "minimax"], "--fixed 'minimax' (started with 'random')"),
                                        (["ppo", "--fixed-share", "0.3"], "--fixed-share 0.3"),
                                        (["ppo", "--players", "main=2"], "--players 'main=2'"),
                                        (["ppo", "--seed", "3"], "--seed 3 (started with 0)"),
                                        (["ppo", "--runtime", "ray"], "--runtime 'ray'"),
                                        (["ppo", "--set", "lr=0.5"], "--set lr=0.5 (started with unset)"),
                                        (["ppo", "--set", "num_envs=4"], "--set num_envs=4 (started with 8)"),
                                        (["ppo", "--total-steps", "1024"], "budget may grow, not shrink")])
def test_a_resume_with_other_settings_is_refused(league, capsys, argv, says):
    """A resumed league keeps its settings: one given that differs is one line, not silently ignored."""
    before = {p: p.read_bytes() for p in league[0].rglob("*") if p.is_file()}
    assert main(["league", *argv, "--resume", "--run-dir", str(league[0])]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in league[0].rglob("*") if p.is_file()} == before


def test_players_spread_over_a_two_node_ray_cluster(tmp_path):
    ray = pytest.importorskip("ray", reason="ray extra not installed")
    from tests.ray_cluster import two_node_cluster

    cluster = two_node_cluster()
    try:
        ray.init(address=cluster.address, include_dashboard=False, logging_level="ERROR")
        folder = tmp_path / "ray"
        summary = run_league("ppo", GAME, players="main=1,main_exploiter=1", total_steps=2048, slice_steps=1024,
                             snapshot_steps=1024, runtime="ray", run_dir=str(folder), settings=SMALL)
        rows = _rows(folder / "league.csv")
        assert len({r["node"] for r in rows}) == 2  # one player on each node, their games played there
        assert sorted((r["player"], int(r["env_steps"])) for r in rows) == [
            ("main", 1024), ("main", 2048), ("main_exploiter", 1024), ("main_exploiter", 2048)]
        assert all(int(r["games"]) > 0 for r in rows) and summary["games"] == sum(int(r["games"]) for r in rows)
        assert "main@0" in summary["snapshots"] and "main_exploiter@0" in summary["snapshots"]

        # a player whose Ray actor is killed after its first slice is made again and resumes from its checkpoint, and
        # the payoff table keeps its counts
        folder, seen = tmp_path / "killed", []
        summary = run_league("ppo", GAME, players="main=1,main_exploiter=1", total_steps=3072, slice_steps=1024,
                             snapshot_steps=1024, runtime="ray", run_dir=str(folder), log=partial(_kill_a_player,
                             folder, seen), settings={**SMALL, "checkpoint_interval_s": 0.1})
        assert seen and all(p["env_steps"] >= 3072 for p in summary["players"])
        assert summary["games"] > seen[0]  # the games before the kill still counted, and more after it
        rows = _rows(folder / "league.csv")
        for pid in ("main", "main_exploiter"):  # each slice goes on from the one before: resumed, not started anew
            steps = [int(r["env_steps"]) for r in rows if r["player"] == pid]
            assert steps == sorted(set(steps)), (pid, steps)
    finally:
        ray.shutdown()


def _kill_a_player(folder, seen, line):
    """The league's log: after the first slice, kill one player's Ray actor (its process), once."""
    import psutil

    if seen or "games (" not in line:
        return
    actors = [p for p in psutil.process_iter(["cmdline"]) if "ray::Player" in " ".join(p.info["cmdline"] or [])]
    assert actors
    seen.append(sum(int(r["games"]) for r in _rows(folder / "league.csv")))
    actors[0].kill()


def _league_process(folder, *argv):
    """``distrl league appo`` in a process of its own, once its first slice has ended (a bounded wait)."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "distrl", "league", "appo", "--env", GAME, "--run-dir", str(folder),
                             "--quiet", "--set", "num_actors=2", "--set", "num_envs=4", "--set", "unroll_length=32",
                             *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 180
    while not _rows_if(folder / "league.csv") and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, proc.stderr.read()
    return proc


def _rows_if(path):
    return _rows(path) if path.is_file() else []


def test_sigterm_ends_a_league_with_every_player_checkpointed_and_no_process_left(tmp_path):
    import signal

    import psutil

    folder = tmp_path / "stopped"
    proc = _league_process(folder, "--total-steps", "10000000", "--slice-steps", "256", "--fixed", "random")
    family = psutil.Process(proc.pid).children(recursive=True)
    assert family  # the player's actor processes
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 130
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["interrupted"] and any((folder / "players" / "main" / "checkpoints").iterdir())
    # the games of the slice under way are in league.csv too: as many against other players as the payoff table holds
    state = json.loads((folder / "state.json").read_text())
    main_index = state["payoff"]["players"].index("main")
    in_rows = sum(int(n) for r in _rows(folder / "league.csv") for pair in r["opponents"].split()
                  for opponent, n in [pair.rsplit(":", 1)] if opponent != "main")
    assert in_rows == sum(state["payoff"]["totals"][0][main_index]) > 0
    last = max((folder / "players" / "main" / "checkpoints").glob("step-*"))
    assert summary["players"][0]["env_steps"] == json.loads((last / "state.json").read_text())["counters"]["env_steps"]
    gone, alive = psutil.wait_procs(family, timeout=30)
    assert not alive, [p.cmdline() for p in alive]


def test_a_killed_actor_of_a_player_is_restarted_and_the_league_goes_on(tmp_path):
    import psutil

    folder = tmp_path / "killed"
    proc = _league_process(folder, "--total-steps", "4096", "--slice-steps", "256", "--snapshot-steps", "1024")
    games_before = sum(int(r["games"]) for r in _rows(folder / "league.csv"))
    forkservers = [p for p in psutil.Process(proc.pid).children() if "forkserver" in " ".join(p.cmdline())]
    actors = [a for f in forkservers for a in f.children()]  # the forkserver's children: the player's actors
    assert actors
    actors[-1].kill()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    summary = json.loads(out.strip().splitlines()[-1])
    player = json.loads((folder / "players" / "main" / "summary.json").read_text())
    assert player["actor_restarts"] >= 1 and summary["players"][0]["env_steps"] >= 4096
    assert summary["games"] > games_before  # the league went on counting games after the kill


def test_a_league_of_a_three_player_game_draws_an_opponent_per_seat_and_counts_a_result_per_seat(tmp_path):
    """Three-player Kuhn poker: each game's two other seats are each the coordinator's choice (random play, the
    player's snapshots, its own latest weights), and each game is two results, the player against each seat."""
    pytest.importorskip("pyspiel", reason="games extra not installed")
    folder = tmp_path / "kuhn3"
    summary = run_league("ppo", "openspiel:kuhn_poker(players=3)", fixed="random", total_steps=2048,
                         slice_steps=1024, snapshot_steps=1024, player_runtime="inline", run_dir=str(folder),
                         settings=SMALL)
    rows = _rows(folder / "league.csv")
    for row in rows:
        seats = sum(int(n) for n in dict(pair.rsplit(":", 1) for pair in row["opponents"].split()).values())
        assert int(row["games"]) > 100 and int(row["wins"]) + int(row["draws"]) + int(row["losses"]) == seats \
            == 2 * int(row["games"])
    state = json.loads((folder / "state.json").read_text())
    players, games = state["payoff"]["players"], np.array(state["payoff"]["totals"][0])
    assert games[players.index("main"), players.index("random")] > 0  # the pairs' counts, as in a game of two
    assert games[players.index("main"), players.index("main@0")] > 0
    assert summary["games"] == sum(int(r["games"]) for r in rows)
    assert distrl.evaluate(folder / "players" / "main", episodes=6, opponent="random")["episodes"] == 6


def test_a_league_plays_an_openspiel_game_and_its_main_agent_is_scored_by_nash_conv(tmp_path):
    pytest.importorskip("pyspiel", reason="games extra not installed")
    from distrl.league.exploitability import nash_conv

    folder = tmp_path / "kuhn"
    summary = run_league("ppo", "openspiel:kuhn_poker", total_steps=2048, slice_steps=1024, snapshot_steps=1024,
                         run_dir=str(folder), settings=SMALL)
    assert summary["games"] > 500 and summary["snapshots"] == ["main@0", "main@1"]
    score = nash_conv(distrl.load_policy(folder / "players" / "main").model, "kuhn_poker")
    assert np.isfinite(score) and score >= 0.0  # what NashConv is; its value at scale: benchmarks/league_kuhn.py


@pytest.mark.parametrize("argv", [[], ["--fixed", "random"]])
def test_a_second_head_in_a_league_without_fixed_games_is_one_line(tmp_path, capsys, argv):
    """Ape-X DQN's ``fixed_head_slack`` learns its second head from the games against the league's fixed players: a
    league without them (no --fixed, or no share of games) is refused before it starts."""
    folder = tmp_path / "league"
    assert main(["league", "apex-dqn", "--env", GAME, "--run-dir", str(folder), "--set", "fixed_head_slack=0.05",
                 *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert "give --fixed (e.g. random) and a --fixed-share above 0" in err and len(err.splitlines()) == 1
    assert not folder.exists()
