"""No process of a run outlives the command: every process a run starts dies with its parent.

:func:`die_with_parent` is called first thing in each process a run starts (loky and local
dask workers, the child that runs the command under its supervisor
(:mod:`kc_sim.processes.supervise`), the child that re-derives a stalled round). On Linux it
asks the kernel for SIGKILL when the parent dies (``prctl(PR_SET_PDEATHSIG)``): it arrives
even while the process is stuck in compiled code, which no thread of its own could stop.
Elsewhere a daemon thread looks at the parent once a second and ends the process when it has
gone. Either way it is checked once at once, in case the parent died before the call. loky's
resource tracker needs nothing: it ends when the last process holding its pipe (the parent
and the workers) has gone.

Imported by worker processes: the standard library only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import signal
import sys
import threading
import time

__all__ = ["die_with_parent"]

_PR_SET_PDEATHSIG = 1


def _prctl_deathsig() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(1)


class _Lifeline:
    """This process's tie to its parent: armed once (the first parent asked for)."""

    def __init__(self):
        self.parent: int | None = None

    def arm(self, parent: int) -> None:
        if self.parent is None:
            self.parent = parent
            if not _prctl_deathsig():
                threading.Thread(target=_watch, args=(parent,), name="kc-sim-lifeline", daemon=True).start()


@functools.cache
def _lifeline() -> _Lifeline:
    return _Lifeline()


def die_with_parent(parent: int | None = None) -> None:
    """End this process when ``parent`` (the pid it was started by; default: the current
    parent) dies. Safe to call more than once."""
    parent = os.getppid() if parent is None else int(parent)
    _lifeline().arm(parent)
    if os.getppid() != parent:            # the parent died before we asked
        os._exit(1)
