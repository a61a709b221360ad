"""Writing a benchmark's own output into the README, between its `<!-- NAME -->` / `<!-- /NAME -->` markers.

The README's benchmark tables are then the measuring script's rows, never retyped: `bench_to_readme.py` copies a
`distrl bench` report's tables (markers `bench:...`), and the scripts that measure what the bench does not
(actor-count scaling, ES's workers, the replay buffers against cpprb and tianshou, ES against evotorch) take
``--readme`` and write their table under a line naming the command, the date and the machine (markers
`script:...`). Such a script calls :func:`start` before it measures: a README without the block is refused
then, not after minutes of measuring, and the provenance names the code that measured (a commit made during
the run is not it).
"""

from __future__ import annotations

import argparse
import datetime
import re
import shlex
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _marker(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {re.escape(name)} -->\n).*?(<!-- /{re.escape(name)} -->)", re.S)


def _check(text: str, names, readme: Path) -> None:
    for name in names:
        found = len(_marker(name).findall(text))
        if found != 1:
            raise SystemExit(f"{readme.name} has {found} <!-- {name} --> blocks (needs exactly one)")


def write_blocks(blocks: dict[str, str], readme: Path = README) -> None:
    """Replace what lies between ``<!-- name -->`` and ``<!-- /name -->`` with the body, for every block;
    nothing is written unless every block is there exactly once."""
    text = readme.read_text()
    _check(text, blocks, readme)
    for name, body in blocks.items():
        text = _marker(name).sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), text)
    readme.write_text(text)


def provenance() -> str:
    """One line: the command that is running (as typed from the repository root), today's date, the machine and
    its commit (``+dirty`` when ``src/`` or ``benchmarks/`` has uncommitted changes)."""
    from distrl.bench.machine import describe, one_line

    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(README.parent)
    except ValueError:
        pass
    command = shlex.join(["python", str(script), *sys.argv[1:]])
    machine = one_line(describe())
    # the code that measures: a README or report edited meanwhile does not make the figures another commit's
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "src", "benchmarks",
                             ":(exclude)benchmarks/reports"],
                            cwd=README.parent, capture_output=True, text=True)
    if status.returncode == 0 and status.stdout.strip():
        machine += "+dirty"
    return f"Written by `{command}` on {datetime.date.today().isoformat()}; {machine}."


def report_line(report: Path, measured_on: str, how: str = "") -> str:
    """The line above a table rendered from a saved report (a device session's, which this machine cannot
    measure again): the report, how it was measured and on what machine, not today's date and machine."""
    try:
        report = report.resolve().relative_to(README.parent)
    except ValueError:
        pass
    return f"Rendered from `{report}`{how}; measured on {measured_on}."


class Table:
    """A markdown table a script prints row by row while it measures (a long study shows its progress) and keeps
    for its README block (``str(table)``)."""

    def __init__(self, *columns: str):
        self.lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        print(*self.lines, sep="\n", flush=True)

    def row(self, *cells) -> None:
        self.lines.append("| " + " | ".join(str(c) for c in cells) + " |")
        print(self.lines[-1], flush=True)

    def __str__(self) -> str:
        return "\n".join(self.lines)


class Writer:
    """The blocks a script will write, checked and dated when it starts; :meth:`write` after measuring."""

    def __init__(self, names: list[str], readme: Path = README):
        self.readme = readme
        _check(readme.read_text(), [f"script:{n}" for n in names], readme)
        self.line = provenance()

    def write(self, tables: dict[str, str]) -> None:
        """``tables``: block name (without ``script:``) -> markdown table, each under the provenance line."""
        write_blocks({f"script:{n}": f"{self.line}\n\n{t}" for n, t in tables.items()}, self.readme)


def add_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--readme", action="store_true", help="write the table(s) into the README (readme_blocks.py)")


def start(names: list[str], parser: argparse.ArgumentParser, args: argparse.Namespace,
          keep: tuple[str, ...] = ()) -> Writer | None:
    """A :class:`Writer` for ``names`` when ``--readme`` was given, else None. The options in ``keep`` narrow the
    run: with ``--readme`` they must stay at their defaults, so a partial run cannot replace a full table."""
    if not args.readme:
        return None
    narrowed = [k for k in keep if getattr(args, k) != parser.get_default(k)]
    if narrowed:
        parser.error("--readme replaces the README's full table: leave "
                     + ", ".join("--" + k.replace("_", "-") for k in narrowed) + " at the default")
    return Writer(names)
