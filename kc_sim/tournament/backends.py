"""Where chunks are played: in this process, a loky process pool or a dask cluster.

:func:`executor` gives a function that maps :class:`~kc_sim.tournament.worker.ChunkTask`
to their results in completion order, whatever the backend:

* ``sequential`` (or loky with one job): in this process, one chunk after another;
* ``loky``: ``jobs`` processes play: this one and ``jobs - 1`` workers of joblib's reusable
  process pool, at most two chunks in flight per worker (:func:`_windowed`). This process
  plays a chunk whenever no worker result is waiting, so it plays from the start while the
  workers are still starting, and writes each finished chunk in between;
* ``dask``: a ``dask.distributed`` client of a scheduler, or of a LocalCluster.

The loky pool itself (starting it, its workers' set-up, stopping it) is
:mod:`kc_sim.tournament.pool`.

A worker that dies ends the run with :class:`WorkerLost` naming the chunks not finished;
on any error or Ctrl-C the workers are stopped at once. Ctrl-C is ignored by the workers
(only the parent handles it), so no worker prints a traceback. The workers of loky and of
a LocalCluster die with this process, however it ends (:mod:`~kc_sim.tournament.lifeline`).
"""

from __future__ import annotations

import itertools
import logging
from concurrent.futures import FIRST_COMPLETED, CancelledError, wait
from contextlib import contextmanager

from joblib.externals.loky.process_executor import BrokenProcessPool

from kc_sim.errors import UserError
from kc_sim.tournament.lifeline import die_with_parent
from kc_sim.tournament.pool import (
    loky_executor,
    quiet_trackers,
    sigint_ignored,
    stop_loky,
)
from kc_sim.tournament.worker import run_chunk, warm


class WorkerLost(UserError):
    """A worker process died (killed from outside, out of memory) while playing chunks;
    the chunks already written are kept and a rerun resumes."""


def warm_loky(jobs: int, warm_args: tuple) -> list:
    """Have each of the pool's ``jobs - 1`` workers load the run's compiled code (call once this
    process has compiled it, so they only load); returns the futures of those warm-ups
    (queued before any chunk, so a worker plays only once warm)."""
    with sigint_ignored():
        ex = loky_executor(jobs - 1)
        return [ex.submit(warm, *warm_args) for _ in range(jobs - 1)]


def _lost(err: BaseException, running, watch_dir=None) -> WorkerLost:
    """The WorkerLost of a worker that died while ``running`` (tasks) were running or queued;
    the watch files (:mod:`~kc_sim.tournament.watch`) say which chunk a dead worker was
    playing, and with which agents."""
    from kc_sim.tournament.watch import dead_players  # lazy: the parent's side only

    running = sorted(running, key=lambda t: t.index)
    dead = dead_players(watch_dir) if watch_dir else []
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


def _windowed(submit, tasks, window: int, dead_worker=lambda: None, local=None, ready=lambda: True,
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
    ``dead_worker()`` (checked every second while waiting), ends the run with
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
#: workers' warm-up (see _windowed): its workers start well before this process could play them all
EAGER_TASKS_PER_SLOT = 8
#: how often a wait for results also checks that no worker died: loky's own detection
#: can miss a worker killed at the wrong moment (seen once under load: the run then waited
#: forever), so the pool's processes are looked at directly as well
_WATCH_SECONDS = 1.0


def _dead_loky_worker(ex) -> str | None:
    """A description of a worker of the pool that died: killed by a signal or exited with an
    error (None while none did). A worker that left after loky's idle timeout exits with 0
    and is not a loss."""
    for pid, proc in list(getattr(ex, "_processes", {}).items()):
        code = proc.exitcode
        if code not in (None, 0):
            return f"worker {pid} exited with code {code}"
    return None


@contextmanager
def executor(backend: str, jobs: int, scheduler: str | None, warm_args: tuple, warming=(), check=lambda: None):
    """A function mapping tasks to an iterator of their results in completion order, played
    by ``jobs`` processes (loky: this one among them; ``warming``: the futures of
    :func:`warm_loky`). On any error or interrupt the workers are stopped at once: a
    fault never waits for the chunks still running. While it waits for workers, ``check()``
    is asked every second: a reason (a worker found stuck) ends the run with WorkerLost."""
    watch_dir = warm_args[4] if len(warm_args) > 4 else None
    if backend == "sequential" or (backend == "loky" and jobs == 1):
        yield lambda tasks: map(run_chunk, tasks)
    elif backend == "loky":
        ex = loky_executor(jobs - 1)       # this process is the jobs-th player
        try:
            yield lambda tasks: _windowed(lambda t: ex.submit(run_chunk, t), tasks, 2 * (jobs - 1),
                                          lambda: check() or _dead_loky_worker(ex), local=run_chunk,
                                          ready=lambda: all(f.done() for f in warming), watch_dir=watch_dir)
        except BaseException:
            stop_loky(ex)
            raise
    else:
        with _dask_client(jobs, scheduler) as client:
            if not scheduler:                # a LocalCluster's workers are ours: they die with this process
                client.run(die_with_parent)
            client.run(warm, *warm_args)
            yield lambda tasks: _dask_results(client, tasks, check, watch_dir)


def _dask_results(client, tasks, check, watch_dir):
    """The results of ``tasks`` played on the dask cluster of ``client``, as they complete."""
    # lazy: optional, ~1 s to import
    from dask.distributed import KilledWorker
    from dask.distributed import wait as dask_wait
    from distributed.comm.core import CommClosedError

    futures = client.map(run_chunk, tasks, pure=False)
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
                except (KilledWorker, CommClosedError, CancelledError) as e:   # a worker died
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
