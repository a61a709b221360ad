"""``distrl pbt`` end to end: the population's directory, lineage, summary and plot; an interrupted population
resumed; bad input one line and exit 2; members spread over a two-node Ray cluster (one population playing
itself there)."""

import csv
import json
import shutil
from functools import partial

import pytest

from distrl.cli import main
from distrl.pbt import run_pbt

EXPLORE = ["lr=loguniform(1e-4,1e-2)", "entropy_coef=choice(0.0,0.01,0.03)"]
# small batches, one update each (A2C's paper update): the population's machinery, not its learning, is under test
SMALL = {"num_envs": 8, "unroll_length": 32}
SMALL_FLAGS = [flag for key, value in SMALL.items() for flag in ("--set", f"{key}={value}")]


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_a_population_trains_exploits_and_writes_its_records(tmp_path, capsys):
    pop = tmp_path / "pop"
    code = main(
        [
            "pbt",
            "a2c",
            "--env",
            "CartPole-v1",
            "--population",
            "3",
            *sum((["--explore", e] for e in EXPLORE), []),
            "--ready-steps",
            "4000",
            "--total-steps",
            "16000",
            "--run-dir",
            str(pop),
            "--json",
            "--quiet",
            *SMALL_FLAGS,
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary == json.loads((pop / "summary.json").read_text())
    assert summary["population"] == 3 and summary["env_steps_total"] >= 3 * 16_000
    assert summary["exploits"] >= 1 and 0 <= summary["best_member"] < 3
    assert [s["env_steps"] for s in summary["best_schedule"]] == sorted(
        s["env_steps"] for s in summary["best_schedule"]
    )
    for i in range(3):
        member = pop / "members" / f"m{i}"
        assert (member / "config.yaml").is_file() and (member / "metrics.csv").is_file()
        assert any((member / "checkpoints").iterdir())
    ready = rows(pop / "population.csv")
    assert len(ready) == 3 * 4 and {r["member"] for r in ready} == {"0", "1", "2"}
    lineage = rows(pop / "lineage.csv")
    assert len(lineage) == summary["exploits"]
    for e in lineage:  # the worse member copied a better one; the checksum both ends agreed on is logged
        assert e["member"] != e["source"] and float(e["member_score"]) <= float(e["source_score"])
        assert len(e["checksum"]) == 64 and set(json.loads(e["after"])) == {"lr", "entropy_coef"}
    assert main(["plot", str(pop)]) == 0 and (pop / "population.png").stat().st_size > 10_000


def test_an_interrupted_population_resumes_where_it_stopped(tmp_path):
    pop = tmp_path / "pop"
    seen = []

    def stop_after_four(line):
        seen.append(line)
        if len(seen) == 4:
            raise KeyboardInterrupt

    summary = run_pbt("a2c", "CartPole-v1", population=2, explore=EXPLORE[:1], ready_steps=4000, total_steps=24_000,
                      run_dir=str(pop), log=stop_after_four, settings=SMALL)
    assert summary["interrupted"] and summary["env_steps_total"] < 2 * 24_000
    json.loads((pop / "state.json").read_text())  # strict JSON (no -Infinity)
    before = rows(pop / "population.csv")
    summary = run_pbt("a2c", run_dir=str(pop), resume=True, population=2, explore=EXPLORE[:1], total_steps=24_000,
                      settings={"num_envs": "8"})  # its own settings given again (a --set as text): accepted
    assert not summary["interrupted"] and all(m["env_steps"] >= 24_000 for m in summary["members"])
    after = rows(pop / "population.csv")
    assert after[:len(before)] == before and len(after) > len(before)
    for i in ("0", "1"):  # each member went on from its checkpoint: its env steps never go back
        steps = [int(r["env_steps"]) for r in after if r["member"] == i]
        assert steps == sorted(steps) and steps[-1] >= 24_000
    walls = [float(r["wall_s"]) for r in after]  # and its clock went on from the session before's
    assert walls == sorted(walls) and walls[len(before)] >= walls[len(before) - 1]
    # a finished population resumed trains nothing and keeps its members' last scores in its summary and state
    state = json.loads((pop / "state.json").read_text())
    again = run_pbt("a2c", run_dir=str(pop), resume=True)
    assert [m["score"] for m in again["members"]] == [m["score"] for m in summary["members"]]
    assert all(m["score"] is not None for m in again["members"])
    assert (again["best_member"], again["best_score"]) == (summary["best_member"], summary["best_score"])
    assert json.loads((pop / "summary.json").read_text())["best_score"] == summary["best_score"]
    assert json.loads((pop / "state.json").read_text()) == state and rows(pop / "population.csv") == after
    # its budget may grow, not shrink: the members go on to the new one
    from distrl.errors import ConfigError

    with pytest.raises(ConfigError, match="may grow, not shrink"):
        run_pbt("a2c", run_dir=str(pop), resume=True, total_steps=8000)
    seen_scores = []  # state.json's scores as each member reports: one not reported yet keeps its last
    grown = run_pbt("a2c", run_dir=str(pop), resume=True, total_steps=32_000,
                    log=lambda line: seen_scores.append([m["score"] for m in
                                                         json.loads((pop / "state.json").read_text())["members"]]))
    assert seen_scores and all(None not in scores for scores in seen_scores)
    assert all(m["env_steps"] >= 32_000 for m in grown["members"])
    assert json.loads((pop / "pbt.json").read_text())["total_steps"] == 32_000


@pytest.mark.parametrize("argv, says", [
    (["--explore", "gamma=uniform(0.9,0.99)"], "not a hyperparameter of a2c (valid: entropy_coef, lr)"),
    (["--explore", "lr=loguniform(0,1)"], "0 < LOW < HIGH"),
    (["--explore", "lr=uniform(1e-4,1e-2)", "--population", "1"], "at least 2"),
    ([], "at least one --explore"),
    (["--explore", "lr=uniform(1e-4,1e-2)", "--runtime", "k8s"], "valid: local, ray"),
    (["--explore", "lr=uniform(1e-4,1e-2)", "--member-runtime", "k8s"], "--member-runtime must be one of inline,"),
    (["--explore", "lr=uniform(1e-4,1e-2)", "--set", "seed=3"], "set by pbt itself"),
    (["--explore", "lr=uniform(-1,-0.5)"], "setting 'lr' must be > 0.0"),
    (["--explore", "lr=loguniform(1e-4,1e308)"], "setting 'lr' must be <= 10.0"),
    (["--explore", "lr=uniform(-1e308,1e308)"], "setting 'lr' must be > 0.0"),
    (["--explore", "entropy_coef=choice(-0.1,0.01)"], "setting 'entropy_coef' must be >= 0.0"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    pop = tmp_path / "pop"
    assert main(["pbt", "a2c", "--env", "CartPole-v1", "--run-dir", str(pop), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1
    assert not pop.exists()  # nothing written


def test_systems_that_learn_in_their_workers_are_refused(tmp_path, capsys):
    assert main(["pbt", "gorila", "--env", "CartPole-v1", "--explore", "lr=uniform(1e-4,1e-2)",
                 "--run-dir", str(tmp_path / "p")]) == 2
    assert "learns in its workers" in capsys.readouterr().err


def test_members_spread_over_a_two_node_ray_cluster(tmp_path):
    ray = pytest.importorskip("ray", reason="ray extra not installed")
    from tests.ray_cluster import two_node_cluster

    c = two_node_cluster()
    try:
        ray.init(address=c.address, include_dashboard=False, logging_level="ERROR")
        summary = run_pbt("a2c", "CartPole-v1", population=2, explore=EXPLORE, ready_steps=4000, total_steps=16_000,
                          runtime="ray", run_dir=str(tmp_path / "pop"), settings=SMALL)
        assert summary["nodes"] == 2 and summary["runtime"] == "ray"
        assert all(m["env_steps"] >= 16_000 for m in summary["members"])
        assert len(rows(tmp_path / "pop" / "lineage.csv")) == summary["exploits"]
        # a copy from one node's member to the other's, through the object store, verified at the target
        from distrl.pbt.members import RayPool
        from distrl.pbt.population import make_member_trainer

        makers = [
            partial(
                make_member_trainer,
                "a2c",
                {
                    "env": "CartPole-v1",
                    "runtime": "inline",
                    "seed": i,
                    "total_steps": 50_000,
                    "run_dir": str(tmp_path / f"m{i}"),
                    **SMALL,
                },
            )
            for i in range(2)
        ]
        pool = RayPool(makers, [False, False])
        try:
            for i in range(2):
                pool.submit(i, 2000)
            reports = dict(pool.wait_any() for _ in range(2))
            assert reports[0]["node"] != reports[1]["node"]
            snapshot = ray.get(pool.workers[0].snapshot.remote())
            assert pool.copy(0, 1, {"lr": 1e-3}) == snapshot["checksum"]
            # a call that finds its member's actor dead makes it again (from its checkpoint, or anew) and answers
            dead = pool.workers[0]
            ray.kill(dead, no_restart=True)
            again = pool.call(0, "snapshot")
            assert pool.workers[0] is not dead and again is not None and pool.restarts[0] == 1
            # made again, it holds its checkpoint's state, not the slice that scored: no copy from it until its next
            assert pool.copy(0, 1, {"lr": 1e-3}) is None
            pool.submit(0, 500)
            assert pool.wait_any()[0] == 0
            assert pool.copy(0, 1, {"lr": 1e-3}) == ray.get(pool.workers[0].snapshot.remote())["checksum"]
        finally:
            pool.close()
        # a population that plays itself on two nodes: each member's games reach the coordinator through the handle
        # its actor got with its trainer (no shared folder); a member whose actor is killed after its first slice is
        # made again from its checkpoint and trains on
        killed = []
        summary = run_pbt("ppo", "pettingzoo:classic.tictactoe_v3", population=2, explore=EXPLORE[:1],
                          ready_steps=1024, total_steps=3072, runtime="ray", run_dir=str(tmp_path / "play"),
                          settings={**SMALL, "checkpoint_interval_s": 0.1}, self_play=True,
                          log=partial(_kill_a_member, killed))
        assert killed and summary["nodes"] == 2 and summary["self_play"]["games"]["m0"]["m1"] > 0
        assert all(m["env_steps"] >= 3072 for m in summary["members"])
        for i in range(2):  # each slice goes on from the one before: resumed, not started anew
            steps = [int(r["env_steps"]) for r in rows(tmp_path / "play" / "population.csv") if r["member"] == str(i)]
            assert steps == sorted(set(steps)), (i, steps)
    finally:
        ray.shutdown()
        c.shutdown()


def _kill_a_member(killed, line):
    """The population's log: after a member's first slice, kill one member's Ray actor (its process), once."""
    import psutil

    if killed:
        return
    actors = [p for p in psutil.process_iter(["cmdline"]) if "ray::TrainerMember" in " ".join(p.info["cmdline"] or [])]
    assert actors
    killed.append(actors[0].pid)
    actors[0].kill()


@pytest.fixture(scope="module")
def stopped_population(tmp_path_factory):
    """A population of two stopped after its members reported (a checkpoint each), to damage copies of."""
    pop = tmp_path_factory.mktemp("stopped") / "pop"
    seen = []

    def stop_after_four(line):
        seen.append(line)
        if len(seen) == 4:
            raise KeyboardInterrupt

    run_pbt("a2c", "CartPole-v1", population=2, explore=EXPLORE[:1], ready_steps=4000, total_steps=24_000,
            run_dir=str(pop), log=stop_after_four, settings=SMALL)
    return pop


def _edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


DAMAGES = {
    "a member's lr of -5 in state.json": lambda pop: _edit_json(
        pop / "state.json", lambda d: d["members"][0]["hyperparameters"].update(lr=-5.0)),
    "a fraction of 9 in pbt.json": lambda pop: _edit_json(pop / "pbt.json", lambda d: d.update(fraction=9)),
    "a population of 'two' in pbt.json": lambda pop: _edit_json(pop / "pbt.json", lambda d: d.update(population="two")),
    "a budget of null in pbt.json": lambda pop: _edit_json(pop / "pbt.json", lambda d: d.update(total_steps=None)),
    "a budget of 1e9 in pbt.json": lambda pop: _edit_json(pop / "pbt.json", lambda d: d.update(total_steps=1e9)),
    "a member's score of 'high' in state.json": lambda pop: _edit_json(
        pop / "state.json", lambda d: d["members"][0].update(score="high")),
    "a damaged population.csv": lambda pop: (pop / "population.csv").write_text("wall_s,member\n1.0,zero\n"),
    "a damaged lineage.csv": lambda pop: (pop / "lineage.csv").write_bytes(b"\x00\xff,\n"),
    "a damaged state.json": lambda pop: (pop / "state.json").write_text('{"members": 3}'),
    "a member's folder deleted": lambda pop: shutil.rmtree(pop / "members" / "m0"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_population_is_one_line_on_resume_and_left_as_it_was(stopped_population, tmp_path, capsys, damage):
    pop = tmp_path / "pop"
    shutil.copytree(stopped_population, pop)
    DAMAGES[damage](pop)
    before = sorted((p.relative_to(pop), p.read_bytes() if p.is_file() else b"") for p in pop.rglob("*"))
    assert main(["pbt", "a2c", "--resume", "--run-dir", str(pop)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("distrl: error: cannot resume") and len(err.splitlines()) == 1, err
    assert sorted((p.relative_to(pop), p.read_bytes() if p.is_file() else b"") for p in pop.rglob("*")) == before


@pytest.mark.parametrize("argv, says", [
    (["--population", "3"], "this command gives --population 3 (started with 2)"),
    (["--explore", "lr=loguniform(1e-5,1e-3)"], "--explore 'lr=loguniform(1e-5,1e-3)' (started with ['lr="),
    (["--fraction", "0.5"], "--fraction 0.5 (started with 0.2)"),
    (["--no-exploit"], "--no-exploit (started with exploit=True)"),
    (["--no-explore"], "--no-explore (started with explore_hyperparameters=True)"),
    (["--self-play"], "--self-play (started with self_play=False)"),
    (["--total-steps", "1000"], "--total-steps 1,000 is below the population's 24,000"),
    (["--set", "unroll_length=64"], "--set unroll_length=64 (started with 32)"),
    (["--env", "Acrobot-v1"], "--env 'Acrobot-v1' (started with 'CartPole-v1')"),
])
def test_a_resume_with_other_settings_is_refused_and_leaves_the_population_as_it_was(stopped_population, capsys, argv,
                                                                                    says):
    """A resumed population keeps its settings: one given with another value is one line, not silently ignored."""
    before = sorted((p.relative_to(stopped_population), p.read_bytes() if p.is_file() else b"")
                    for p in stopped_population.rglob("*"))
    assert main(["pbt", "a2c", *argv, "--resume", "--run-dir", str(stopped_population)]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err
    assert sorted((p.relative_to(stopped_population), p.read_bytes() if p.is_file() else b"")
                  for p in stopped_population.rglob("*")) == before


def test_a_population_saved_under_a_former_name_resumes_as_the_system_its_members_are_now(tmp_path):
    """distrl 0.2's ``a2c`` ran PPO's passes: a population of it (pbt.json saying a2c, members with epochs 4) is a ppo
    population; one whose members made one update stays a2c, PPO's settings dropped from its own."""
    import yaml

    from distrl.pbt.population import _migrated

    for epochs, now in ((4, "ppo"), (1, "a2c")):
        pop = tmp_path / f"e{epochs}"
        (pop / "members" / "m0").mkdir(parents=True)
        passes = {"epochs": epochs, "minibatches": 1, "ppo_clip": 0.2}
        (pop / "members" / "m0" / "config.yaml").write_text(yaml.safe_dump(
            {"system": "a2c", "run": {"env": "CartPole-v1"}, "system_config": {"num_envs": 8, **passes}}))
        saved = _migrated(pop, {"system": "a2c", "settings": {"num_envs": 8, **passes}})
        assert saved["system"] == now
        assert saved["settings"] == ({"num_envs": 8, **passes} if now == "ppo" else {"num_envs": 8})
