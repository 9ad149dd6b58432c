"""Where tasks are played: in this process, a loky process pool or a dask cluster.

:func:`executor` gives a function that maps tasks (picklable, each with an ``index``) to
their results in completion order, whatever the backend; what a task is and how it is
played comes from the caller, as a :class:`Job` (the tournament plays chunks):

* ``sequential`` (or loky with one job): in this process, one task after another;
* ``loky``: ``jobs`` processes play: this one and ``jobs - 1`` workers of a
  :class:`~kc_sim.processes.pool.WorkerPool`, at most two tasks in flight per worker
  (:func:`windowed`). This process plays a task whenever no worker result is waiting, so it
  plays from the start while the workers are still starting, and handles each finished
  result in between;
* ``dask``: a ``dask.distributed`` client of a scheduler, or of a LocalCluster.

A worker that dies ends the run with :class:`WorkerLost` naming the chunks not finished;
on any error or Ctrl-C the workers are stopped at once. Ctrl-C is ignored by the workers
(only the parent handles it), so no worker prints a traceback. The workers of loky and of
a LocalCluster die with this process, however it ends (:mod:`~kc_sim.processes.lifeline`).
"""

from __future__ import annotations

import itertools
import logging
import time
from concurrent.futures import FIRST_COMPLETED, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

from kc_sim.errors import UserError
from kc_sim.processes.compat import BrokenProcessPool, dask_worker_errors
from kc_sim.processes.lifeline import die_with_parent
from kc_sim.processes.pool import WorkerPool, quiet_trackers, sigint_ignored
from kc_sim.processes.watchfile import dead_players

__all__ = ["BACKENDS", "EAGER_TASKS_PER_SLOT", "Job", "WorkerLost", "executor", "windowed"]

#: the backends, by name
BACKENDS = ("loky", "dask", "sequential")


class WorkerLost(UserError):
    """A worker process died (killed from outside, out of memory) while playing chunks;
    the chunks already written are kept and a rerun resumes."""


@dataclass(frozen=True)
class Job:
    """What the backends play: ``play(task)`` for each task, after ``warm(warm_arg)`` in
    every playing process (both picklable by reference); ``watch_dir``: where the playing
    processes keep their watch files (:mod:`kc_sim.processes.watch`), which say what a dead
    worker was playing. ``local``: what this process plays a task with when it plays one
    itself (default ``play``): a caller may leave part of the work on a task played here to
    a thread of its own."""

    play: Callable
    warm: Callable
    warm_arg: object
    watch_dir: str | None = None
    local: Callable | None = None

    @property
    def here(self) -> Callable:
        """The function this process plays a task with."""
        return self.local or self.play


def _lost(err: BaseException, running, watch_dir=None) -> WorkerLost:
    """The WorkerLost of a worker that died while ``running`` (tasks) were running or queued;
    the watch files (:mod:`~kc_sim.processes.watchfile`) say which chunk a dead worker was
    playing, and with which agents."""
    running = sorted(running, key=lambda t: t.index)
    dead = _dead_players(watch_dir) if watch_dir else []
    if dead:
        pids = sorted({e["pid"] for e in dead})
        chunks = sorted({e["chunk"] for e in dead})
        agents = sorted({a for e in dead for a in e["agents"]})
        played = [str(c) for c in chunks if c >= 0]
        what = ", ".join((["the warm-up"] if chunks[0] < 0 else [])
                         + ([f"chunk{'s' if len(played) > 1 else ''} {', '.join(played)}"] if played else []))
        return WorkerLost(f"worker{'s' if len(pids) > 1 else ''} {', '.join(map(str, pids))} died while playing "
                          f"{what} (agents {', '.join(agents)}): an agent may have ended or crashed the process "
                          "(os._exit, a fault in C code), or it ran out of memory; finished chunks are kept: rerun "
                          "the same command to resume")
    chunks = ", ".join(str(t.index) for t in running)
    return WorkerLost(f"a worker process died ({type(err).__name__}) while chunk{'s' if ',' in chunks else ''} "
                      f"{chunks} {'were' if ',' in chunks else 'was'} running or queued; finished chunks are kept: "
                      "rerun the same command to resume")


def _dead_players(watch_dir, within: float = 3.0) -> list[dict]:
    """:func:`dead_players`, looked at again for up to ``within`` seconds while it finds none:
    the news of a death can come before the process has finished dying (its connections are
    closed early in its exit, and a busy machine may take a while to end it)."""
    ends = time.monotonic() + within
    while not (dead := dead_players(watch_dir)) and time.monotonic() < ends:
        time.sleep(0.05)
    return dead


