"""The bottleneck verdict never contradicts the numbers printed next to it (generated time splits)."""

from hypothesis import given
from hypothesis import strategies as st

from distrl.runtime.run.accounting import Interval, feeders, verdict
from distrl.runtime.run.metrics import blocked_fraction, bottleneck, fed_bottleneck

frac = st.floats(0.0, 1.0)


@given(frac, frac, frac)
def test_the_verdict_agrees_with_its_numbers(wait, block, transport):
    name, numbers = bottleneck(wait, block, transport)
    assert f"learner waits {wait:.0%}" in numbers and f"blocked {block:.0%}" in numbers
    if name == "learner-bound":  # the learner is the limit only if it (almost) never waits
        assert wait < 0.2 and block >= 0.2
    if name == "actor-bound":  # the actors are the limit only if they are busy, not blocked
        assert wait >= 0.2 and block < 0.2
    if name == "pipeline-bound":
        assert wait >= 0.2 and block >= 0.2
    if name == "balanced":
        assert wait < 0.2 and block < 0.2 and transport < 0.25


@given(st.floats(0.0, 100.0), st.floats(0.0, 100.0), st.floats(0.0, 100.0))
def test_where_workers_learn_there_is_no_learner_wait(env_s, infer_s, learn_s):
    totals = Interval(wait_s=50.0, env_s=env_s, infer_s=infer_s, worker_learn_s=learn_s)
    name, numbers, wait_frac = verdict(totals, {}, {}, workers_learn=True, served=False)
    assert wait_frac != wait_frac  # NaN: reported as none, not as "the learner waits 99%"
    assert name in ("gradient-bound", "env-bound") and "learner" not in numbers


@given(st.floats(0.0, 100.0), st.floats(0.001, 100.0), st.floats(0.0, 100.0))
def test_in_one_process_the_numbers_are_the_turns_of_acting_and_learning(wait_s, learn_s, block_s):
    """``inline``: the learner's wait is the acting's turn; no pipeline or transport is spoken of."""
    totals = Interval(wait_s=wait_s, learn_s=learn_s)
    name, numbers, wait_frac = verdict(totals, {"block_s": block_s}, {}, workers_learn=False, served=False,
                                       one_process=True)
    acting = wait_s / (wait_s + learn_s)
    assert wait_frac == acting and f"acting takes {acting:.0%}" in numbers and f"learning {1 - acting:.0%}" in numbers
    assert "pipeline" not in numbers and "transport" not in numbers
    assert name == ("actor-bound" if acting >= 0.5 else "learner-bound")  # the larger turn


role_times = st.fixed_dictionaries({"block_s": st.floats(0.0, 100.0), "busy_s": st.floats(0.0, 100.0)})


@given(st.one_of(frac, st.just(float("nan"))), frac, frac,
       st.dictionaries(st.sampled_from(["actor", "updater"]), role_times, max_size=2))
def test_a_role_is_named_only_where_the_learner_waits_and_the_role_is_timed_and_busy(wait, block, transport, feeders):
    name, numbers = fed_bottleneck(wait, block, transport, feeders)
    plain = bottleneck(wait, block, transport)
    assert numbers.startswith(plain[1])  # the plain numbers are always there
    timed = {r: t for r, t in feeders.items() if t["block_s"] + t["busy_s"] > 0}
    if not wait >= 0.2 or not timed:  # the learner did not wait (or had no time at all), or no role was timed
        assert (name, numbers) == plain
    elif name not in (plain[0], "pipeline-bound"):  # the verdict names roles: each one fed the learner and was busy
        for role in name.removesuffix("-bound").split("/"):
            t = timed[role]
            assert t["block_s"] < 0.2 * (t["block_s"] + t["busy_s"])  # (by hand, not through blocked_fraction)


def test_qt_opts_trainer_waiting_on_busy_updaters_is_updater_bound():
    """The case the per-role split exists for: the trainer waits 80% for targets, the one updater never waits,
    the actors are blocked by their pacing to the trainer (which the plain verdict read as a full pipeline)."""
    feeders = {"updater": {"block_s": 0.1, "busy_s": 30.0}}
    assert bottleneck(0.8, 0.9, 0.01)[0] == "pipeline-bound"
    assert fed_bottleneck(0.8, 0.9, 0.01, feeders)[0] == "updater-bound"
    assert "updater (blocked 0%)" in fed_bottleneck(0.8, 0.9, 0.01, feeders)[1]
    feeders["updater"]["block_s"] = 20.0  # updaters held back by the training buffer's rate limiter as well
    assert fed_bottleneck(0.8, 0.9, 0.01, feeders)[0] == "pipeline-bound"
    # no learner time (a run stopped before the first batch): NaN wait, no role named
    name, numbers = fed_bottleneck(float("nan"), 0.1, 0.0, {"updater": {"block_s": 0.0, "busy_s": 5.0}})
    assert name == "balanced" and numbers.startswith("the learner did not run,") and "nan" not in numbers
    # a feeding role never granted a step has no time: unknown, not "blocked 0%"
    assert fed_bottleneck(0.8, 0.1, 0.0, {"updater": {"block_s": 0.0, "busy_s": 0.0}})[0] == "actor-bound"


def test_the_feeding_roles_are_those_emitting_into_what_the_learner_reads():
    """QT-Opt's program: actors emit into the replay the updaters read, updaters into the training buffer the
    trainer reads; an evaluator emits nothing. Only the updaters feed the learner."""
    from distrl.agents.qt_opt import Config
    from distrl.agents.qt_opt.builder import build
    from distrl.core.system import BuildContext
    from distrl.envs import env_spec

    ctx = BuildContext(env_id="Pendulum-v1", env=env_spec("Pendulum-v1"), total_steps=1000, eval_interval_steps=500)
    program = build(Config(), ctx)
    times = {r.name: {"block_s": 1.0, "busy_s": 2.0} for r in program.roles}
    assert {r.name for r in program.roles} == {"actor", "updater", "evaluator"}
    assert feeders(program, times) == {"updater": times["updater"]}
    assert feeders(program, {}) == {}  # a backend without per-role times


def test_blocked_fraction():
    assert blocked_fraction({"block_s": 1.0, "busy_s": 3.0}) == 0.25
    assert blocked_fraction({"block_s": 0.0, "busy_s": 0.0}) == 0.0
