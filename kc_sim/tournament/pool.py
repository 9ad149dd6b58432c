"""The pool of worker processes of the loky backend, and how many processes a run gets.

Rule: a run plays in ``--jobs`` processes, this one and ``jobs - 1`` workers of joblib's
reusable loky pool; by default one per core, but no more than the work pays for
(:data:`~kc_sim.tournament.sizes.ROUNDS_PER_WORKER`). Workers die with this
process (:mod:`~kc_sim.tournament.lifeline`) and ignore Ctrl-C (only the parent handles it,
and stops them). A command that will surely use workers starts them before anything heavy
is imported (:func:`start_early`), so their start overlaps its own.

Light on purpose: imported by the command line before numba, numpy's compiled core or the
play layer are (``kc_sim.tournament.backends`` uses the pool once a run is planned).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager

from joblib.externals.loky import get_reusable_executor

from kc_sim.errors import UserError
from kc_sim.tournament.lifeline import die_with_parent
from kc_sim.tournament.sizes import CHUNK_ROUNDS, ROUNDS_PER_MATCH, ROUNDS_PER_WORKER


def resolve_jobs(jobs) -> int:
    """The number of processes ``--jobs`` asks for (None or -1: every core)."""
    if jobs is None or int(jobs) == -1:
        return os.cpu_count() or 1
    if int(jobs) < 1:
        raise UserError(f"bad --jobs {jobs}: expected a positive number (or -1 for every core)")
    return int(jobs)


def workers_likely(jobs, rounds, matches) -> bool:
    """Whether a run will surely want worker processes, known before its plan: ``--jobs``
    above 1 and more than a chunk to play, or by default at least two workers' worth of
    compiled rounds."""
    units = rounds if rounds is not None else (matches or 0) * ROUNDS_PER_MATCH
    if resolve_jobs(jobs) < 2 or not units:
        return False
    return units > CHUNK_ROUNDS if jobs is not None and int(jobs) != -1 else units >= 2 * ROUNDS_PER_WORKER[True]


def start_early(jobs, rounds, matches, backend) -> bool:
    """Start the loky workers of a run now, before the plan loads the agents, when the run
    will surely use them (:func:`workers_likely`); a bad ``--jobs`` is left to the run's own
    checks. Returns whether they were started."""
    try:
        if (backend or "loky") != "loky" or not workers_likely(jobs, rounds, matches):
            return False
    except (UserError, ValueError, TypeError):
        return False
    start_loky(resolve_jobs(jobs))
    return True


def _worker_start(parent: int) -> None:
    """Worker initializer: the worker dies with the parent (:mod:`~kc_sim.tournament.lifeline`);
    Ctrl-C in a terminal reaches the whole process group, but only the parent handles it
    (it stops the workers), so a worker never prints a traceback."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


_pool = []                       # the reusable pool once made (for release_workers)


def quiet_trackers() -> None:
    """The resource trackers of loky and multiprocessing outlive a parent killed with
    ``kill -9`` by a moment, and then warn on the terminal about the semaphores it left:
    the processes started from here do not print that warning."""
    quiet = "ignore:resource_tracker:UserWarning"
    now = os.environ.get("PYTHONWARNINGS", "")
    if quiet not in now.split(","):
        os.environ["PYTHONWARNINGS"] = f"{now},{quiet}" if now else quiet


def loky_executor(workers: int):
    """joblib's reusable loky process pool of ``workers`` processes (they inherit the
    environment, hence the numba cache folder); the same pool is reused by later runs of
    this process."""
    quiet_trackers()
    ex = get_reusable_executor(max_workers=workers, timeout=300, initializer=_worker_start,
                               initargs=(os.getpid(),))
    _pool[:] = [ex]
    return ex


def release_workers() -> None:
    """Stop the pool's workers now, when nothing will reuse them (the end of a command):
    left to the interpreter's exit, their shutdown adds about half a second."""
    if _pool:
        stop_loky(_pool.pop())


def start_loky(jobs: int) -> None:
    """Start the pool's workers for a run of ``jobs`` playing processes (this one and
    ``jobs - 1`` workers) now: each imports the play layer as it starts (the pool's
    initializer lives in this module), while this process goes on."""
    with sigint_ignored():          # see sigint_ignored; the initializer covers respawned workers
        before = _pool[0] if _pool else None
        ex = loky_executor(jobs - 1)
        if ex is not before:        # started once (the command, then the run, ask again)
            ex.submit(_started)


def _started() -> None:
    """The task that starts the pool's processes: a started worker has imported what every
    chunk needs and loaded numba's registries, while this process plans (then loading the
    run's compiled code takes the worker a few hundredths of a second)."""
    import kc_sim.tournament.worker  # noqa: F401
    from kc_sim.core.kernel import prepare_numba

    prepare_numba()


def stop_loky(ex) -> None:
    """Kill the pool's workers and wait (briefly) for its manager thread, so that nothing
    is left running or joining at interpreter exit.

    A worker killed while it was sending a result leaves half a message in the pool's result
    pipe. The manager thread then waits for the rest for ever, since this process holds the
    pipe's writing end too, and the interpreter's exit joins that thread. So the run printed
    its one line and never ended (about one worker killed in 20, on a loaded machine). When
    the thread is still reading a message two seconds after the shutdown
    (:func:`_reading_a_result`), the remaining workers are killed and this process's writing
    end is pointed at /dev/null: the read then meets the end of the pipe, and the thread
    ends. A thread that is only slow is left alone (it closes the pipe itself)."""
    thread = getattr(ex, "_executor_manager_thread", None)      # shutdown() forgets these
    results = getattr(ex, "_result_queue", None)
    workers = list(getattr(ex, "_processes", {}).values())
    ex.shutdown(wait=False, kill_workers=True)
    if thread is None:
        return
    thread.join(timeout=2)
    if thread.is_alive() and _reading_a_result(thread):
        for proc in workers:
            try:
                os.kill(proc.pid, signal.SIGKILL)      # (loky's Popen has no kill())
            except (OSError, TypeError):
                pass
        try:
            # the descriptor stays valid (loky closes it later): only the pipe's end is let go
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, results._writer.fileno())
            os.close(null)
        except (OSError, AttributeError, ValueError):
            pass
        thread.join(timeout=10)


def _reading_a_result(thread) -> bool:
    """Is the pool's manager thread blocked reading a message from the result pipe (in
    multiprocessing's ``Connection._recv``)? Then it cannot be closing that pipe itself."""
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_recv" and code.co_filename.endswith(os.path.join("multiprocessing", "connection.py")):
            return True
        frame = frame.f_back
    return False


@contextmanager
def sigint_ignored():
    """Ignore Ctrl-C while worker processes are started: they inherit the ignored signal
    (Python then installs no KeyboardInterrupt handler), so Ctrl-C in a terminal, which
    reaches the whole process group, stops only the parent, which stops them, and no worker
    prints a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
