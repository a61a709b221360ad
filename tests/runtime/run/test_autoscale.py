"""The autoscaler: its decisions from made-up measurements (no clock, no processes), the one-line refusals, and a run
on an env that sleeps in every step, which must add actors from a start of one."""

from __future__ import annotations

import csv
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import distrl
from distrl.errors import ConfigError
from distrl.runtime.run.autoscale import ScalePolicy, Window

NAN = math.nan


def starved(actors: int, sps: float, wait: float = 0.5) -> Window:
    """The learner waits half its time: n / (1 - 0.5) = 2n actors would keep it busy."""
    return Window(actors, sps, learner_wait=wait, actors_blocked=0.0)


def blocked(actors: int, sps: float, block: float = 0.6) -> Window:
    """The actors are blocked 60% of their time: ceil(n x 0.4) of them would make as many steps (n / 2 for 4, 8)."""
    return Window(actors, sps, learner_wait=0.01, actors_blocked=block)


def test_a_starved_learner_doubles_the_actors_while_each_doubling_pays_then_bisects_to_where_it_stops_paying():
    p = ScalePolicy(low=1, high=16, start=1)
    assert p.decide(starved(1, 1000))[0] == 2
    assert p.decide(starved(2, 2000))[0] == 4  # 2x faster: kept, and still starved: up again
    assert p.decide(starved(4, 3900))[0] == 8
    assert p.decide(starved(8, 3950))[0] == 4  # no faster than 4: undone
    assert p.decide(starved(4, 3900))[0] == 6  # halfway to what did not pay
    assert p.decide(starved(6, 3910))[0] == 4  # not worth it either
    assert p.decide(starved(4, 3900))[0] == 5
    assert p.decide(starved(5, 3900))[0] == 4
    assert p.decide(starved(4, 3900)) is None  # nothing left to try upwards: settled
    assert p.actors == 4 and "5 stepped" in p.why


def test_blocked_actors_halve_while_the_speed_holds_and_a_move_that_costs_speed_is_undone():
    p = ScalePolicy(low=1, high=8, start=8)
    assert p.decide(blocked(8, 50_000))[0] == 4
    assert p.decide(blocked(4, 52_000))[0] == 2  # as fast with fewer: kept
    assert p.decide(blocked(2, 40_000))[0] == 4  # 23% slower: undone
    assert p.decide(blocked(4, 52_000))[0] == 3  # halfway down
    assert p.decide(blocked(3, 51_000)) is None  # 2% slower is noise: kept, and halfway to 2 is 3: settled
    assert p.actors == 3


def busy_cores(actors: int, sps: float, wait: float = 0.4) -> Window:
    """A starved learner on a machine whose cores are all busy (Ray actors and the learner sharing two cores)."""
    return Window(actors, sps, learner_wait=wait, actors_blocked=0.0, cpu_busy=0.99)


def test_a_starved_learner_on_busy_cores_halves_the_actors_while_the_speed_holds():
    p = ScalePolicy(low=1, high=8, start=8)
    move = p.decide(busy_cores(8, 115_000))
    assert move[0] == 4 and "busy 99%" in move[1]  # at the cap, and no core idle: fewer, not more
    assert p.decide(busy_cores(4, 160_000))[0] == 2  # faster with fewer: kept, still starved on busy cores
    assert p.decide(busy_cores(2, 120_000))[0] == 4  # 25% slower: undone
    assert p.decide(busy_cores(4, 160_000))[0] == 3  # halfway down
    assert p.decide(busy_cores(3, 130_000))[0] == 4  # slower: undone; nothing left to try downwards
    assert p.decide(busy_cores(4, 160_000))[0] == 6  # so more, at most halfway back to the 8 it left
    assert p.decide(busy_cores(6, 140_000))[0] == 4  # no faster: undone
    assert p.decide(busy_cores(4, 160_000))[0] == 5
    assert p.decide(busy_cores(5, 150_000))[0] == 4
    assert p.decide(busy_cores(4, 160_000)) is None  # settled
    assert p.actors == 4


