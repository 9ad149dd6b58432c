"""The fault-injection suite runs the real command: ``python -m kc_sim.cli`` in its own
session (so every process it starts, workers and resource trackers included, can be found
afterwards), with short time limits given by its options."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).parent
AGENTS = HERE / "agents.py"
COMPILED = HERE / "compiled_agents.py"
KC = [sys.executable, "-m", "kc_sim.cli"]


def rounds(where: list) -> str:
    """Rounds for a run whose fault comes only in a worker: this process plays chunks itself
    until the workers are warm, which on a loaded machine can take the whole of a small run."""
    return "8000" if where[1] == "1" else "60000"


def agent(name: str) -> str:
    """The load name of a test agent (tests/faults/agents.py, or the compiled ``spin`` and ``plod``)."""
    return f"{COMPILED if name in ('spin', 'plod') else AGENTS}:{name}"


def session_processes(sid: int) -> list[str]:
    """The processes of session ``sid`` still alive (zombies do not count), as ``pid cmdline``."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            fields = text.rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                cmd = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                out.append(f"{stat.parent.name} {cmd.strip()}")
        except (OSError, ValueError, IndexError):
            continue
    return out


def no_process_left(sid: int, within: float = 10.0) -> list[str]:
    """Wait (up to ``within`` seconds) until session ``sid`` has no process; what is left."""
    t0 = time.monotonic()
    while (left := session_processes(sid)) and time.monotonic() - t0 < within:
        time.sleep(0.2)
    return left


@dataclass
class Ran:
    code: int
    out: str
    err: str
    left: list[str]                 # processes of its session alive after it ended

    def one_line_error(self) -> str:
        """The error it ended with: exit 2, one line on stderr, no traceback; returns the line."""
        lines = [x for x in self.err.splitlines() if x.strip()]
        assert self.code == 2, (self.code, self.err[-3000:])
        assert len(lines) == 1 and lines[0].startswith("kc-sim: error: "), self.err[-3000:]
        assert "Traceback" not in self.err
        return lines[0]


def start(*args: str, env: dict | None = None, cwd=None, stderr=subprocess.PIPE) -> subprocess.Popen:
    """Start ``kc-sim ARGS`` in a new session (``stderr``: a file to watch it as it comes)."""
    return subprocess.Popen([*KC, *map(str, args)], stdout=subprocess.PIPE, stderr=stderr, text=True,
                            start_new_session=True, cwd=cwd, env={**os.environ, **(env or {})})


def finish(p: subprocess.Popen, timeout: float = 240.0) -> Ran:
    """Wait for a command started by :func:`start`; then for its session to empty."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"kc-sim did not end within {timeout} s: {err[-3000:]}")
    return Ran(p.returncode, out, err or "", no_process_left(p.pid))


def kc(*args: str, timeout: float = 240.0, env: dict | None = None, cwd=None) -> Ran:
    """Run ``kc-sim ARGS`` to its end (see :func:`start`)."""
    return finish(start(*args, env=env, cwd=cwd), timeout)


FAULT = re.compile(r"at seed (\d+), round (\d+), turn (\d+); game record saved to (\S+\.jsonl)$")


def saved_record(line: str, run: Path) -> Path:
    """The game record a fault line names: it exists, in the run folder's faults/."""
    m = FAULT.search(line)
    assert m, line
    path = Path(m.group(4))
    assert path.exists() and path.parent == (run / "faults").resolve(), line
    return path
