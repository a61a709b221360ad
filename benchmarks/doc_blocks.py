"""Writing a benchmark's own output into the documentation, between its `<!-- NAME -->` / `<!-- /NAME -->` markers.

The pages (``docs/**/*.md`` and ``README.md``) hold each block once, on whichever page it belongs to; a writer
finds it there. The tables are then the measuring script's rows, never retyped: `bench_to_docs.py` copies a
`distrl bench` report's tables (markers `bench:...`), and the scripts that measure what the bench does not
(actor-count scaling, ES's workers, the replay buffers against cpprb and tianshou, ES against evotorch) take
``--docs`` (or its older name ``--readme``) and write their table under a line naming the command, the date and
the machine (markers `script:...`). Such a script calls :func:`start` before it measures: pages without the block
are refused then, not after minutes of measuring, and the provenance names the code that measured (a commit made
during the run is not it).
"""

from __future__ import annotations

import argparse
import datetime
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def pages(root: Path | None = None) -> list[Path]:
    """The pages that may hold blocks: the README and every page of the docs site."""
    root = ROOT if root is None else root
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def _marker(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {re.escape(name)} -->\n).*?(<!-- /{re.escape(name)} -->)", re.S)


def _as_list(where: Path | list[Path] | None) -> list[Path]:
    if where is None:
        return pages()
    return [where] if isinstance(where, Path) else list(where)


def locate(names, where: Path | list[Path] | None = None) -> dict[str, Path]:
    """The page that holds each block; every block must be there exactly once, over all the pages."""
    files = _as_list(where)
    texts = {f: f.read_text() for f in files if f.is_file()}
    found = {}
    for name in names:
        holders = [(f, len(_marker(name).findall(t))) for f, t in texts.items()]
        count = sum(n for _, n in holders)
        if count != 1:
            what = files[0].name if len(files) == 1 else "the pages"
            raise SystemExit(f"{what} has {count} <!-- {name} --> blocks (needs exactly one)")
        found[name] = next(f for f, n in holders if n)
    return found


def write_blocks(blocks: dict[str, str], where: Path | list[Path] | None = None) -> None:
    """Replace what lies between ``<!-- name -->`` and ``<!-- /name -->`` with the body, for every block, on the
    page that holds it (``where``: a page or pages; by default :func:`pages`); nothing is written unless every
    block is there exactly once."""
    located = locate(blocks, where)
    texts = {f: f.read_text() for f in set(located.values())}
    for name, body in blocks.items():
        f = located[name]
        texts[f] = _marker(name).sub(lambda m, body=body: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), texts[f])
    for f, text in texts.items():
        f.write_text(text)