def test_idle_cores_or_no_measure_of_them_leave_a_starved_learner_asking_for_more():
    """The slow-simulator case: actors sleep in their steps, so the cores are mostly idle and more actors pay."""
    assert ScalePolicy(1, 8, 4).decide(Window(4, 3_000, learner_wait=0.95, actors_blocked=0.0, cpu_busy=0.3))[0] == 8
    assert ScalePolicy(1, 8, 4).decide(starved(4, 3_000, wait=0.95))[0] == 8  # (cpu_busy not measured: nan)
    assert ScalePolicy(1, 8, 8).decide(Window(8, 6_000, learner_wait=0.95, actors_blocked=0.0, cpu_busy=0.3)) is None


def test_the_first_move_goes_as_far_as_the_measured_wait_says():
    assert ScalePolicy(low=1, high=8, start=1).decide(starved(1, 800, wait=0.99))[0] == 8  # 1 / 0.01: capped
    assert ScalePolicy(low=1, high=64, start=2).decide(starved(2, 800, wait=0.75))[0] == 8  # 2 / 0.25
    assert ScalePolicy(low=1, high=64, start=8).decide(blocked(8, 800, block=0.9))[0] == 1  # 8 x 0.1
    assert ScalePolicy(low=1, high=64, start=3).decide(starved(3, 800, wait=0.21))[0] == 4  # at least one more
    assert ScalePolicy(low=1, high=64, start=3).decide(blocked(3, 800, block=0.51))[0] == 2  # at least one fewer


def test_a_kept_move_bounds_the_way_back_so_the_count_settles_under_noise():
    """Up from 2 to 4 is kept; the blocked signal then asks for fewer: the try goes halfway back (3), never to 2,
    and a kept 3 leaves nothing between the bounds: settled."""
    p = ScalePolicy(low=1, high=8, start=2)
    assert p.decide(starved(2, 1000))[0] == 4
    assert p.decide(blocked(4, 1500))[0] == 3  # the move is kept (50% faster); then down, at most halfway back
    assert p.decide(blocked(3, 1500)) is None  # as fast with 3: kept, and 3 is next to the bound 2
    assert p.decide(starved(3, 1500)) is None  # up would go halfway to 4, the bound a kept move down left: none
    assert p.actors == 3


def test_no_flow_before_or_after_an_up_move_is_no_gain():
    p = ScalePolicy(low=1, high=8, start=1)
    assert p.decide(starved(1, 0.0))[0] == 2
    assert p.decide(starved(2, 0.0))[0] == 1


def test_balanced_or_unmeasured_signals_leave_the_count_alone():
    p = ScalePolicy(low=1, high=8, start=3)
    assert p.decide(Window(3, 10_000, learner_wait=0.15, actors_blocked=0.3)) is None
    assert p.decide(Window(3, 10_000, learner_wait=NAN, actors_blocked=NAN)) is None
    assert p.decide(Window(3, 10_000, learner_wait=0.05, actors_blocked=NAN)) is None


def test_the_bounds_hold_and_the_start_is_clamped_into_them():
    p = ScalePolicy(low=2, high=3, start=8)
    assert p.actors == 3 and p.decide(starved(3, 1000)) is None
    p = ScalePolicy(low=2, high=3, start=1)
    assert p.actors == 2 and p.decide(blocked(2, 1000)) is None


@settings(max_examples=200, deadline=None, derandomize=True)
@given(low=st.integers(1, 4), span=st.integers(0, 12), start=st.integers(1, 20),
       windows=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(1, 1e5), st.floats(0, 1)), max_size=40))
def test_whatever_it_measures_the_count_stays_within_the_bounds_and_every_move_is_one(low, span, start, windows):
    high = low + span
    p = ScalePolicy(low, high, start)
    for wait, block, sps, cpu in windows:
        before = p.actors
        decision = p.decide(Window(before, sps, wait, block, cpu))
        assert low <= p.actors <= high
        if decision is not None:
            assert decision[0] == p.actors != before and decision[1]


