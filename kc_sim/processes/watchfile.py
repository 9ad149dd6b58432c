"""The watch file of a playing process, its limits, and what its readers conclude.

Each playing process keeps ``<run>/.watch/<pid>.json`` (:mod:`kc_sim.processes.watch`
writes it): ``pid``, ``host``, ``state`` (``playing``, ``compiling``, ``idle``, ``stuck``
with its ``why``), the unit of work (``chunk``: its index, -1 for the warm-up;
``agents``; ``compiled``; ``units``; ``task``: the task, for a replay), ``since``, its
``limit`` and decision ``timeout`` in seconds, and its ``slow`` decisions by agent; its
mtime is a heartbeat. The parent of a run (:class:`~kc_sim.processes.watch.RunWatch`) and
the command's supervisor (:mod:`kc_sim.processes.supervise`) read them here.

Light: the standard library only (the supervisor reads watch files before it has imported
anything of the game).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

__all__ = ["DEFAULT_DECISION_TIMEOUT", "GRACE", "SLOW_AFTER", "SLOW_EVERY", "WARM_LIMIT",
           "dead_players", "kill", "ours", "read_watch", "stuck_reason", "wall"]

#: the default time limit of one decision of a Python agent, in seconds
DEFAULT_DECISION_TIMEOUT = 60.0
#: the warm-up compiles (tens of seconds from an empty cache, some of it in calls that hold
#: the interpreter for seconds): it is stuck once its process gave no heartbeat for this long
#: (or the decision limit, if longer); its Python agents' decisions have the usual limit
WARM_LIMIT = 30.0
#: a decision longer than this (or a quarter of the limit, if less) is named as slow
SLOW_AFTER = 1.0
#: how often a slow agent is named again (with its count and longest decision)
SLOW_EVERY = 30.0
#: after a decision was stopped (or after the limit without a heartbeat), this long before
#: the process counts as stuck in compiled or C code
GRACE = 2.0

wall = time.time          # watch files are compared across processes: wall-clock seconds


def read_watch(path: Path) -> tuple[dict, float] | None:
    """A watch file and its last heartbeat (mtime), or None if it is gone or half-written."""
    try:
        beat = os.stat(path).st_mtime
        entry = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (entry, beat) if isinstance(entry, dict) else None


def stuck_reason(entry: dict, beat: float, now: float | None = None) -> str | None:
    """Why the process of a watch file counts as stuck (None while it does not): it marked
    itself stuck, its chunk of compiled agents finished no round within its limit, or it gave no heartbeat
    for longer than its limit."""
    if entry.get("state") == "stuck":
        return str(entry.get("why"))
    now = wall() if now is None else now
    limit = float(entry.get("limit", DEFAULT_DECISION_TIMEOUT))
    if entry.get("state") == "compiling":           # numba compiling: only the heartbeat counts
        limit = max(limit, WARM_LIMIT)
        return f"it gave no sign of life for {now - beat:.0f} s" if now - beat > limit + GRACE else None
    if entry.get("state") != "playing":
        return None
    ran = now - float(entry.get("since", now))
    if entry.get("compiled") and ran > limit:
        what = "the warm-up" if entry.get("chunk", 0) < 0 else f"chunk {entry.get('chunk')} of compiled agents"
        done = "ran" if entry.get("chunk", 0) < 0 else "finished no round for"
        return f"{what} {done} {ran:.0f} s, past its limit of {limit:.0f} s"
    if now - beat > limit + GRACE:
        return f"it gave no sign of life for {now - beat:.0f} s (stuck in compiled or C code)"
    return None


def ours(entry: dict) -> bool:
    """Is the process of a watch file a child of this one, on this machine (one we may kill)?"""
    if entry.get("host") != socket.gethostname():
        return False
    try:
        stat = Path(f"/proc/{int(entry['pid'])}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid()
    except (OSError, ValueError, KeyError, IndexError):
        return False


def kill(pid: int) -> None:
    try:
        os.kill(int(pid), signal.SIGKILL)
    except (OSError, ValueError):
        pass


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError, IndexError):
        try:
            os.kill(int(pid), 0)
        except (OSError, ValueError):
            return False
        return True


def dead_players(watch_dir) -> list[dict]:
    """The processes of this machine that died while playing a chunk (their watch files
    say ``playing``): ``pid``, ``chunk`` (-1: the warm-up), ``agents``."""
    out = []
    for path in sorted(Path(watch_dir).glob("*.json")):
        got = read_watch(path)
        if got is None:
            continue
        entry = got[0]
        if entry.get("state") in ("playing", "stuck") and entry.get("host") == socket.gethostname() \
                and not _alive(entry.get("pid", -1)):
            out.append({"pid": entry.get("pid"), "chunk": int(entry.get("chunk", -1)),
                        "agents": [str(a) for a in entry.get("agents", [])]})
    return out
