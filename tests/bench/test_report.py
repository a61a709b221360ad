"""The report's tables from hand-made results: every column a user reads, failures and peers included."""

from distrl.bench.report import markdown, peer_rows, spread_rows

MACHINE = {"cpu": "CPU", "logical_cores": 2, "physical_cores": 2, "memory_gib": 8.0, "gpu": "none", "os": "Linux",
           "python": "3.11", "versions": {"torch": "2"}, "commit": "abc"}


def result(system="impala", runtime="local", seed=0, evaluated=500.0, reached=3.0, sps=1000.0):
    return {"cell": {"system": system, "env": "CartPole-v1", "runtime": runtime, "seed": seed, "threshold": 475.0},
            "key": f"{system}-{seed}", "env_steps": 10_000, "sps": sps, "final_eval": evaluated, "train_s": 8.0,
            "command_s": 10.0,
            "threshold_env_steps": 5000 if reached else None, "threshold_train_s": reached,
            "threshold_command_s": reached + 2.0 if reached else None, "learner_wait_frac": 0.1, "policy_lag_mean": 1.5,
            "bottleneck": "learner-bound", "bytes_per_env_step": 100.0, "bytes_partial": False, "peak_memory_mb": 600.0,
            "ceiling": {"actors_alone_sps": 4000.0, "learner_alone_sps": 2000.0, "ceiling_sps": 1333.3},
            "curve": [(5000, reached or 1.0, 480.0)]}


def test_cells_table():
    failed = {"cell": {"system": "es", "env": "CartPole-v1", "runtime": "ray", "seed": 0, "threshold": 475.0},
              "key": "es", "error": "boom"}
    text = markdown(MACHINE, "distrl bench", [result(), result(seed=1, reached=None), failed], [])
    assert "`distrl bench`" in text and "CPU, 2 logical cores" in text
    row = next(line for line in text.splitlines() if line.startswith("| impala | CartPole-v1 | local | 0 |"))
    cols = [c.strip() for c in row.strip("|").split("|")]
    # ratio = 1000 / 4000 (the actors alone), beside 1000 / 1333.3 (the combined ceiling)
    assert cols[4:11] == ["10,000", "1,000", "4,000", "2,000", "1,333", "0.25", "0.75"]
    assert cols[11:14] == ["5,000", "3.0", "5.0"]  # to threshold: env steps, from training start, from the command
    assert cols[17] == "learner-bound: the actors could step 4.0x faster"
    assert "not reached" in next(line for line in text.splitlines() if "| impala | CartPole-v1 | local | 1 |" in line)
    assert "failed: boom" in text
    assert "## Spread over seeds" in text


def test_a_cell_whose_learner_computed_in_bf16_is_marked():
    """What the run chose (``precision=auto`` resolves in the run), not what the cell asked; no mark for fp32 or an
    old report without the record."""
    bf16 = dict(result(system="impala", seed=0), precision="bf16")
    text = markdown(MACHINE, "distrl bench", [bf16, dict(result(seed=1), precision="fp32"), result(seed=2)], [])
    assert "| impala (bf16 learner) | CartPole-v1 | local | 0 |" in text
    assert "| impala | CartPole-v1 | local | 1 |" in text and "| impala | CartPole-v1 | local | 2 |" in text


def test_spread_rows():
    rows = spread_rows(
        [result(seed=s, evaluated=e, reached=r) for s, e, r in [(0, 500, 3.0), (1, 480, None), (2, 120, 5.0)]]
    )
    line = rows[2]
    assert "| 0, 1, 2 | 10,000 | 120.0 / 480.0 / 500.0 |" in line
    longer = [result(seed=s) for s in (0, 1)]
    for r in longer:
        r["cell"]["total_steps"] = 2_000_000  # a budget set for the cell (the beyond suite's BEYOND_STEPS) is shown
        r["env_steps"] = 2_000_000
    assert (
        "| 0, 1 | 2,000,000 |" in spread_rows(longer)[2]
        and "2 of 3" in line
        and "3.0 / 4.0 / 5.0" in line
        and line.endswith("| 8.0 (10.0) |")
    )


def test_a_spread_row_says_which_seeds_the_cap_cut_short_of_the_budget():
    rs = [result(seed=s) for s in (0, 1, 2)]
    for r, steps in zip(rs, (1_949_120, 2_000_000, 1_983_840)):
        r["cell"].update(total_steps=2_000_000, max_wall_s=300.0)
        r.update(env_steps=steps, train_s=300.01 if steps < 2_000_000 else 250.0)
    assert "| 0, 1, 2 | 2,000,000 (2 of 3 cut by the 300-s cap at 1,949,120–1,983,840) |" in spread_rows(rs)[2]
    rs[2]["env_steps"] = 2_000_128  # past the budget: a whole last chunk, not cut
    assert "| 2,000,000 (1 of 3 cut by the 300-s cap at 1,949,120) |" in spread_rows(rs)[2]
    rs[0]["train_s"] = 120.0  # ended short of the budget before the cap: not called the cap's doing
    assert "| 2,000,000 (1 of 3 ended at 1,949,120) |" in spread_rows(rs)[2]
    for r in rs:
        r["env_steps"] = 2_000_000
    assert "| 0, 1, 2 | 2,000,000 | " in spread_rows(rs)[2]


