"""What the tests read of processes in Linux's ``/proc``: state, parent, name, descendants."""

from pathlib import Path


def stat_fields(pid) -> list[str]:
    """``/proc/PID/stat`` after the command name: state, ppid, ... (the name is in parentheses and may hold
    spaces or parentheses itself, as a process title such as pytest-xdist's does)."""
    return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()


def alive(pid: int) -> bool:
    """Running (not gone, not a zombie)."""
    try:
        return stat_fields(pid)[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def comm(pid: int) -> str:
    """The process's name, or "" where it has exited meanwhile."""
    try:
        return (Path("/proc") / str(pid) / "comm").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def descendants(pid: int) -> list[int]:
    """Children, grandchildren, ...: a run's components are children of its forkserver, a child of the run."""
    parent = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int(stat_fields(d.name)[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
    out, frontier = [], [pid]
    while frontier:
        frontier = [c for c, p in parent.items() if p in frontier]
        out += frontier
    return out
