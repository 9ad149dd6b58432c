"""The worker pool: one object, started once however often it is asked, closed once; a run
handed a pool uses it and leaves it to its owner, a run given none makes one and closes it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kc_sim.processes import compat
from kc_sim.processes.pool import WorkerPool


class FakeExecutor:
    """What loky's reusable executor offers the pool (and compat reaches)."""

    def __init__(self):
        self.submitted, self.shut = [], 0
        self._executor_manager_thread = None
        self._processes = {}
        self._result_queue = SimpleNamespace(_writer=None)

    def submit(self, fn, *args):
        self.submitted.append((fn, args))
        return SimpleNamespace(done=lambda: True)

    def shutdown(self, wait=True, kill_workers=False):
        self.shut += 1


@pytest.fixture
def loky(monkeypatch):
    """loky's get_reusable_executor as it behaves: the same executor while it is not shut down."""
    made = []

    def get_reusable_executor(max_workers, **kw):
        if not made or made[-1].shut:
            made.append(FakeExecutor())
        made[-1].max_workers = max_workers
        return made[-1]

    monkeypatch.setattr(compat, "get_reusable_executor", get_reusable_executor)
    return made


def _preload():
    pass


def test_the_pool_is_started_once_however_often_asked(loky):
    pool = WorkerPool(preload=_preload)
    assert not pool.started
    pool.start(2)                 # the command, early
    pool.start(2)                 # the run, as it warms
    pool.start(1)                 # a run sized smaller: resized, not started again
    ex, = loky
    assert [fn for fn, _ in ex.submitted] == [_preload] and pool.workers == 1 and ex.max_workers == 1
    futures = pool.warm(len, "abc")
    assert len(futures) == 1 and ex.submitted[-1] == (len, ("abc",))
    pool.close()
    pool.close()                  # (safe twice)
    assert ex.shut == 1 and not pool.started


def test_the_pool_is_a_context_manager_that_closes_itself(loky):
    with WorkerPool() as pool:
        pool.start(1)
    assert loky[0].shut == 1 and not pool.started
    with pytest.raises(RuntimeError, match="not started"):
        pool.submit(len, "x")


def test_a_run_uses_the_pool_it_is_handed_and_leaves_it_open(tmp_path):
    from kc_sim.tournament.early import run_pool
    from kc_sim.tournament.run import run_tournament

    with run_pool() as pool:
        res = run_tournament(["greedy", "random"], rounds=4_000, chunk_size=500, jobs=2, quiet=True,
                             out=tmp_path / "run", pool=pool)
        assert pool.started and pool.workers == 1        # used, and left to its owner
        assert res.played_chunks == len(res.plan.schedule.chunks())
    assert not pool.started


def test_a_run_given_no_pool_closes_the_one_it_made(tmp_path, monkeypatch):
    import kc_sim.tournament.run as run_module

    made = []

    def run_pool():
        pool = WorkerPool(preload=None)
        made.append(pool)
        return pool

    monkeypatch.setattr(run_module, "run_pool", run_pool)
    run_module.run_tournament(["greedy", "random"], rounds=4_000, chunk_size=500, jobs=2, quiet=True,
                              out=tmp_path / "run")
    pool, = made
    assert not pool.started
