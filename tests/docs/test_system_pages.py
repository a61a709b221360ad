"""The systems' pages: one template, and their code blocks run as written (``tests/docs/code_blocks.py`` says how)."""

import pytest

from tests.docs.code_blocks import (
    DOCS,
    examples,
    python_blocks,
    run_example,
    run_python,
    run_shell_commands,
    shell_commands,
)

PAGES = sorted((DOCS / "systems").glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_code_blocks_run(tmp_path, page):
    for code in python_blocks(page):
        run_python(code, tmp_path)
    for command, expected in examples(page):
        run_example(command, expected, tmp_path)
    run_shell_commands(shell_commands(page), tmp_path)


def test_every_system_page_shows_its_command_and_the_same_sections_in_order():
    """One template: a reader compares two systems by reading the same section of each page."""
    from distrl.agents.registry import SYSTEMS

    sections = ["What it is and when to use it", "The command", "Data flow", "Key settings", "Results", "Paper"]
    for system in SYSTEMS:
        page = DOCS / "systems" / f"{system}.md"
        text = page.read_text()
        assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == sections, page
        assert any(c.startswith(f"distrl train {system} ") for c in shell_commands(page)), page
