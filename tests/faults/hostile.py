"""Helpers of the hostile-input fault tests: the ``kc-sim`` command run as a real process,
and the one-line error every bad input must give (exit 2, one line on stderr, no traceback)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

_SCRIPT = Path(sys.executable).with_name("kc-sim")
KC = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "kc_sim.cli"]


def kc(*args, cwd=None, timeout=300, env=None, input=None) -> subprocess.CompletedProcess:
    """``kc-sim ARGS`` in a new process; stdin is empty (or ``input``)."""
    return subprocess.run([*KC, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, **(env or {})}, input=input or "", errors="replace")


def one_line_error(r: subprocess.CompletedProcess, *says: str) -> str:
    """Assert ``r`` ended with exit 2 and one line on stderr that holds every ``says``; return it."""
    err = r.stderr.strip()
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], err[-4000:])
    assert "Traceback" not in err and "Traceback" not in r.stdout, err[-4000:]
    assert len(err.splitlines()) == 1, err[-4000:]
    assert err.startswith("kc-sim: "), err
    for s in says:
        assert s in err, (s, err)
    return err


def have_mount() -> str | None:
    """None when this process may mount a small tmpfs (root with CAP_SYS_ADMIN), else why not."""
    if os.geteuid() != 0:
        return "mounting a small tmpfs needs root"
    if not shutil.which("mount"):
        return "no mount command"
    return None


def mount_tmpfs(where: Path, *options: str) -> str | None:
    """Mount a tmpfs at ``where`` (e.g. ``size=64k`` or ``ro``); None on success, else the reason."""
    why = have_mount()
    if why:
        return why
    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options or ("size=64k",)), "tmpfs", str(where)],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else f"cannot mount a tmpfs here ({r.stderr.strip()})"


def unmount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)
