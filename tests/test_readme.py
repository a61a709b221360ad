"""The README's code blocks run as written, so a snippet can never rot: Python blocks are executed, the
`$ distrl ...` examples give the output shown, and the `distrl` commands of the shell blocks run (with their training
cut short; ``tests/docs/code_blocks.py`` says how; the docs pages' blocks run the same way in
``tests/docs/test_pages.py``)."""

import pytest

from tests.docs.code_blocks import (
    README,
    pages,
    python_blocks,
    run_python,
    run_shell_commands,
    shell_commands,
)


def _shell_commands() -> list[str]:
    """The ``distrl`` commands of the README's and every docs page's ``bash`` blocks (README first): where
    ``tests/bench/test_runner.py`` finds the `distrl bench` command it runs."""
    return [c for page in [README, *pages()] for c in shell_commands(page)]


@pytest.mark.parametrize("code", python_blocks(README))
def test_python_blocks_run(tmp_path, code):
    run_python(code, tmp_path)


def test_shell_blocks_run_in_order(tmp_path):
    commands = shell_commands(README)
    assert any(c.startswith("distrl train") for c in commands) and any(c.startswith("distrl eval") for c in commands)
    run_shell_commands(commands, tmp_path)


def test_the_readme_is_a_front_door():
    """At most 300 lines; the two set-up commands as CI runs the second (``.ci/run``)."""
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    assert "pip install -e . && distrl train ppo --env CartPole-v1" in text
    assert 'pip install -e ".[test]" && python -m pytest -q -n 2' in text
    assert 'pip install -e ".[test]" && python -m pytest -q -n 2' in (README.parent / ".ci" / "run").read_text()
