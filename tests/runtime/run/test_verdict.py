"""The bottleneck verdict never contradicts the numbers printed next to it (generated time splits)."""

from hypothesis import given
from hypothesis import strategies as st

from distrl.runtime.run.accounting import Interval, verdict
from distrl.runtime.run.metrics import bottleneck, fed_bottleneck

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


role_times = st.fixed_dictionaries({"block_s": st.floats(0.0, 100.0), "busy_s": st.floats(0.0, 100.0)})


@given(frac, frac, frac, st.dictionaries(st.sampled_from(["actor", "updater"]), role_times, max_size=2))
def test_a_role_is_named_the_bottleneck_only_if_the_learner_waits_for_it_and_it_is_busy(wait, block, transport,
                                                                                         feeders):
    name, numbers = fed_bottleneck(wait, block, transport, feeders)
    plain, plain_numbers = bottleneck(wait, block, transport)
    blocked = {r: t["block_s"] / max(t["block_s"] + t["busy_s"], 1e-9) for r, t in feeders.items()}
    if plain == "transport-bound" or wait < 0.2 or not feeders:  # nothing to say about roles: as before
        assert (name, numbers) == (plain, plain_numbers)
        return
    assert numbers.startswith(plain_numbers)
    for role, f in blocked.items():
        assert f"{role} (blocked {f:.0%})" in numbers
    if all(f < 0.2 for f in blocked.values()):
        assert name == "/".join(blocked) + "-bound"
    else:
        assert name == "pipeline-bound"


def test_qt_opts_trainer_waiting_on_busy_updaters_is_updater_bound():
    """The case the per-role split exists for: the trainer waits 80% for targets, the one updater never waits,
    the actors are blocked by their pacing to the trainer (which the plain verdict read as a full pipeline)."""
    feeders = {"updater": {"block_s": 0.1, "busy_s": 30.0}}
    assert bottleneck(0.8, 0.9, 0.01)[0] == "pipeline-bound"
    assert fed_bottleneck(0.8, 0.9, 0.01, feeders)[0] == "updater-bound"
    feeders["updater"]["block_s"] = 20.0  # updaters held back by the training buffer's rate limiter as well
    assert fed_bottleneck(0.8, 0.9, 0.01, feeders)[0] == "pipeline-bound"
