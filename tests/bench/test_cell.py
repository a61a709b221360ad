"""Reading a cell's curve: steady-state throughput and the first crossing of the threshold."""

import math

from distrl.bench.cell import first_crossing, steady_sps


def test_steady_sps_leaves_out_the_first_quarter():
    # 8 rows: a slow start (the first two), then 1,000 env steps per second
    points = [(10, 1.0, 0.0), (20, 2.0, 0.0)] + [(1000 * t, float(t), 0.0) for t in range(3, 9)]
    assert steady_sps(points, fallback=-1.0) == 1000.0
    assert steady_sps([(5, 1.0, 0.0)], fallback=-1.0) == -1.0  # too short: the summary's figure


def test_first_crossing():
    nan = math.nan
    points = [(100, 1.0, nan), (200, 2.0, 300.0), (300, 3.0, 475.0), (400, 4.0, 500.0)]
    assert first_crossing(points, 475.0) == (300, 3.0)
    assert first_crossing(points, 501.0) is None
    assert first_crossing(points, None) is None  # a throughput-only cell
    assert first_crossing([(1, 1.0, -150.0)], -200.0) == (1, 1.0)  # Pendulum: higher is better too


def test_first_greedy_crossing_reads_the_periodic_evaluations(tmp_path):
    from distrl.bench.cell import first_greedy_crossing

    (tmp_path / "metrics.csv").write_text("env_steps,wall_s,eval_return_mean\n100,1.0,\n200,2.0,300.0\n300,3.0,\n"
                                          "400,4.5,480.0\n500,5.0,500.0\n")
    assert first_greedy_crossing(tmp_path, 475.0) == (400, 4.5)
    assert first_greedy_crossing(tmp_path, 501.0) is None
    assert first_greedy_crossing(tmp_path, None) is None
    assert first_greedy_crossing(tmp_path / "none", 475.0) is None  # a run that wrote no metrics
