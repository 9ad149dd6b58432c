"""The loky backend's own watch for dead workers: a run whose worker died ends with
WorkerLost even when no future ever reports it (loky can miss a worker killed at the
wrong moment; the run then used to wait forever)."""

import os
import signal
import time
from concurrent.futures import Future
from dataclasses import dataclass

import pytest

from kc_sim.tournament import backends
from kc_sim.tournament.backends import WorkerLost


@dataclass(frozen=True)
class _Task:
    index: int


def test_a_dead_worker_ends_the_wait_even_if_no_future_says_so():
    never = Future()                                   # a chunk whose result never comes
    calls = []

    def dead_worker():
        calls.append(time.monotonic())
        return "worker 123 exited with code -9" if len(calls) >= 2 else None

    t0 = time.monotonic()
    with pytest.raises(WorkerLost, match=r"chunks? 7\b.*rerun"):
        list(backends._windowed(lambda task: never, [_Task(7)], window=2, dead_worker=dead_worker))
    assert len(calls) == 2                             # checked once a second while waiting
    assert time.monotonic() - t0 < 10


def test_the_pool_probe_sees_a_killed_worker():
    ex = backends._loky_executor(2)
    try:
        assert ex.submit(os.getpid).result(timeout=60) > 0
        assert backends._dead_loky_worker(ex) is None
        pid = next(iter(ex._processes))
        proc = ex._processes[pid]
        os.kill(pid, signal.SIGKILL)
        proc.join(timeout=10)
        found = backends._dead_loky_worker(ex)
        # loky may already have noticed and dropped the worker from its table; if it kept
        # it, the probe must name it with the signal's exit code
        assert found is None and pid not in ex._processes or found == f"worker {pid} exited with code -9"
    finally:
        backends._stop_loky(ex)