@pytest.mark.parametrize("settings_, fragment", [
    ({"autoscale": "on", "runtime": "inline"}, "needs a runtime of processes"),
    ({"autoscale": "on", "min_actors": 9, "max_actors": 4}, "is above max_actors 4"),
    ({"autoscale": "maybe"}, "autoscale"),
])
def test_autoscale_settings_that_cannot_work_are_one_line(tmp_path, settings_, fragment):
    with pytest.raises(ConfigError, match=fragment):
        distrl.make_trainer("impala", "CartPole-v1", run_dir=str(tmp_path / "run"), **settings_)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("system, settings_, expected", [
    ("appo", {}, "on"), ("impala", {"runtime": "local"}, "on"), ("seed", {"runtime": "ray"}, "on"),
    ("apex-dqn", {}, "on"),
    ("appo", {"num_actors": 2}, "off"),  # a count given, even the default's, is the user's
    ("appo", {"runtime": "inline"}, "off"), ("appo", {"runtime": "inline", "max_actors": 4}, "off"),
    ("ppo", {}, "off"), ("a3c", {}, "off"),
    ("impala", {"num_learners": 2}, "off"), ("seed", {"remote_actors": 1}, "off"),  # the claim was not measured
    ("appo", {"autoscale": "off"}, "off"), ("appo", {"autoscale": "on", "num_actors": 3}, "on"),
])
def test_autoscale_is_on_by_default_where_the_run_can_and_nobody_fixed_the_actors(system, settings_, expected):
    from distrl.api import plan_run

    _, run_cfg, sys_cfg, _, program = plan_run(system, "CartPole-v1", **settings_)
    assert run_cfg.autoscale == expected  # resolved: config.yaml and a resume read on or off, never auto
    elastic = [r for r in program.roles if r.elastic]
    if expected == "on":
        assert run_cfg.max_actors == (settings_.get("max_actors") or 4 * os.cpu_count())
        assert elastic[0].active == min(max(sys_cfg.num_actors, run_cfg.min_actors), run_cfg.max_actors)
    else:
        assert all(r.active is None for r in program.roles)


def test_bounds_asked_for_that_cannot_hold_are_one_line_under_the_default_too():
    from distrl.api import plan_run

    with pytest.raises(ConfigError, match="is above max_actors 1"):  # 2 actors at least fill a batch of 4 unrolls
        plan_run("impala", "CartPole-v1", batch_unrolls=4, max_actors=1)


