"""A population that plays itself: the members' games are played against each other through the coordinator they
share, inline and from actor processes, a resumed population plays on, and a setting that cannot play is one
line."""

import csv

import pytest

from distrl.cli import main
from distrl.core import shared
from distrl.errors import ConfigError
from distrl.pbt import run_pbt
from distrl.runtime.run.run_dir import read_config

GAME = "pettingzoo:classic.tictactoe_v3"
SMALL = {"num_envs": 8, "unroll_length": 32}
EXPLORE = ["lr=loguniform(1e-4,1e-3)"]


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("member_runtime", ["inline", "local"])
def test_the_members_play_each_other_and_a_resumed_population_plays_on(tmp_path, member_runtime):
    pop = tmp_path / "pop"
    settings = SMALL if member_runtime == "inline" else {"num_actors": 1}
    system = "ppo" if member_runtime == "inline" else "appo"
    total = 4096 if member_runtime == "inline" else 20_000  # APPO's slices end on its batches (8,192 env steps here)
    seen = []

    def stop_after_two(line):  # each member ready once (a checkpoint each), then Ctrl-C
        seen.append(line)
        if len(seen) == 2:
            raise KeyboardInterrupt

    summary = run_pbt(system, GAME, population=2, explore=EXPLORE, ready_steps=1024, total_steps=total,
                      member_runtime=member_runtime, run_dir=str(pop), settings=settings, self_play=True,
                      log=stop_after_two)
    games = summary["self_play"]["games"]
    assert summary["interrupted"] and games["m0"]["m1"] > 0 and games["m0"]["m1"] == games["m1"]["m0"]
    played = rows(pop / "games.csv")
    assert len(played) == len(rows(pop / "population.csv")) and {r["member"] for r in played} == {"0", "1"}
    assert all(int(r["wins"]) + int(r["draws"]) + int(r["losses"]) > 0 for r in played)
    assert "league=" in read_config(pop / "members" / "m0")["run"]["env"]  # its games' opponents: the population
    with pytest.raises(ConfigError, match="no shared service"):  # the population's handle is gone with it
        shared.handle(str(pop.resolve()))

    summary = run_pbt(system, run_dir=str(pop), resume=True)
    assert not summary["interrupted"] and all(m["env_steps"] >= total for m in summary["members"])
    assert summary["self_play"]["games"]["m0"]["m1"] > 0  # this session's games: the members found each other again
    assert len(rows(pop / "games.csv")) == len(rows(pop / "population.csv"))


@pytest.mark.parametrize("argv, says", [
    (["ppo", "--env", "CartPole-v1"], "a population that plays itself plays a game: --env pettingzoo:GAME"),
    (["ppo", "--env", GAME + "?opponent=random"], "its '?' part at most opening=N"),
    (["ppo", "--env", "pettingzoo:tests.envs.lopsided"], "observe or act in different spaces"),
])
def test_what_cannot_play_itself_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    pop = tmp_path / "pop"
    assert main(["pbt", *argv, "--self-play", "--explore", "lr=uniform(1e-4,1e-3)", "--run-dir", str(pop)]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1
    assert not pop.exists()
