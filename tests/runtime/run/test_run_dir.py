"""The run dir's CSV rows: a resumed run's rows stay under the right names when an older version wrote the file."""

from __future__ import annotations

import csv

from hypothesis import example, given, settings
from hypothesis import strategies as st

from distrl.runtime.run.run_dir import append_record, append_row, last_wall, read_rows


def _read(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_a_new_file_gets_the_records_names_as_header(tmp_path):
    path = tmp_path / "autoscale.csv"
    append_record(path, {"actors": 2, "why": "2 actors: where the run started"})
    append_record(path, {"actors": 4, "why": "4 actors: the learner waited 50%"})
    assert [r["actors"] for r in _read(path)] == ["2", "4"]
    assert path.read_text().splitlines()[0] == "actors,why"


def test_an_older_header_is_extended_once_and_its_rows_kept(tmp_path):
    path = tmp_path / "autoscale.csv"
    path.write_text("wall_s,actors,why\n1.5,1,started\n")  # written before cpu_busy was a column
    append_record(path, {"wall_s": 9.0, "actors": 2, "cpu_busy": 0.95, "why": "busy"})
    append_record(path, {"wall_s": 20.0, "actors": 1, "cpu_busy": 0.5, "why": "idle"})
    rows = _read(path)
    assert list(rows[0]) == ["wall_s", "actors", "why", "cpu_busy"]
    assert rows[0] == {"wall_s": "1.5", "actors": "1", "why": "started", "cpu_busy": ""}
    assert rows[1] == {"wall_s": "9.0", "actors": "2", "why": "busy", "cpu_busy": "0.95"}
    assert rows[2]["cpu_busy"] == "0.5"
    assert not list(tmp_path.glob("*.tmp"))


def test_rows_appended_longer_than_an_older_header_are_put_under_their_names(tmp_path):
    """autoscale.csv of a run resumed by the version that added cpu_busy before this fix: rows of the new order under
    the old header, one field longer. They are read back under their names, the text with its comma kept."""
    path = tmp_path / "autoscale.csv"
    path.write_text('wall_s,actors,why\n1.5,1,started\n\n9.0,2,0.95,"2 actors: 6,832 env steps/s"\n')
    append_record(path, {"wall_s": 20.0, "actors": 1, "cpu_busy": 0.5, "why": "idle"})
    rows = _read(path)
    assert [r["actors"] for r in rows] == ["1", "2", "1"]
    assert rows[1]["cpu_busy"] == "0.95" and rows[1]["why"] == "2 actors: 6,832 env steps/s"
    assert rows[0]["cpu_busy"] == "" and rows[0]["why"] == "started"


def test_the_file_is_rewritten_only_when_a_name_is_new(tmp_path):
    path = tmp_path / "rows.csv"
    append_record(path, {"a": 1, "b": 2})
    first = path.stat().st_ino
    append_record(path, {"a": 3, "b": 4})
    assert path.stat().st_ino == first  # appended in place
    append_record(path, {"a": 5, "c": 6})
    assert path.read_text().splitlines()[0] == "a,b,c"


names = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1, max_size=5, unique=True)


@settings(max_examples=50, deadline=None)
@given(st.lists(names, min_size=1, max_size=6))
def test_every_value_reads_back_under_its_name(tmp_path_factory, layouts):
    """Records of any changing sets of names: each value is read back under its own name, blank where a record
    had no such name."""
    path = tmp_path_factory.mktemp("rows") / "rows.csv"
    records = [{k: f'{i}{k}, "q"' for k in layout} for i, layout in enumerate(layouts)]
    for record in records:
        append_record(path, record)
    rows = _read(path)
    assert len(rows) == len(records)
    for record, row in zip(records, rows, strict=True):
        assert {k: v for k, v in row.items() if v} == record


@given(rows=st.lists(st.lists(st.integers(0, 10**9), min_size=3, max_size=3), max_size=20),
       torn=st.text(st.characters(min_codepoint=32, max_codepoint=126, exclude_characters='"'), min_size=1,
                    max_size=100_000))
@example(rows=[[1, 2, 3]] * 3, torn="x" * 150_000)  # a torn line longer than the block read back at a time
@settings(max_examples=30, deadline=None)
def test_a_row_torn_by_a_killed_writer_is_dropped_before_the_next_and_left_out_when_read(tmp_path_factory, rows,
                                                                                           torn):
    path = tmp_path_factory.mktemp("torn") / "league.csv"
    for row in [["a", "b", "c"], *rows]:
        append_row(path, row)
    with path.open("ab") as f:
        f.write(torn.encode())  # a writer killed mid-row: no line end
    assert read_rows(path) == [dict(zip("abc", map(str, r))) for r in rows]  # read as it is: the torn row left out
    append_row(path, [1, 2, 3])
    assert read_rows(path) == [dict(zip("abc", map(str, r))) for r in [*rows, [1, 2, 3]]]


def test_a_resumed_runs_metrics_continue_after_a_row_its_killed_writer_tore(tmp_path):
    from distrl.runtime.run.metrics import MetricsWriter

    first = MetricsWriter(tmp_path, tensorboard=False)
    first.write({"env_steps": 10, "wall_s": 1.0})
    with (tmp_path / "metrics.csv").open("a") as f:
        f.write("20,2.")  # killed mid-row
    resumed = MetricsWriter(tmp_path, tensorboard=False)
    resumed.write({"env_steps": 30, "wall_s": 3.0})
    assert [r["env_steps"] for r in read_rows(tmp_path / "metrics.csv")] == ["10", "30"]


def test_the_latest_wall_clock_of_several_csvs(tmp_path):
    """Where a resumed league's or population's clock goes on from: the largest last ``wall_s`` of its CSVs; a missing
    file, a header alone, a torn or damaged last row (the row before it then) and a non-finite value count as none."""
    a, b, c, d = (tmp_path / name for name in "abcd")
    a.write_text("wall_s,x\n1.5,p\n12.25,q\n")
    b.write_text("wall_s,x\n3.0,p\n40.5")  # a torn last row: it still reads as 40.5, a number whole
    c.write_text("wall_s,x\n7.0,p\nbroken,q\n")
    d.write_text("wall_s,x\nnan,p\n")
    assert last_wall(tmp_path / "missing") == 0.0 and last_wall(a) == 12.25 and last_wall(c) == 7.0
    assert last_wall(d) == 0.0 and last_wall(a, b, c, d, tmp_path / "missing") == 40.5
    header = tmp_path / "header"
    header.write_text("wall_s,x\n")
    assert last_wall(header) == 0.0
