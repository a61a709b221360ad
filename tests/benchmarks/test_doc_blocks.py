"""The benchmarks' docs writer replaces exactly its own blocks, all or none, on the page that holds each, and refuses
pages without them."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "doc_blocks", Path(__file__).resolve().parents[2] / "benchmarks" / "doc_blocks.py")
doc_blocks = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(doc_blocks)

TWO_BLOCKS = "intro\n<!-- script:a -->\nold a\n<!-- /script:a -->\nmiddle\n<!-- script:b -->\n<!-- /script:b -->\nend\n"


def test_write_blocks_replaces_only_the_named_blocks(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(TWO_BLOCKS)
    doc_blocks.write_blocks({"script:a": "| new |\n|---|"}, readme)
    assert readme.read_text() == TWO_BLOCKS.replace("old a", "| new |\n|---|")


def test_an_empty_block_is_filled_and_backslashes_are_kept(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(TWO_BLOCKS)
    doc_blocks.write_blocks({"script:b": r"| a \1 b \g<0> |"}, readme)
    assert "<!-- script:b -->\n| a \\1 b \\g<0> |\n<!-- /script:b -->" in readme.read_text()


def test_nothing_is_written_unless_every_block_is_there_once(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(TWO_BLOCKS)
    with pytest.raises(SystemExit, match="0 <!-- script:c --> blocks"):
        doc_blocks.write_blocks({"script:a": "x", "script:c": "y"}, readme)
    readme.write_text(TWO_BLOCKS + "<!-- script:a -->\n<!-- /script:a -->\n")
    with pytest.raises(SystemExit, match="2 <!-- script:a --> blocks"):
        doc_blocks.write_blocks({"script:a": "x"}, readme)
    assert readme.read_text() == TWO_BLOCKS + "<!-- script:a -->\n<!-- /script:a -->\n"


def test_a_writer_checks_its_blocks_before_the_measuring_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(doc_blocks, "code_changed_since", lambda commit: [])  # whatever this checkout's state
    readme = tmp_path / "README.md"
    readme.write_text(TWO_BLOCKS)
    with pytest.raises(SystemExit, match="script:missing"):
        doc_blocks.Writer(["a", "missing"], readme)
    writer = doc_blocks.Writer(["a", "b"], readme)
    writer.write({"a": "| 1 |", "b": "| 2 |"})
    text = readme.read_text()
    assert text.count(writer.line) == 2 and "| 1 |" in text and "| 2 |" in text and "old a" not in text
    monkeypatch.setattr(doc_blocks, "code_changed_since", lambda commit: ["src/a.py"])
    writer.write({"a": "| 3 |"})
    assert "changed during the run: src/a.py)." in readme.read_text()


def test_provenance_names_the_command_and_the_machine(monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(doc_blocks.ROOT / "benchmarks" / "replay.py"), "--seconds", "3"])
    line = doc_blocks.provenance()
    assert line.startswith("Written by `python benchmarks/replay.py --seconds 3` on ")
    assert "logical cores" in line and "torch" in line


def test_start_refuses_a_narrowed_run_and_returns_no_writer_without_the_flag(capsys):
    import argparse

    p = argparse.ArgumentParser(prog="bench")
    p.add_argument("--envs", nargs="*", default=["a", "b"])
    doc_blocks.add_flag(p)
    assert doc_blocks.start(["a"], p, p.parse_args(["--envs", "a"]), keep=("envs",)) is None
    with pytest.raises(SystemExit) as exit_info:
        doc_blocks.start(["a"], p, p.parse_args(["--envs", "a", "--readme"]), keep=("envs",))
    assert exit_info.value.code == 2
    assert "leave --envs at the default" in capsys.readouterr().err


def test_a_table_prints_its_rows_as_they_come_and_keeps_them(capsys):
    table = doc_blocks.Table("seed", "return")
    assert capsys.readouterr().out == "| seed | return |\n|---|---|\n"
    table.row(0, "500")
    assert capsys.readouterr().out == "| 0 | 500 |\n"
    assert str(table) == "| seed | return |\n|---|---|\n| 0 | 500 |"


def test_a_table_from_a_saved_report_names_the_report_and_its_machine(tmp_path):
    report = tmp_path / "gpu.json"
    assert doc_blocks.report_line(report, "an H200 machine; commit abc") == (
        f"Rendered from `{report}`; measured on an H200 machine; commit abc.")
    assert doc_blocks.report_line(report, "m", " by `x.py`") == f"Rendered from `{report}` by `x.py`; measured on m."


def test_every_script_block_in_the_docs_says_where_its_table_came_from():
    text = "".join(page.read_text() for page in doc_blocks.pages())
    blocks = re.findall(r"<!-- (script:[^ ]+) -->\n(.*?)<!-- /\1 -->", text, re.S)
    assert len(blocks) >= 12
    for name, body in blocks:
        written = r"Written by `python (benchmarks/\S+\.py) [^`]*--(?:docs|readme)[^`]*`"
        source = re.match(rf"(?:{written}|Rendered from `([^`]+)`)", body)
        assert source, f"{name}: no line saying which command wrote it or which report it was rendered from"
        assert (doc_blocks.ROOT / (source.group(1) or source.group(2))).is_file(), name


# the reference tables (no figures) a page may type by hand: the systems, the runtimes and services, settings
REFERENCE_TABLES = {"| system | what it is | actions | data | runtimes |",
                    "| runtime | what runs where | data path | when |", "| service | `inline` | `local` | `ray` |",
                    "| setting | default | why |", "| problem | system |", "| extra | what it brings |",
                    "| file | what it holds |", "| system | roles | services | learner |",
                    "| service | handle methods | inline | local | ray |", "| systems | inputs | outputs |",
                    "| part | module | what it does |", "| setting | default | meaning |"}


def test_every_table_of_figures_in_the_docs_is_written_by_a_script_or_copied_from_a_bench_report():
    """A table outside a ``script:``/``bench:`` block would be typed by hand; only the reference tables
    (systems, runtimes, services, settings) may be."""
    for page in doc_blocks.pages():
        outside = re.sub(r"<!-- ((?:script|bench):[^ ]+) -->\n.*?<!-- /\1 -->", "", page.read_text(), flags=re.S)
        headers = [line for line, before in zip(outside.splitlines(), [""] + outside.splitlines())
                   if line.startswith("|") and not before.startswith("|")]
        assert set(headers) <= REFERENCE_TABLES, (page, set(headers) - REFERENCE_TABLES)


def test_a_block_is_found_on_the_page_that_holds_it_and_refused_on_two(tmp_path):
    one, two = tmp_path / "one.md", tmp_path / "two.md"
    one.write_text("a\n")
    two.write_text(TWO_BLOCKS)
    doc_blocks.write_blocks({"script:b": "| x |"}, [one, two])
    assert one.read_text() == "a\n" and "<!-- script:b -->\n| x |\n<!-- /script:b -->" in two.read_text()
    one.write_text(TWO_BLOCKS)
    with pytest.raises(SystemExit, match="the pages has 2 <!-- script:b --> blocks"):
        doc_blocks.write_blocks({"script:b": "| y |"}, [one, two])


def test_a_block_written_by_another_command_is_refused_before_measuring(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    written = "Written by `python benchmarks/x.py --seeds 0 1 2` on 2026-11-27; m.\n\n|"
    readme.write_text(TWO_BLOCKS.replace("old a", written))
    script = str(doc_blocks.ROOT / "benchmarks" / "x.py")
    monkeypatch.setattr(sys, "argv", [script, "--seeds", "0"])
    with pytest.raises(SystemExit, match="was written by `python benchmarks/x.py --seeds 0 1 2`"):
        doc_blocks.Writer(["a"], readme)
    doc_blocks.Writer(["b"], readme)  # an empty block: nothing to protect
    monkeypatch.setattr(sys, "argv", [script, "--seeds", "0", "1", "2"])
    doc_blocks.Writer(["a"], readme)  # the same command may measure it again


def test_labels_and_tables():
    labels = [doc_blocks.steps_label(n) for n in (45_000, 150_000, 1_000_000, 2_500_000)]
    assert labels == ["45k", "150k", "1M", "2.5M"]
    assert doc_blocks.env_label("distrl/DeepSea-v0") == "DeepSea-v0" == doc_blocks.env_label("DeepSea-v0")
    assert doc_blocks.markdown_table(["a", "b"], [(1, "x")]) == "| a | b |\n|---|---|\n| 1 | x |"


def test_the_code_state_names_code_changes_not_readme_edits(tmp_path, monkeypatch):
    import subprocess

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("readme\n")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "start")
    monkeypatch.setattr(doc_blocks, "ROOT", tmp_path)
    start = doc_blocks.code_state()
    assert start and not start.endswith("+dirty")
    (tmp_path / "README.md").write_text("a table written\n")  # what a benchmark writes: not a change of code
    git("commit", "-qam", "readme")
    assert doc_blocks.code_changed_since(start) == [] and doc_blocks.code_state() != start
    (tmp_path / "src" / "a.py").write_text("x = 2\n")
    assert doc_blocks.code_changed_since(start) == ["src/a.py"] and doc_blocks.code_state().endswith("+dirty")


def test_a_missing_report_is_one_line_and_exit_2(tmp_path, capsys):
    import argparse

    p = argparse.ArgumentParser(prog="bench")
    p.add_argument("--readme-from", type=doc_blocks.existing_file)
    with pytest.raises(SystemExit) as exit_info:
        p.parse_args(["--readme-from", str(tmp_path / "gone.json")])
    assert exit_info.value.code == 2 and "no such file" in capsys.readouterr().err
    (tmp_path / "r.json").write_text("{}")
    assert p.parse_args(["--readme-from", str(tmp_path / "r.json")]).readme_from == tmp_path / "r.json"


def test_an_interrupted_run_ends_the_study_without_a_table(capsys):
    """A signal that ended one run of a study ends the study: exit 130, one line, nothing written after it."""
    summary = {"interrupted": False, "env_steps": 10}
    assert doc_blocks.finished(summary) is summary
    with pytest.raises(SystemExit) as stopped:
        doc_blocks.finished({"interrupted": True, "env_steps": 3})
    assert stopped.value.code == 130
    assert capsys.readouterr().err.strip() == "interrupted: the study stops here, no table written"
