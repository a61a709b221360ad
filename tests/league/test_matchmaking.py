"""The coordinator's choices: naive self-play, uniform over snapshots, and AlphaStar's branches for main agents,
main exploiters and league exploiters; snapshots on a schedule or on the win-rate rule; exploiters' resets."""

from collections import Counter

import pytest

from distrl.league import Matchmaker


def _league(mode="pfsp", rule="schedule", exploiters=0, league_exploiters=0, seed=0):
    m = Matchmaker(mode, rule, snapshot_steps=100, seed=seed)
    m.add("main", "main")
    for i in range(exploiters):
        m.add(f"exploiter{i}", "main_exploiter")
    for i in range(league_exploiters):
        m.add(f"league{i}", "league_exploiter")
    return m


def _lose(m, home, away, n=20):
    for _ in range(n):
        m.payoff.record(home, away, "loss")


def test_naive_self_play_is_always_the_latest_self():
    m = _league("naive")
    m.snapshot("main", 100)
    assert {m.opponent("main") for _ in range(50)} == {"main"}


def test_uniform_plays_every_snapshot_alike():
    m = _league("uniform")
    assert m.opponent("main") == "main"  # no past yet
    for steps in (100, 200, 300):
        m.snapshot("main", steps)
    counts = Counter(m.opponent("main") for _ in range(3000))
    assert set(counts) == {"main@0", "main@1", "main@2"} and min(counts.values()) > 900


def test_a_main_agent_seeks_the_snapshot_it_loses_to():
    m = _league()
    for steps in (100, 200, 300):
        m.snapshot("main", steps)
    for past in ("main@0", "main@2"):
        for _ in range(20):
            m.payoff.record("main", past, "win")
    _lose(m, "main", "main@1")
    counts = Counter(m.opponent("main") for _ in range(4000))
    assert counts["main@1"] > 0.5 * 4000 > counts["main@0"] + counts["main@2"]


def test_a_main_agent_checks_the_exploiters_snapshots_that_beat_it():
    m = _league(exploiters=1)
    m.snapshot("main", 100)
    frozen, reset = m.snapshot("exploiter0", 100)
    assert reset  # a main exploiter starts again after its snapshot
    for _ in range(20):
        m.payoff.record("main", "main@0", "win")
    _lose(m, "main", frozen)
    counts = Counter(m.opponent("main") for _ in range(4000))
    assert counts[frozen] > counts["main@0"]


def test_a_main_exploiter_plays_the_main_agent_while_it_wins_some():
    m = _league(exploiters=1)
    m.snapshot("main", 100)
    m.payoff.record("exploiter0", "main", "win")
    assert {m.opponent("exploiter0") for _ in range(50)} == {"main"}
    _lose(m, "exploiter0", "main", 50)  # now it hardly ever wins: it trains against the main agent's past
    assert {m.opponent("exploiter0") for _ in range(50)} == {"main@0"}


def test_league_exploiters_reset_a_quarter_of_the_time():
    m = _league(league_exploiters=1, seed=3)
    resets = sum(m.snapshot("league0", 100 * (i + 1))[1] for i in range(400))
    assert 60 < resets < 140  # binomial(400, 0.25): 100 +- 8.7


def test_a_schedule_snapshots_every_so_many_steps():
    m = _league()
    assert not m.ready_to_snapshot("main", 99) and m.ready_to_snapshot("main", 100)
    m.snapshot("main", 100)
    assert not m.ready_to_snapshot("main", 199) and m.ready_to_snapshot("main", 200)


def test_a_player_back_from_an_older_checkpoint_counts_its_schedule_from_there():
    """A killed league resumes its players from their checkpoints, which may be older than their last snapshot:
    the next one is snapshot_steps from where the player is, not from where it was."""
    m = _league()
    m.snapshot("main", 300)
    assert not m.ready_to_snapshot("main", 120)  # back at 120 env steps
    assert not m.ready_to_snapshot("main", 219) and m.ready_to_snapshot("main", 220)


def test_the_win_rate_rule_waits_for_the_player_to_beat_its_past_or_twice_the_steps():
    m = _league(rule="win_rate")
    m.snapshot("main", 100)
    _lose(m, "main", "main@0")
    assert not m.ready_to_snapshot("main", 250)
    assert m.ready_to_snapshot("main", 300)  # 2 x snapshot_steps passed: whatever the rates
    for _ in range(200):
        m.payoff.record("main", "main@0", "win")
    assert m.ready_to_snapshot("main", 200)


@pytest.mark.parametrize("args, kwargs", [(("elo",), {}), (("pfsp", "always"), {}), (("pfsp", "schedule", 0), {}),
                                          ((), {"fixed_share": -0.1}), ((), {"fixed_share": 1.5})])
def test_bad_settings_are_refused(args, kwargs):
    with pytest.raises(ValueError):
        Matchmaker(*args, **kwargs)


@pytest.mark.parametrize("mode", ["naive", "pfsp"])
def test_a_fixed_share_of_games_goes_to_the_fixed_players_whatever_the_mode(mode):
    """``fixed_share=0.2``: a fifth of the games against a fixed player drawn uniformly (within 5 binomial standard
    errors over 4,000 draws), in naive self-play, which otherwise never plays one, and under PFSP after the fixed
    players are beaten every time, when its weighting alone would give them nothing; the rest as the mode chooses."""
    m = Matchmaker(mode, snapshot_steps=100, seed=1, fixed_share=0.2)
    m.add("main", "main")
    m.snapshot("main", 100)
    for name in ("random", "minimax"):
        m.add_fixed(name)
        for _ in range(30):
            m.payoff.record("main", name, "win")
    drawn = Counter(m.opponent("main") for _ in range(4000))
    n, p = 4000, 0.2
    for name in ("random", "minimax"):
        assert abs(drawn[name] - n * p / 2) < 5 * (n * p / 2 * (1 - p / 2)) ** 0.5
    assert set(drawn) - {"random", "minimax"} == ({"main"} if mode == "naive" else {"main", "main@0"})


def test_no_fixed_share_draws_nothing_more_from_the_random_stream():
    """The default (0) leaves the mode's choices as they were: the same stream of opponents for the same seed."""
    plain, shared = _league("pfsp", seed=3), Matchmaker("pfsp", snapshot_steps=100, seed=3, fixed_share=0.0)
    shared.add("main", "main")
    for m in (plain, shared):
        m.snapshot("main", 100)
        m.add_fixed("random")
    assert [plain.opponent("main") for _ in range(200)] == [shared.opponent("main") for _ in range(200)]


def test_a_fixed_player_is_chosen_as_the_snapshots_are_and_never_as_a_rivals_past():
    m = _league("uniform", exploiters=1)
    m.add_fixed("random")
    assert {m.opponent("main") for _ in range(20)} == {"random"}  # the one frozen player there is yet
    m.snapshot("main", 100)
    assert Counter(m.opponent("main") for _ in range(2000)).keys() == {"random", "main@0"}
    m.mode = "pfsp"
    for _ in range(20):
        m.payoff.record("main", "random", "win")  # beaten always: PFSP's squared weighting gives it nothing
    assert "random" not in {m.opponent("main") for _ in range(500)}
    assert "random" not in {m.opponent("exploiter0") for _ in range(500)}  # an exploiter plays the mains' own
