"""The pool of worker processes of the loky backend: one object, started once, closed once.

Rule: a run plays in ``--jobs`` processes, this one and ``jobs - 1`` workers of joblib's
reusable loky pool. The pool is a
:class:`WorkerPool`, owned by whoever made it: the command (which starts it before
anything heavy is imported, so the workers' start overlaps its own, and hands it to the
run) or the run itself (for a Python caller that passes none). Workers die with this
process (:mod:`~kc_sim.processes.lifeline`) and ignore Ctrl-C (only the parent handles it,
and stops them). :meth:`WorkerPool.close` stops them at once, also when one of them died
in the middle of sending a result.

Light on purpose: imported by the command line before numba, numpy's compiled core or the
play layer are.
"""

from __future__ import annotations

import collections
import itertools
import os
import signal
import threading
from contextlib import contextmanager

from kc_sim.processes import compat
from kc_sim.processes.lifeline import die_with_parent

__all__ = ["WorkerPool", "quiet_trackers", "sigint_ignored"]

#: seconds an idle worker waits for work before it leaves (loky's own timeout)
IDLE_TIMEOUT = 300


def _worker_start(parent: int) -> None:
    """Worker initializer: the worker dies with the parent (:mod:`~kc_sim.processes.lifeline`);
    Ctrl-C in a terminal reaches the whole process group, but only the parent handles it
    (it stops the workers), so a worker never prints a traceback."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def quiet_trackers() -> None:
    """The resource trackers of loky and multiprocessing outlive a parent killed with
    ``kill -9`` by a moment, and then warn on the terminal about the semaphores it left:
    the processes started from here do not print that warning."""
    quiet = "ignore:resource_tracker:UserWarning"
    now = os.environ.get("PYTHONWARNINGS", "")
    if quiet not in now.split(","):
        os.environ["PYTHONWARNINGS"] = f"{now},{quiet}" if now else quiet


class WorkerPool:
    """joblib's reusable loky pool of this process, as an object its owner starts once and
    closes once (a context manager: leaving the ``with`` closes it).

    ``preload`` (a picklable function of no arguments) is the first task of a newly started
    pool: its workers import and load what every task needs while this process goes on
    (it must be importable without loading anything heavy in this process)."""

    def __init__(self, preload=None):
        self.preload = preload
        self.workers = 0                  # worker processes asked for (0: not started)
        self._ex = None

    @property
    def started(self) -> bool:
        return self._ex is not None

    def start(self, workers: int) -> None:
        """Start ``workers`` worker processes now (a started pool is resized if ``workers``
        differs, and left as it is otherwise); the first time, its workers run ``preload``.
        Checks that loky has what :mod:`~kc_sim.processes.compat` reaches."""
        with sigint_ignored():          # see sigint_ignored; the initializer covers respawned workers
            before = self._ex
            quiet_trackers()
            ex = compat.get_reusable_executor(max_workers=workers, timeout=IDLE_TIMEOUT, initializer=_worker_start,
                                              initargs=(os.getpid(),))
            if ex is not before:
                compat.check_loky(ex)
            self._ex, self.workers = ex, workers
            if ex is not before and self.preload is not None:     # started once (the command, then the run, ask)
                ex.submit(self.preload)

    @property
    def executor(self):
        """loky's executor (for :mod:`~kc_sim.processes.compat`'s functions); the pool must
        be started."""
        if self._ex is None:
            raise RuntimeError("the worker pool is not started")
        return self._ex

    def warm(self, fn, arg) -> list:
        """Have each worker run ``fn(arg)`` (e.g. load the run's compiled code); the futures,
        queued before any task, so a worker plays only once warm."""
        with sigint_ignored():
            ex = self.executor
            return [ex.submit(fn, arg) for _ in range(self.workers)]

    def submit(self, fn, *args):
        """``fn(*args)`` in a worker: its future."""
        return self.executor.submit(fn, *args)

    def map_ordered(self, fn, arg_tuples):
        """``fn(*args)`` for each of ``arg_tuples`` in the workers (the pool must be started),
        yielding the results in the order given as they come. At most two tasks per worker
        are queued at a time (as the tournament's backend does): what is left to stop on an
        interrupt stays small. A worker that died (seen by loky, or by :meth:`dead_worker`
        every second, which loky can miss) raises ``BrokenProcessPool`` saying which and how;
        the caller words it for its command."""
        todo = iter(arg_tuples)
        queued = collections.deque(self.submit(fn, *args) for args in itertools.islice(todo, 2 * self.workers))
        while queued:
            try:
                result = queued[0].result(timeout=1.0)
            except TimeoutError:
                if (died := self.dead_worker()) is not None:
                    raise compat.BrokenProcessPool(died) from None
                continue
            except compat.BrokenProcessPool as e:
                raise compat.BrokenProcessPool(self.dead_worker() or str(e)) from None
            queued.popleft()
            for args in itertools.islice(todo, 1):
                queued.append(self.submit(fn, *args))
            yield result
        # (the futures left are not cancelled: loky's manager thread fails on a cancelled future
        # at shutdown; closing the pool stops their workers)

    def processes(self) -> dict:
        """The worker processes, pid -> process object (a copy of loky's table)."""
        return compat.worker_processes(self.executor)

    def dead_worker(self) -> str | None:
        """A description of a worker of the pool that died: killed by a signal or exited with
        an error (None while none did). A worker that left after loky's idle timeout exits
        with 0 and is not a loss. (loky's own detection can miss a worker killed at the
        wrong moment: the backend asks this every second while it waits.)"""
        for pid, proc in self.processes().items():
            code = proc.exitcode
            if code not in (None, 0):
                return f"worker {pid} exited with code {code}"
        return None

    def close(self) -> None:
        """Stop the workers now, when nothing will use them (the end of a run or a command;
        left to the interpreter's exit, their shutdown adds about half a second). Safe to
        call more than once."""
        ex, self._ex, self.workers = self._ex, None, 0
        if ex is not None:
            with _manager_thread_quiet():
                _stop(ex)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextmanager
def _manager_thread_quiet():
    """While the pool is torn down on purpose, an exception of loky's manager thread is not
    printed: with tasks still queued (Ctrl-C in ``kc-sim analyse --jobs``) its bookkeeping can
    fail on the items the shutdown just removed (a KeyError, InvalidStateError) and print a
    traceback after the command's one line. Other threads' exceptions are printed as before."""
    before = threading.excepthook

    def hook(args):
        if args.thread is None or args.thread.name != "ExecutorManagerThread":
            before(args)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = before


def _stop(ex) -> None:
    """Kill the pool's workers and wait (briefly) for its manager thread, so that nothing
    is left running or joining at interpreter exit.

    A worker killed while it was sending a result leaves half a message in the pool's result
    pipe. The manager thread then waits for the rest for ever, since this process holds the
    pipe's writing end too, and the interpreter's exit joins that thread. So the run printed
    its one line and never ended (about one worker killed in 20, on a loaded machine). When
    the thread is still reading a message two seconds after the shutdown
    (:func:`~kc_sim.processes.compat.reading_a_result`), the remaining workers are killed and
    this process's writing end is pointed at /dev/null: the read then meets the end of the
    pipe, and the thread ends. A thread that is only slow is left alone (it closes the pipe
    itself)."""
    thread = compat.manager_thread(ex)                 # shutdown() forgets these
    writer = compat.result_pipe_writer(ex)
    workers = list(compat.worker_processes(ex).values())
    ex.shutdown(wait=False, kill_workers=True)
    if thread is None:
        return
    thread.join(timeout=2)
    if thread.is_alive() and compat.reading_a_result(thread):
        for proc in workers:
            try:
                os.kill(proc.pid, signal.SIGKILL)      # (loky's Popen has no kill())
            except (OSError, TypeError):
                pass
        try:
            # the descriptor stays valid (loky closes it later): only the pipe's end is let go
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, writer.fileno())
            os.close(null)
        except (OSError, AttributeError, ValueError):
            pass
        thread.join(timeout=10)


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
