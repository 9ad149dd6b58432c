"""One run at a time in a folder: an advisory lock that says who holds it.

Rule: a command that writes a run folder holds ``.lock`` in it (``fcntl.flock``) from
opening the folder to the end of the run, also when it fails; the file says who holds it
(pid, host, command, since when). A second command on the same folder says that in one
line and stops (exit 2), or, asked to wait (``--wait``), says so and waits. The lock dies
with its process, so a killed run never leaves the folder locked.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

from kc_sim.errors import UserError
from kc_sim.runs.layout import LOCK_FILE
from kc_sim.support.notice import notice

__all__ = ["FolderLock", "notice", "now"]


def now() -> str:
    """Local time as the manifest and the lock file write it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class FolderLock:
    """The lock of a run folder, held from :meth:`take` until :meth:`release` (or the
    process's end)."""

    def __init__(self, fd: int):
        self._fd: int | None = fd

    @classmethod
    def take(cls, out: Path, command: str | None, wait: bool) -> FolderLock:
        """Take the lock of folder ``out`` and write who holds it. Held by another process:
        a UserError naming it, or with ``wait`` a notice and a wait."""
        path = Path(out) / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise UserError(f"cannot write to {out}: {e.strerror or e}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                if not wait:
                    raise UserError(f"{out} is in use by another run: {holder}; wait for it to end, or give --wait "
                                    "to start once it has") from None
                notice(f"waiting for the run that holds {out}: {holder}")
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as e:                 # a file system without locks (some network ones)
                notice(f"cannot lock {out} ({e.strerror or e}): make sure no other command uses it meanwhile")
            me = {"pid": os.getpid(), "host": socket.gethostname(), "command": command or "run_tournament (Python)",
                  "since": now()}
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        return cls(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _holder(fd: int) -> str:
    """Who holds the lock, from the lock file: ``pid 123 (kc-sim tournament ...) since ...``."""
    try:
        info = json.loads(os.pread(fd, 1 << 16, 0).decode("utf-8", "replace") or "{}")
        where = "" if info.get("host") in (None, socket.gethostname()) else f" on {info['host']}"
        return f"pid {info['pid']}{where} ({info['command']}) since {info['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (it has not said which yet)"
