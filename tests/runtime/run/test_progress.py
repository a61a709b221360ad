"""The progress display: its ETA never runs negative past the budget, and a note (the rounded budget) comes first."""

from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.runtime.run.progress import Progress, clock


@settings(max_examples=50, deadline=None)
@given(total=st.integers(1, 10**9), done=st.integers(0, 2 * 10**9))
def test_the_eta_is_never_negative(total, done):
    p = Progress(total, "x", enabled=False)
    info = p._info(done, 1000.0, 1.0)
    eta = info.rsplit("ETA ", 1)[1]
    assert eta == "-:--" if done == 0 else (eta[0].isdigit() and (done < total or eta == "0:00"))  # unknown, or >= 0


def test_the_note_comes_before_the_first_figures(capsys):
    p = Progress(20_000, "ppo CartPole-v1", note="budget 20,000 env steps, rounded up: 32,768")
    p.update(16_384, 3000.0, 20.0)
    p.update(32_768, 3000.0, 30.0)
    p.close()
    said = capsys.readouterr()
    lines = said.err.splitlines()
    assert said.out == ""  # standard output is the run's result's
    assert lines[0] == "[ppo CartPole-v1] budget 20,000 env steps, rounded up: 32,768"
    assert lines[-1].endswith("ETA 0:00")


def test_clock():
    assert (clock(0), clock(65), clock(3725), clock(float("inf"))) == ("0:00", "1:05", "1:02:05", "-:--")
