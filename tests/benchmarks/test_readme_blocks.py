"""The benchmarks' README writer replaces exactly its own block and refuses a README without it."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import readme_blocks  # noqa: E402


def test_write_block_replaces_only_its_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- script:a -->\nold a\n<!-- /script:a -->\nmiddle\n"
                      "<!-- script:b -->\nold b\n<!-- /script:b -->\nend\n")
    readme_blocks.write_block("script:a", "| new |\n|---|", readme)
    assert readme.read_text() == ("intro\n<!-- script:a -->\n| new |\n|---|\n<!-- /script:a -->\nmiddle\n"
                                  "<!-- script:b -->\nold b\n<!-- /script:b -->\nend\n")


def test_write_block_refuses_a_missing_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    with pytest.raises(SystemExit, match="no <!-- script:a --> block"):
        readme_blocks.write_block("script:a", "x", readme)
    assert readme.read_text() == "no markers here\n"


def test_provenance_names_the_command_and_the_machine(monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(readme_blocks.README.parent / "benchmarks" / "replay.py"), "--seconds", "3"])
    line = readme_blocks.provenance()
    assert line.startswith("Written by `python benchmarks/replay.py --seconds 3` on ")
    assert "logical cores" in line and "torch" in line
