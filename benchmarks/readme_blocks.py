"""Writing a benchmark's own output into the README, between its `<!-- NAME -->` / `<!-- /NAME -->` markers.

The README's benchmark tables are then the measuring script's rows, never retyped: `bench_to_readme.py` copies a
`distrl bench` report's tables (markers `bench:...`), and the scripts that measure what the bench does not
(actor-count scaling, ES's workers, the replay buffers against cpprb and tianshou, ES against evotorch) take
``--readme`` and write their table with a line naming the command, the date and the machine (markers
`script:...`).
"""

from __future__ import annotations

import datetime
import re
import shlex
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def write_block(name: str, body: str, readme: Path = README) -> None:
    """Replace what lies between ``<!-- name -->`` and ``<!-- /name -->`` in ``readme`` with ``body``."""
    text = readme.read_text()
    marker = re.compile(rf"(<!-- {re.escape(name)} -->\n).*?(\n<!-- /{re.escape(name)} -->)", re.S)
    if not marker.search(text):
        raise SystemExit(f"{readme.name} has no <!-- {name} --> block")
    readme.write_text(marker.sub(lambda m: m.group(1) + body + m.group(2), text))


def provenance() -> str:
    """One line: the command that is running (as typed from the repository root), today's date, the machine."""
    from distrl.bench.machine import describe, one_line

    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(README.parent)
    except ValueError:
        pass
    command = shlex.join(["python", str(script), *sys.argv[1:]])
    return f"Written by `{command}` on {datetime.date.today().isoformat()}; {one_line(describe())}."


def write_tables(name: str, tables: list[str]) -> None:
    """The provenance line, then ``tables`` (blank lines between), as the README's ``script:name`` block."""
    write_block(f"script:{name}", "\n\n".join([provenance(), *tables]))
