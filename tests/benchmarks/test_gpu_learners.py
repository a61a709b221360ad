"""The GPU benchmark's report renders each part's table from its JSON, old reports included (the README's GPU
tables are rendered from the reports device sessions brought back)."""

import importlib.util
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "gpu_learners", Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_learners.py")
gpu_learners = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gpu_learners)

E2E = {"system": "impala", "actors": 15, "sps": 12807.4, "frames_per_s": 51229.6, "actors_alone_sps": 11987.0,
       "ratio": 1.068, "learner_wait_frac": 0.8315, "policy_lag_mean": 3.6971, "bottleneck": "actor-bound"}


def report(**parts):
    return dict(
        {"machine": {}, "learner": [], "loop": [], "e2e": [], "replay": [], "pong": None, "errors": []}, **parts
    )


def test_only_parts_with_rows_get_a_table():
    assert gpu_learners.part_tables(report()) == {}
    loop = [{"device": "cuda", "overlap": True, "batch": 160, "samples_per_s": 27482.3, "ms_per_update": 5.8212}]
    assert gpu_learners.part_tables(report(loop=loop)) == {
        "loop": "| learner | overlap | batch | samples/s | ms per update |\n|---|---|---|---|---|\n"
                "| cuda | on | 160 | 27,482 | 5.82 |"}


def test_an_e2e_report_from_before_the_timing_columns_renders_without_them():
    old = gpu_learners.part_tables(report(e2e=[dict(E2E, settings={"device": "cuda"})]))["e2e"]
    assert "ms per update" not in old and old.splitlines()[-1] == (
        "| impala | cuda | 15 | 12,807 | 51,230 | 11,987 | 1.07 | 0.83 | 3.7 | actor-bound |")
    timed = dict(E2E, update_ms=9.764, publish_ms=0.118)
    rows = [dict(timed, settings={"device": "cuda", "overlap": "off"}), dict(timed, settings={"device": "cuda"})]
    new = gpu_learners.part_tables(report(e2e=rows))["e2e"].splitlines()
    assert "ms per update | ms per publish" in new[0]
    assert new[2].startswith("| impala | cuda, overlap off |")
    assert new[3].startswith("| impala | cuda, overlap default |")
    assert new[3].endswith("| 9.76 | 0.12 | actor-bound |")