def test_a_resumed_run_keeps_how_it_ran_unless_the_resume_fixes_its_actors_or_leaves_processes(tmp_path):
    """config.yaml records on or off (never auto); a run saved before the setting existed ran fixed actors."""
    import yaml

    from distrl.api import plan_run
    from distrl.runtime.run.run_dir import write_config

    def saved(run_dir, **settings):
        _, run_cfg, sys_cfg, _, _ = plan_run("appo", "CartPole-v1", run_dir=str(run_dir), **settings)
        run_dir.mkdir()
        write_config(run_dir, "appo", run_cfg, sys_cfg)
        return run_dir

    def resumed(run_dir, **settings):
        return plan_run("appo", resume=True, run_dir=str(run_dir), **settings)[1].autoscale

    auto = saved(tmp_path / "auto")
    assert yaml.safe_load((auto / "config.yaml").read_text())["run"]["autoscale"] == "on"
    assert resumed(auto) == "on" and resumed(auto, runtime="ray") == "on"
    assert resumed(auto, num_actors=3) == "off" and resumed(auto, runtime="inline") == "off"
    assert resumed(saved(tmp_path / "fixed", num_actors=2)) == "off"
    older = saved(tmp_path / "older")
    data = yaml.safe_load((older / "config.yaml").read_text())
    del data["run"]["autoscale"]
    (older / "config.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert resumed(older) == "off"


def test_a_preset_that_fixes_the_actors_keeps_them():
    from distrl.api import plan_run

    _, run_cfg, sys_cfg, _, _ = plan_run("impala", "CartPole-v1", preset="pong-gpu", device="cpu")
    assert run_cfg.autoscale == "off" and sys_cfg.num_actors == 15


def test_a_system_without_elastic_actors_is_refused_naming_those_that_have_them(tmp_path):
    with pytest.raises(ConfigError, match="a3c has no actors .* appo, impala, seed, apex-dqn"):
        distrl.make_trainer("a3c", "CartPole-v1", run_dir=str(tmp_path / "run"), autoscale="on")


@pytest.mark.parametrize("system", ["a2c", "ppo", "a3c", "gorila", "apex-dqn", "apex-ddpg", "impala", "appo",
                                    "r2d2", "r2d3", "seed", "seed-r2d2", "qt-opt", "es"])
def test_the_systems_said_to_autoscale_are_those_whose_program_has_an_elastic_role(system):
    from distrl.api import ELASTIC_SYSTEMS, plan_run

    env = "Pendulum-v1" if system in ("apex-ddpg", "qt-opt") else "CartPole-v1"
    try:
        program = plan_run(system, env)[-1]
    except ConfigError:  # (a system that needs more to build, R2D3's demos: never elastic)
        assert system not in ELASTIC_SYSTEMS
        return
    assert any(r.elastic for r in program.roles) == (system in ELASTIC_SYSTEMS)


def test_from_one_actor_on_a_sleeping_env_the_run_adds_actors_and_says_why(tmp_path):
    """SlowCartPole sleeps 1 ms a step: one actor starves the learner, so the run must add actors, each change a row
    of autoscale.csv, the count a column of metrics.csv and the settled count in the summary."""
    run = tmp_path / "run"
    summary = distrl.train("impala", env="distrl/SlowCartPole-v0", runtime="local", num_actors=1, autoscale="on",
                           max_actors=4, total_steps=30_000, run_dir=str(run), progress=False)
    with (run / "autoscale.csv").open() as f:
        changes = list(csv.DictReader(f))
    assert changes and changes[0]["actors_before"] == "1" and int(changes[0]["actors"]) >= 2
    assert "the learner waited" in changes[0]["why"]
    assert summary["autoscale"]["actors"] >= 2 and summary["autoscale"]["changes"] == len(changes)
    with (run / "metrics.csv").open() as f:
        counts = [int(r["actors"]) for r in csv.DictReader(f)]
    assert counts[0] == 1 and max(counts) >= 2


RAY_SCRIPT = """
import csv, json, sys
import ray.autoscaler.sdk as sdk
from ray.autoscaler._private.constants import AUTOSCALER_RESOURCE_REQUEST_CHANNEL
from ray.experimental.internal_kv import _internal_kv_get
import distrl

requests, real = [], sdk.request_resources
def recorded(**kwargs):  # what the run asks, and what the cluster then holds for its autoscaler to read
    real(**kwargs)
    requests.append(json.loads(_internal_kv_get(AUTOSCALER_RESOURCE_REQUEST_CHANNEL)))
sdk.request_resources = recorded
s = distrl.train("impala", env="distrl/SlowCartPole-v0", runtime="ray", num_actors=1, autoscale="on", max_actors=4,
                 total_steps=40_000, run_dir=sys.argv[1], progress=False)
print("RESULT", json.dumps({**s["autoscale"], "requests": requests}))
"""


@pytest.mark.timeout(300)
def test_on_ray_too_one_actor_on_a_sleeping_env_grows(tmp_path):
    """The same start on ``ray`` (its own local instance, as ``--runtime ray`` starts): actors added as Ray actors,
    and each count asked of the cluster's autoscaler (Ray's ``request_resources``: a CPU bundle per running actor,
    the request an autoscaler reads), and given back (none) when the run ends."""
    import json
    import os
    import subprocess
    import sys

    pytest.importorskip("ray")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    done = subprocess.run([sys.executable, "-c", RAY_SCRIPT, str(tmp_path / "run")], capture_output=True, text=True,
                          timeout=280, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("RESULT")][-1].split(" ", 1)[1])
    assert result["actors"] >= 2 and result["changes"] >= 1, result
    with (tmp_path / "run" / "autoscale.csv").open() as f:
        first = int(next(csv.DictReader(f))["actors"])
    requests = result["requests"]
    assert requests[0] == [{"CPU": 1.0}] * first and requests[-1] == []  # a CPU per actor run; none at the end



def test_with_several_learners_the_fewest_actors_fill_every_learners_batch(tmp_path):
    """Each learner takes a batch of 4 unrolls, 2 learners 8; actors hold 2 steps in flight: at least 4 actors."""
    from distrl.api import plan_run

    run_cfg = plan_run("impala", "CartPole-v1", autoscale="on", num_learners=2, batch_unrolls=4, min_actors=1,
                       max_actors=8)[1]
    assert run_cfg.min_actors == 4


