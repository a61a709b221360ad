"""The "Key settings" table of each system's page gives the defaults the code has: a default changed in a system's
config, or in a config it inherits from (SEED's from APPO's, PPO's from A2C's), fails here until the page says so.

A row names its settings in backticks, `a`, `b`, and gives their defaults in the same order, separated as the names
are (", " or " × "; pieces past the last name are that one's prose); each default's first word is compared with the
setting's value, and what follows it (units, why) is prose, but for a learning rate's: "constant" or
"linear"/"decay" there is its ``lr_schedule``. A row whose first cell names no setting may name them in its default
cell, each followed by its value ("R2D2's, but `target_update_period` 200"). A default that is a description, not a
value, is listed in ``PROSE`` with what it says, and what it says is checked below."""

from __future__ import annotations

import math
import os
import re
from fractions import Fraction

import pytest

from distrl.agents.registry import SYSTEMS, get_system
from distrl.api import system_run_defaults
from distrl.run_config import RunConfig
from tests.docs.code_blocks import DOCS

# (system, setting): the page's words for a default that is not one value (each checked against the code's below)
PROSE = {
    ("appo", "num_actors"): "one per core",
    ("impala", "num_actors"): "one per core",
    ("seed", "num_actors"): "one per core",
    ("apex-dqn", "num_actors"): "one per core",
    ("qt-opt", "conservative_weight"): "0.1 offline only, 0 with online data",
}
SUFFIXES = {"k": 1_000, "M": 1_000_000}


def key_settings(system: str) -> list[tuple[list[str], list[str], str]]:
    """(setting names, their defaults as written, the whole default cell) for each row of the page's Key settings
    table that names any; a row that names a setting nowhere this reads fails here."""
    text = (DOCS / "systems" / f"{system}.md").read_text()
    section = text.split("## Key settings", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`([a-z_0-9]+)`", cells[0]) if len(cells) >= 2 else []
        if names:
            separator = " × " if " × " in cells[0] else ", "
            defaults = cells[1].split(separator)
            if len(defaults) > len(names):  # what follows the last one's value is its prose
                defaults[len(names) - 1:] = [separator.join(defaults[len(names) - 1:])]
            rows.append((names, defaults, cells[1]))
        elif len(cells) >= 2 and "`" in cells[1]:
            named = re.findall(r"`([a-z_0-9]+)` (\S+)", cells[1])
            assert len(named) == cells[1].count("`") // 2, f"{system}: a default cell this cannot read: {cells[1]!r}"
            rows += [([name], [value], cells[1]) for name, value in named]
    return rows


def code_default(system: str, name: str):
    """The default a run of ``system`` takes for ``name``: its config's, else the run's with what the system fills
    in (its budget, its periodic evaluation)."""
    module = get_system(system)
    fields = module.Config.__dataclass_fields__
    if name in fields:
        return fields[name].default
    if name in RunConfig.__dataclass_fields__:
        return getattr(system_run_defaults(module, RunConfig()), name)
    raise AssertionError(f"{system}'s page names `{name}`, which is not one of its settings")


def written(word: str):
    """A default as the page writes its first word: true/false, none, 1e-3, 500k, 1.5M, 1/16, or a name."""
    word = word.rstrip(",;")
    if word.lower() in ("true", "false"):
        return word.lower() == "true"
    if word.lower() == "none":
        return None
    if re.fullmatch(r"-?\d+/\d+", word):
        return float(Fraction(word))
    number = re.fullmatch(r"(-?\d+(?:\.\d+)?(?:e-?\d+)?)([kM]?)", word)
    if number:
        return float(number.group(1)) * SUFFIXES.get(number.group(2), 1)
    return word


def same(code, page) -> bool:
    if isinstance(page, bool) or page is None or isinstance(code, bool) or code is None:
        return code is page or code == page and type(code) is type(page)
    if isinstance(page, float):
        return isinstance(code, (int, float)) and math.isclose(code, page, rel_tol=1e-9)
    return str(code).lower() == page.lower()


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_key_settings_give_the_defaults_the_code_has(system):
    rows = key_settings(system)
    assert rows, f"{system}'s page has no Key settings row naming a setting"
    for names, defaults, cell in rows:
        if len(names) == 1 and (system, names[0]) in PROSE:
            assert cell == PROSE[system, names[0]], f"{system}: `{names[0]}`'s default now reads {cell!r}"
            continue
        assert len(defaults) >= len(names), f"{system}: {names} has fewer defaults than settings: {defaults}"
        for name, text in zip(names, defaults):
            code = code_default(system, name)
            if (system, name) in PROSE:
                assert text == PROSE[system, name], f"{system}: `{name}`'s default now reads {text!r}"
                continue
            page = written(text.split()[0])
            assert same(code, page), f"{system}'s page gives `{name}` the default {text!r}; the code has {code!r}"
            if name == "lr":
                schedule = code_default(system, "lr_schedule")
                said = "constant" if "constant" in text else "linear" if re.search("linear|decay", text) else None
                assert said in (None, schedule), f"{system}'s page says the lr is {text!r}; lr_schedule is {schedule}"


def test_the_prose_defaults_say_what_the_code_does():
    """The defaults the pages describe in words: actors one per core, and QT-Opt's conservative weight chosen by the
    data (unset: 0.1 when it learns from a dataset alone, 0 with online data)."""
    from distrl.agents.qt_opt.builder import OFFLINE_CONSERVATIVE_WEIGHT

    for system, name in PROSE:
        if name == "num_actors":
            assert code_default(system, name) == (os.cpu_count() or 2), system
    assert code_default("qt-opt", "conservative_weight") is None and OFFLINE_CONSERVATIVE_WEIGHT == 0.1


def test_the_parser_reads_the_pages_forms():
    assert [written(w) for w in ("true", "None", "1e-3", "500k", "1.5M", "1/16", "-0.5", "RMSProp")] == [
        True, None, 1e-3, 500_000.0, 1_500_000.0, 0.0625, -0.5, "RMSProp"]
    assert same(512, 512.0) and same("rmsprop", "RMSProp") and same(False, False)
    assert not same(0, False) and not same(None, 0.0) and not same(True, 1.0) and not same(0.02, 0.01)
