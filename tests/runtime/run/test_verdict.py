"""The bottleneck verdict never contradicts the numbers printed next to it (generated time splits)."""

from hypothesis import given
from hypothesis import strategies as st

from distrl.runtime.run.accounting import Interval, verdict
from distrl.runtime.run.metrics import bottleneck

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
