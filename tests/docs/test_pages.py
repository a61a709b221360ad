"""Every docs page's code blocks run as written (``tests/docs/code_blocks.py`` says how), as the README's do: the
guide's and the other pages' here, the systems' pages in ``test_system_pages.py`` (two files, so that ``-n 2`` runs
them on both workers)."""

import pytest

from tests.docs.code_blocks import (
    DOCS,
    examples,
    pages,
    python_blocks,
    run_example,
    run_python,
    run_shell_commands,
    shell_commands,
)


def _name(page):
    return str(page.relative_to(DOCS))


PAGES = [page for page in pages() if page.parent.name != "systems"]
PYTHON = [(page, i, code) for page in PAGES for i, code in enumerate(python_blocks(page))]
EXAMPLES = [(page, command, expected) for page in PAGES for command, expected in examples(page)]
SHELL = [page for page in PAGES if shell_commands(page)]


@pytest.mark.parametrize("page,index,code", PYTHON, ids=[f"{_name(p)}-{i}" for p, i, _ in PYTHON])
def test_python_blocks_run(tmp_path, page, index, code):
    run_python(code, tmp_path)


@pytest.mark.parametrize("page,command,expected", EXAMPLES, ids=[f"{_name(p)}-{c}" for p, c, _ in EXAMPLES])
def test_error_examples_print_what_the_page_shows(tmp_path, page, command, expected):
    run_example(command, expected, tmp_path)


@pytest.mark.parametrize("page", SHELL, ids=[_name(p) for p in SHELL])
def test_shell_blocks_run_in_order(tmp_path, page):
    run_shell_commands(shell_commands(page), tmp_path)