def test_pbt_members_and_league_players_refuse_autoscale_in_one_line(tmp_path):
    from distrl.pbt import run_pbt

    with pytest.raises(ConfigError, match="PBT's members train in slices"):
        run_pbt("impala", "CartPole-v1", population=2, explore=["lr=loguniform(1e-4,1e-2)"],
                run_dir=str(tmp_path / "pbt"), settings={"autoscale": "on"})
    pytest.importorskip("pettingzoo")
    with pytest.raises(ConfigError, match="players train in slices"):
        distrl.train_league("appo", "pettingzoo:classic.tictactoe_v3", run_dir=str(tmp_path / "league"),
                            settings={"autoscale": "on"})
    assert not (tmp_path / "pbt").exists() and not (tmp_path / "league").exists()


def _appo_actors():
    """APPO's program on CartPole with fixed actors, and its elastic role (the actors whose slots are counted)."""
    from distrl.api import plan_run

    program = plan_run("appo", "CartPole-v1", autoscale="off")[4]
    return program, next(r for r in program.roles if r.elastic)


@settings(max_examples=60, deadline=None)
@given(budget=st.integers(0, 200_000_000), most=st.integers(1, 64))
def test_the_actors_fitting_a_budget_are_the_most_whose_slots_fit(budget, most):
    from distrl.api import actors_fitting
    from distrl.runtime.backends.placement import shared_slot_bytes, slot_bytes, slot_count

    program, role = _appo_actors()
    others = shared_slot_bytes(program) - slot_count(program, role, role.count) * slot_bytes(role)
    assert others == 0  # APPO's actors are its only role with output slots

    def fits(n):
        return slot_count(program, role, n) * slot_bytes(role) <= budget

    n = actors_fitting(program, role, most, budget)
    assert 0 <= n <= most
    assert n == 0 or fits(n)
    assert n == most or not fits(n + 1)


def test_by_default_an_autoscaled_run_starts_no_more_actors_than_half_the_free_shared_memory_holds(monkeypatch):
    from distrl import api
    from distrl.runtime.backends.placement import slot_bytes, slot_count

    program, role = _appo_actors()
    three = slot_count(program, role, 3) * slot_bytes(role)
    monkeypatch.setattr(api, "free_bytes", lambda: 2 * three + 1)
    run_cfg = api.plan_run("appo", "CartPole-v1")[1]
    assert run_cfg.autoscale == "on" and run_cfg.max_actors == 3
    run_cfg = api.plan_run("appo", "CartPole-v1", max_actors=4)[1]  # a ceiling given is the user's ...
    assert run_cfg.max_actors == 4  # ... and the slots of 4 fit the whole free space


def test_slots_that_do_not_fit_in_the_free_shared_memory_are_one_line_before_anything_is_written(tmp_path,
                                                                                              monkeypatch):
    """Too large a block fails with SIGBUS when first written (docker's default /dev/shm is 64 MB): refused first."""
    from distrl import api

    monkeypatch.setattr(api, "free_bytes", lambda: 64 * 1024)
    with pytest.raises(ConfigError, match=r"appo on local needs .* MiB of shared memory .* /dev/shm has 64.0 KiB "
                                          r"free: give fewer actors \(num_actors\)"):
        distrl.make_trainer("appo", "CartPole-v1", run_dir=str(tmp_path / "run"))  # auto: off, as not even 2 fit
    with pytest.raises(ConfigError, match=r"num_actors, or max_actors"):
        distrl.make_trainer("appo", "CartPole-v1", run_dir=str(tmp_path / "run"), autoscale="on", max_actors=8)
    with pytest.raises(ConfigError, match=r"need more than half of the shared memory free"):
        distrl.make_trainer("appo", "CartPole-v1", run_dir=str(tmp_path / "run"), autoscale="on")
    assert not (tmp_path / "run").exists()
    assert api.plan_run("appo", "CartPole-v1", runtime="inline")[1].runtime == "inline"  # no shared memory there
    monkeypatch.setattr(api, "free_bytes", lambda: None)  # no /dev/shm to measure (macOS): nothing refused
    assert api.plan_run("appo", "CartPole-v1")[1].max_actors == 4 * os.cpu_count()