def test_peers_beside_distrl_by_one_protocol_with_the_median_factor():
    peer = {"peer": "sb3-ppo", "env": "CartPole-v1", "seed": 0, "env_steps": 100_000, "sps": 500.0, "startup_s": 1.0,
            "threshold_train_s": 6.0, "threshold_greedy_env_steps": 20_000, "threshold_greedy_command_s": 9.0,
            "final_eval": 500.0, "hyperparameters": "zoo", "n_envs": 8, "curve": []}
    ours = [dict(result(seed=s), threshold_greedy_env_steps=30_000, threshold_greedy_command_s=t)
            for s, t in ((0, 2.0), (1, 3.0), (2, 5.0))]
    lines = peer_rows([peer, dict(peer, seed=1, threshold_greedy_command_s=15.0)], ours)
    assert "| sb3-ppo (zoo, 8 envs) | CartPole-v1 | 0 | 100,000 | 500 | 20,000 | 9.0 | 7.0 | 500.0 |" in lines
    assert "| distrl impala (local) | CartPole-v1 | 1 | 10,000 | 1,000 | 30,000 | 3.0 | 5.0 | 500.0 |" in lines
    # medians: distrl's 2, 3, 5 -> 3.0; the peer's 9, 15 -> 12.0: 4.0x
    assert "| CartPole-v1 | impala (local) | 3.0 | sb3-ppo | 12.0 | 4.0x |" in lines
    never = dict(peer, peer="sb3-dqn", threshold_greedy_env_steps=None, threshold_greedy_command_s=None,
                 threshold_train_s=None)
    lines = peer_rows([never], ours)
    assert "| CartPole-v1 | impala (local) | 3.0 | sb3-dqn | — | — |" in lines  # never got there: no factor
    assert any("| sb3-dqn (zoo, 8 envs) | CartPole-v1 | 0 | 100,000 | 500 | — | not reached | not reached |" in line
               for line in lines)
    capped = dict(never, peer="sb3-ppo", capped_command_s=302.0)  # the cap stopped it short: a lower bound
    lines = peer_rows([capped], ours)
    assert "| CartPole-v1 | impala (local) | 3.0 | sb3-ppo | > 302.0 | > 100.7x |" in lines
    assert any("| — | not reached in 302.0 (the cap) | not reached |" in line for line in lines)


def test_a_cell_on_a_peers_env_is_measured_by_their_protocol_only_with_peers():
    from distrl.bench.peers import PROTOCOL_EVAL_EPISODES, PROTOCOL_EVAL_EVERY
    from distrl.bench.suite import cells

    with_peers = cells("quick", systems=["appo"], pong=False, peers=True)
    assert with_peers[0].settings == {"eval_interval_steps": PROTOCOL_EVAL_EVERY["CartPole-v1"],
                                      "eval_episodes": PROTOCOL_EVAL_EPISODES}
    assert cells("quick", systems=["appo"], pong=False)[0].settings == {}
    assert cells("quick", systems=["apex-ddpg"], pong=False, peers=True)[0].settings == {}  # Pendulum: no peer


def test_a_spread_row_without_a_budget_of_its_own_shows_the_most_env_steps_and_calls_no_seed_short():
    rs = [result(seed=s) for s in (0, 1, 2)]  # the full suite's cells: the system's default budget, not the cell's
    for r, steps in zip(rs, (1_000_000, 1_000_160, 1_000_000)):
        r["env_steps"] = steps  # a run may overshoot its budget by part of a chunk
    row = spread_rows(rs)[2]
    assert "| 0, 1, 2 | 1,000,160 | " in row and "ended" not in row and "cut" not in row


def test_a_spread_row_without_a_budget_names_the_seeds_the_cap_ended():
    rs = [result(seed=s) for s in (0, 1, 2)]  # the quick suite's cells: the default budget, a 180-s cap
    for r, steps, train_s in zip(rs, (150_000, 61_440, 150_016), (90.0, 180.2, 95.0)):
        r["cell"]["max_wall_s"] = 180.0
        r.update(env_steps=steps, train_s=train_s)
    assert "| 0, 1, 2 | 150,016 (1 of 3 cut by the 180-s cap at 61,440) |" in spread_rows(rs)[2]
    for r in rs:  # with a budget of its own: the capped seed, and one that ended early
        r["cell"]["total_steps"] = 150_000
    rs[2].update(env_steps=149_000)
    assert "| 150,000 (1 of 3 cut by the 180-s cap at 61,440; 1 of 3 ended at 149,000) |" in spread_rows(rs)[2]


def test_evals_that_played_the_best_evaluated_weights_are_marked_and_counted():
    """R2D2's cells play their best evaluated weights (``eval_snapshot``); older reports' cells lack the field."""
    from distrl.bench.report import cell_rows

    best, last, old = result(seed=0), result(seed=1), result(seed=2)
    best["eval_snapshot"], last["eval_snapshot"] = "best", "last"
    rows = cell_rows([best, last, old])
    assert "| 500.0 (best weights) |" in rows[2] and "| 500.0 |" in rows[3] and "| 500.0 |" in rows[4]
    assert "500.0 / 500.0 / 500.0 (best weights: 1 of 3) |" in spread_rows([best, last, old])[2]
    assert "(best weights" not in spread_rows([last, old])[2]