def running_command() -> str:
    """The command that is running, as typed from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(ROOT)
    except ValueError:
        pass
    return shlex.join(["python", str(script), *sys.argv[1:]])


_CODE = ["--", "src", "benchmarks", ":(exclude)benchmarks/reports"]


def _git(*args: str) -> str:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else ""


def code_state() -> str:
    """The commit, with ``+dirty`` when ``src/`` or ``benchmarks/`` (reports aside) has uncommitted changes: the
    code that measures (a page or report edited meanwhile does not make the figures another commit's)."""
    dirty = "+dirty" if _git("status", "--porcelain", "--untracked-files=no", *_CODE) else ""
    return _git("rev-parse", "--short", "HEAD") + dirty


def code_changed_since(commit: str) -> list[str]:
    """Files of ``src/`` and ``benchmarks/`` (reports aside) that differ from ``commit`` now, committed or not."""
    return _git("diff", "--name-only", commit.removesuffix("+dirty"), *_CODE).split()


def provenance() -> str:
    """One line: the command that is running, today's date, the machine and the code's state (:func:`code_state`)."""
    from distrl.bench.machine import describe, one_line

    machine = one_line({k: v for k, v in describe().items() if k != "commit"})
    return f"Written by `{running_command()}` on {datetime.date.today().isoformat()}; {machine}; commit {code_state()}."


def steps_label(steps: int) -> str:
    """45000 -> 45k, 2000000 -> 2M: budgets in block names and tables."""
    return f"{steps / 1e6:g}M" if steps >= 1_000_000 else f"{steps / 1e3:g}k"


def env_label(env_id: str) -> str:
    """``distrl/DeepSea-v0`` -> ``DeepSea-v0``: an env id in a block name."""
    return env_id.split("/")[-1]


def markdown_table(columns, rows) -> str:
    """A markdown table: the header, its rule and one line per row (cells as ``str`` gives them)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def report_line(report: Path, measured_on: str, how: str = "") -> str:
    """The line above a table rendered from a saved report (a device session's, which this machine cannot
    measure again): the report, how it was measured and on what machine, not today's date and machine."""
    try:
        report = report.resolve().relative_to(ROOT)
    except ValueError:
        pass
    return f"Rendered from `{report}`{how}; measured on {measured_on}."


class Table:
    """A markdown table a script prints row by row while it measures (a long study shows its progress) and keeps
    for its docs block (``str(table)``)."""

    def __init__(self, *columns: str):
        self.columns, self.rows = columns, []
        print(markdown_table(columns, []), flush=True)

    def row(self, *cells) -> None:
        self.rows.append(cells)
        print(markdown_table(self.columns, [cells]).splitlines()[-1], flush=True)

    def __str__(self) -> str:
        return markdown_table(self.columns, self.rows)


class Writer:
    """The blocks a script will write, checked and dated when it starts; :meth:`write` after measuring. A block
    another command wrote is refused before measuring: a different run (other seeds, another budget) would
    replace it under the same name, so re-run the command its line names, or edit the block by hand first."""

    def __init__(self, names: list[str], where: Path | list[Path] | None = None):
        self.where = where
        located = locate([f"script:{n}" for n in names], where)
        command = running_command()
        for name in names:
            page = located[f"script:{name}"]
            body = _marker(f"script:{name}").search(page.read_text()).group(0).split("\n", 1)[1]
            written_by = re.match(r"Written by `([^`]*)`", body)
            if written_by and written_by.group(1) != command:
                raise SystemExit(f"{page.name}'s block script:{name} was written by `{written_by.group(1)}`, not "
                                 f"`{command}`: run that command to measure it again")
        self.line, self.code = provenance(), code_state()

    def write(self, tables: dict[str, str]) -> None:
        """``tables``: block name (without ``script:``) -> markdown table, each under the provenance line (which
        says so if the code changed while the script ran: ``local`` runs start processes that import it anew)."""
        line, changed = self.line, code_changed_since(self.code)
        if changed:
            line = line[:-1] + f" (at the end: {code_state()}; changed during the run: {', '.join(changed)})."
        write_blocks({f"script:{n}": f"{line}\n\n{t}" for n, t in tables.items()}, self.where)


def finished(summary: dict) -> dict:
    """``summary`` of a run or league that ended on its own; one that Ctrl-C, SIGTERM or SIGHUP ended (its
    checkpoint written) ends the script too, exit 130 and no table: the signal was meant for the study, not only for
    the run it happened to reach, and a table with a cut-short row is not the study's."""
    if summary.get("interrupted"):
        print("interrupted: the study stops here, no table written", file=sys.stderr)
        raise SystemExit(130)
    return summary


def existing_file(text: str) -> Path:
    """An argparse ``type`` for a saved report: a missing file is argparse's one line and exit 2, not a traceback."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text} (give a report a benchmark saved)")
    return path


def add_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--docs", "--readme", dest="readme", action="store_true",
                        help="write the table(s) into their block on the docs page that holds it (doc_blocks.py)")


def start(names: list[str], parser: argparse.ArgumentParser, args: argparse.Namespace,
          keep: tuple[str, ...] = ()) -> Writer | None:
    """A :class:`Writer` for ``names`` when ``--docs`` (``--readme``) was given, else None. The options in ``keep``
    narrow the run: with ``--docs`` they must stay at their defaults, so a partial run cannot replace a full table."""
    if not args.readme:
        return None
    narrowed = [k for k in keep if getattr(args, k) != parser.get_default(k)]
    if narrowed:
        parser.error("--docs replaces the page's full table: leave "
                     + ", ".join("--" + k.replace("_", "-") for k in narrowed) + " at the default")
    return Writer(names)