def windowed(submit, tasks, window: int, dead_worker=lambda: None, local=None, ready=lambda: True,
              watch_dir=None):
    """Submit tasks keeping at most ``window`` in flight; yield results as they complete.
    With ``local`` (a function playing one task here), whenever no submitted task has
    finished the next task is played by ``local`` in this process instead of waiting. A short
    run submits no task before ``ready()`` (the workers are warm): a task queued behind a
    worker still starting could leave this process waiting for it at the end. A long one
    (:data:`EAGER_TASKS_PER_SLOT` tasks or more for each of the ``window`` slots) queues
    its first tasks at once, behind the workers' warm-up, so that a worker plays as soon as
    it is warm rather than when this process next looks (after its own chunk and the store,
    the first of which imports pyarrow).
    A broken pool (a worker died), seen by a result, by the next submit or by
    ``dead_worker()`` (checked before each task played here and every second while
    waiting), ends the run with
    :class:`WorkerLost` naming the chunks not finished. Pending futures are left to the
    caller's teardown (cancelling them first races the pool's own shutdown); when the caller
    stops asking for results, the chunks in flight are waited for."""
    tasks = list(tasks)
    eager = len(tasks) >= EAGER_TASKS_PER_SLOT * window
    it = iter(tasks)
    pending = {}
    task = None
    submitting = False

    def start_submitting():
        nonlocal submitting, task
        if not submitting and (local is None or eager or ready()):
            submitting = True
            for task in itertools.islice(it, window):
                pending[submit(task)] = task
            task = None

    try:
        while True:
            start_submitting()
            done = {f for f in pending if f.done()}
            if not done and local is not None:
                died = dead_worker()        # loky can miss a death (its reader stuck on half a result):
                if died is not None:        # look before each chunk played here, not only when waiting
                    raise BrokenProcessPool(died)
                task = next(it, None)
                if task is not None:
                    res = local(task)
                    task = None
                    start_submitting()      # the workers may be warm by now: work for them before the store
                    yield res
                    continue
                local = None
                continue
            if not pending:
                break
            if not done:
                done, _ = wait(pending, timeout=_WATCH_SECONDS, return_when=FIRST_COMPLETED)
                if not done:
                    died = dead_worker()
                    if died is not None:
                        raise BrokenProcessPool(died)
                    continue
            for fut in done:
                task = pending.pop(fut)
                res = fut.result()
                task = next(it, None)
                if task is not None:
                    pending[submit(task)] = task
                task = None
                yield res
    except BrokenProcessPool as e:
        unfinished = {t.index: t for t in [*pending.values(), *([task] if task is not None else [])]}
        raise _lost(e, list(unfinished.values()), watch_dir) from None
    except GeneratorExit:
        # the caller needs no more results (an early stop): let the chunks in flight finish
        # (at most the window) rather than cancel them, which races the pool's own threads
        wait(pending)
        raise


#: a run of at least this many tasks per slot of the window queues its first tasks behind the
#: workers' warm-up (see windowed): its workers start well before this process could play them all
EAGER_TASKS_PER_SLOT = 8
#: how often a wait for results also checks that no worker died: loky's own detection
#: can miss a worker killed at the wrong moment (seen once under load: the run then waited
#: forever), so the pool's processes are looked at directly as well
_WATCH_SECONDS = 1.0


@contextmanager
def executor(backend: str, jobs: int, scheduler: str | None, job: Job, pool: WorkerPool | None = None,
             warming=(), check=lambda: None):
    """A function mapping tasks to an iterator of their results in completion order, played
    by ``jobs`` processes (loky: this one among them and the workers of ``pool``, started;
    ``warming``: the futures of their warm-up, :meth:`WorkerPool.warm`). On any error or
    interrupt the workers are stopped at once: a fault never waits for the chunks still
    running. While it waits for workers, ``check()`` is asked every second: a reason (a
    worker found stuck) ends the run with WorkerLost."""
    if backend == "sequential" or (backend == "loky" and jobs == 1):
        yield lambda tasks: map(job.here, tasks)
    elif backend == "loky":
        try:                               # this process is the jobs-th player
            yield lambda tasks: windowed(lambda t: pool.submit(job.play, t), tasks, 2 * (jobs - 1),
                                         lambda: check() or pool.dead_worker(), local=job.here,
                                         ready=lambda: all(f.done() for f in warming), watch_dir=job.watch_dir)
        except BaseException:
            pool.close()
            raise
    else:
        with _dask_client(jobs, scheduler) as client:
            if not scheduler:                # a LocalCluster's workers are ours: they die with this process
                client.run(die_with_parent)
            client.run(job.warm, job.warm_arg)
            yield lambda tasks: _dask_results(client, tasks, job.play, check, job.watch_dir)


def _dask_results(client, tasks, play, check, watch_dir):
    """The results of ``tasks`` played on the dask cluster of ``client``, as they complete."""
    from dask.distributed import wait as dask_wait  # lazy: optional, ~1 s to import

    worker_died = dask_worker_errors()
    futures = client.map(play, tasks, pure=False)
    index = {f.key: t for f, t in zip(futures, tasks)}
    pending = set(futures)
    try:
        while pending:
            done = {f for f in pending if f.done()}
            if not done:
                try:
                    dask_wait(pending, timeout=_WATCH_SECONDS, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    why = check()
                    if why is not None:
                        raise _lost(BrokenProcessPool(why), [index[f.key] for f in pending], watch_dir) from None
                continue
            pending -= done
            for fut in sorted(done, key=lambda f: index[f.key].index):
                try:
                    res = fut.result()
                except worker_died as e:   # a worker died
                    raise _lost(e, [index[fut.key]], watch_dir) from None
                fut.release()
                yield res
    finally:
        client.cancel([f for f in futures if not f.done()])


@contextmanager
def _dask_client(jobs: int, scheduler: str | None):
    """A client of the cluster at ``scheduler``, or of a LocalCluster of ``jobs`` single-thread
    worker processes."""
    try:
        # lazy: optional (kc-sim[dask]), ~1 s to import
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UserError("--backend dask needs dask.distributed: pip install 'kc-sim[dask]'") from None
    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError, ValueError) as e:
                raise UserError(f"cannot reach the dask scheduler at {scheduler}: {e}") from None
        else:
            quiet_trackers()
            with sigint_ignored():      # the worker processes start with Ctrl-C ignored
                # a worker that dies ends the run, as with loky (dask would retry its chunk elsewhere);
                # the scheduler's HTTP server on any free port: on 8787, taken by another cluster,
                # dask warns on stderr and the error line would not be one line
                cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.CRITICAL,
                                       scheduler_kwargs={"allowed_failures": 0})
            client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
