"""The private parts of other libraries that the process machinery reaches, in one place.

Rule: nothing else in kc-sim touches a third-party private attribute. Stopping loky's pool
without a hang (:meth:`kc_sim.processes.pool.WorkerPool.close`) and seeing a dead worker
that loky missed (:meth:`~kc_sim.processes.pool.WorkerPool.dead_worker`) need loky's
executor's own attributes, and seeing where its manager thread is blocked needs
multiprocessing's ``Connection._recv``. These are reached only through the functions below;
:func:`check_loky` looks, when the pool starts, that each is there, and says in one line
which is missing and which joblib versions are supported (``pyproject.toml``'s bounds are
the versions this is tested on), rather than failing obscurely when a worker dies.

Light: imported by the command line before numba (joblib and the standard library only).
"""

from __future__ import annotations

import multiprocessing.connection
import os
import sys

import joblib
from joblib.externals.loky import get_reusable_executor  # noqa: F401 - loky's public entry, re-exported
from joblib.externals.loky.process_executor import BrokenProcessPool  # noqa: F401 - re-exported

from kc_sim.errors import UserError

__all__ = ["BrokenProcessPool", "SUPPORTED_JOBLIB", "check_loky", "dask_worker_errors", "get_reusable_executor",
           "manager_thread", "reading_a_result", "result_pipe_writer", "worker_processes"]

#: the joblib versions whose loky internals are known to be as used here (pyproject's bounds)
SUPPORTED_JOBLIB = ">=1.6,<1.7"

#: what is reached, by attribute path on loky's executor (see the functions below)
_LOKY_ATTRIBUTES = ("_executor_manager_thread", "_processes", "_result_queue", "_result_queue._writer")


def _has(obj, path: str) -> bool:
    for name in path.split("."):
        if not hasattr(obj, name):
            return False
        obj = getattr(obj, name)
    return True


def check_loky(executor) -> None:
    """Check that ``executor`` (loky's reusable executor) and multiprocessing have every
    private attribute this package reaches; a UserError in one line naming what is missing
    if not."""
    missing = [f"loky executor's {p}" for p in _LOKY_ATTRIBUTES if not _has(executor, p)]
    if not hasattr(multiprocessing.connection.Connection, "_recv"):
        missing.append("multiprocessing's Connection._recv")
    if missing:
        raise UserError(f"joblib {joblib.__version__} is not supported by kc-sim's worker pool (it lacks "
                        f"{', '.join(missing)}): install joblib{SUPPORTED_JOBLIB}, or run with --jobs 1")


def manager_thread(executor):
    """loky's thread that hands tasks to the workers and reads their results (None before
    the first task or after a shutdown); ``shutdown()`` forgets it, so read it first."""
    return getattr(executor, "_executor_manager_thread", None)


def worker_processes(executor) -> dict:
    """The pool's worker processes, pid -> process object (a copy)."""
    return dict(getattr(executor, "_processes", None) or {})


def result_pipe_writer(executor):
    """This process's writing end of the pool's result pipe (a multiprocessing Connection;
    None once the pool is shut down)."""
    return getattr(getattr(executor, "_result_queue", None), "_writer", None)


def reading_a_result(thread) -> bool:
    """Is ``thread`` blocked reading a message from a pipe (in multiprocessing's
    ``Connection._recv``)? Then it cannot be closing that pipe itself."""
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_recv" and code.co_filename.endswith(os.path.join("multiprocessing", "connection.py")):
            return True
        frame = frame.f_back
    return False


def dask_worker_errors() -> tuple:
    """The exceptions a dask future raises when its worker died (dask is optional and slow
    to import: only asked for with ``--backend dask``)."""
    from dask.distributed import KilledWorker
    from distributed.comm.core import CommClosedError
    from concurrent.futures import CancelledError

    return KilledWorker, CommClosedError, CancelledError
