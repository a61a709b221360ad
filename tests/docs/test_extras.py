"""The README's list of extras and the getting-started page's table name every extra ``pyproject.toml`` declares: a
newcomer learns of an optional part from them (they left out four once)."""

import re

from tests.docs.code_blocks import ROOT


def declared() -> set[str]:
    """The extras' names (read as text: tomllib is Python 3.11's, and distrl runs on 3.10)."""
    section = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]", 1)[1]
    section = re.split(r"^\[", section, maxsplit=1, flags=re.M)[0]
    names = set(re.findall(r"^([a-z0-9_-]+)\s*=", section, flags=re.M))
    assert {"ray", "test"} <= names, section  # the section was found and read
    return names


def test_the_readme_names_every_extra():
    text = (ROOT / "README.md").read_text()
    paragraph = text[text.index("Optional parts are extras"):].split("\n\n", 1)[0]
    assert declared() <= set(re.findall(r"`([a-z0-9-]+)`", paragraph)), paragraph


def test_the_getting_started_table_names_every_extra():
    text = (ROOT / "docs" / "getting-started.md").read_text()
    assert declared() <= set(re.findall(r"^\| `([a-z0-9-]+)` \|", text, flags=re.M))
