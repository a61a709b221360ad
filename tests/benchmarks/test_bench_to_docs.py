"""The docs' bench tables: joining bench reports' tables (every report's rows under one header; with ``replace``, a
re-run's rows in place of the old ones), each system's rows under its present name, every block as rendered."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_to_docs import BLOCKS, REPORTS, joined, render, rows_of  # noqa: E402  (the benchmarks folder is not a package)

HEADER = "| system | env | runtime | seed | score |\n|---|---|---|---|---|\n"


def _table(*rows: tuple) -> str:
    return HEADER + "\n".join("| " + " | ".join(map(str, r)) + " |" for r in rows)


def test_with_replace_a_later_reports_rows_take_the_place_of_the_same_cells():
    old = _table(("a2c", "CartPole-v1", "inline", 0, 500), ("impala", "CartPole-v1", "local", 0, 500),
                 ("impala", "CartPole-v1", "local", 1, 499), ("es", "CartPole-v1", "local", 0, 500))
    rerun = _table(("impala", "CartPole-v1", "local", 0, 490), ("impala", "CartPole-v1", "local", 1, 480),
                   ("impala", "CartPole-v1", "local", 2, 470), ("impala", "LunarLander-v3", "local", 0, 228))
    rows = joined([old, rerun], replace=True).splitlines()
    assert rows[:2] == HEADER.splitlines()
    assert [r.split("|")[1].strip() + r.split("|")[-2].strip() for r in rows[2:]] == [
        "a2c500", "impala490", "impala480", "impala470", "impala228", "es500"]


def test_without_replace_every_row_stays_in_order():
    """E.g. one system at two budgets (the beyond suite's Ape-X DQN at 1.2M, then at 2M)."""
    one = _table(("a2c", "CartPole-v1", "inline", 0, 500), ("apex-dqn", "LunarLander-v3", "local", 0, 239))
    two = _table(("apex-dqn", "LunarLander-v3", "local", 0, 279))
    for tables in ([one, two], [two, one]):
        assert joined(tables).splitlines()[2:] == [r for t in tables for r in t.splitlines()[2:]]


def test_tables_with_other_columns_are_refused():
    with pytest.raises(SystemExit, match="different columns"):
        joined([_table(("a2c", "CartPole-v1", "inline", 0, 500)), "| system | env |\n|---|---|\n| a | b |"])


def test_rows_of_keeps_a_systems_rows_under_its_present_name():
    t = _table(("a2c", "CartPole-v1", "inline", 0, 500), ("impala", "CartPole-v1", "local", 0, 499))
    assert rows_of(t, {"a2c": "ppo"}).splitlines()[2:] == ["| ppo | CartPole-v1 | inline | 0 | 500 |"]
    assert rows_of(t, None) == t


def test_every_block_renders_from_reports_in_the_repository_and_names_them():
    for name, (_, sources) in BLOCKS.items():
        for folder, _ in sources:
            assert (REPORTS / folder / "report.md").is_file(), (name, folder)
        body = render(name)
        assert body.startswith("Rendered by `python benchmarks/bench_to_docs.py` from `benchmarks/reports/"), name
        assert "`distrl bench " in body.splitlines()[0] and len(body.splitlines()) > 4, name


def test_every_block_is_on_exactly_one_page_as_rendered():
    """The pages hold what the reports give: rerunning the command would change nothing."""
    import re

    from doc_blocks import locate, pages

    located = locate([f"bench:{n}" for n in BLOCKS])
    for name in BLOCKS:
        text = located[f"bench:{name}"].read_text()
        body = re.search(rf"<!-- bench:{re.escape(name)} -->\n(.*?)<!-- /bench:{re.escape(name)} -->", text, re.S)
        assert body.group(1).rstrip("\n") == render(name), name
    everywhere = "".join(p.read_text() for p in pages())
    assert set(re.findall(r"<!-- bench:([^ ]+) -->", everywhere)) == set(BLOCKS)
