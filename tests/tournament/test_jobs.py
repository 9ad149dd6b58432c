"""The default --jobs is sized to the work; an explicit --jobs is kept; the loop a run plays in
is decided by its agents alone (no marker or history in the compile cache), and the final line
says which."""

from __future__ import annotations

import os

import pytest

from kc_sim.errors import UserError
from kc_sim.processes.pool import WorkerPool
from kc_sim.tournament import early
from kc_sim.tournament.options import TournamentOptions
from kc_sim.tournament.plan import make_plan
from kc_sim.tournament.run import run_tournament, size_workers
from kc_sim.tournament.sizes import ROUNDS_PER_WORKER

CORES = os.cpu_count() or 1


def _workers(agents, rounds, jobs=None, **kw):
    opts = TournamentOptions.create(agents, rounds=rounds, jobs=jobs, **kw)
    plan = make_plan(opts)
    return size_workers(opts, plan, plan.run_spec().chunks)


def test_default_jobs_follow_the_work():
    assert _workers(["greedy", "merger"], 100_000) == 1           # plays here: no worker start-up
    assert _workers(["greedy", "merger"], 2 * ROUNDS_PER_WORKER[True]) == min(CORES, 2)
    assert _workers(["greedy", "merger"], 10_000_000) == CORES
    assert _workers(["greedy", "merger"], 100_000, jobs=-1) == 1      # -1 is the default


def test_an_explicit_jobs_is_kept_up_to_one_worker_per_chunk():
    assert _workers(["greedy", "merger"], 100_000, jobs=2) == 2
    assert _workers(["greedy", "merger"], 1_000, jobs=8) == 1      # one chunk


def test_workers_are_started_before_the_plan_only_when_the_run_will_use_them():
    """The command starts its workers before it imports the core (kc_sim.tournament.early):
    only for runs that surely use them, as :func:`size_workers` would size them."""
    def likely(jobs, rounds, matches):
        return early.workers_likely(TournamentOptions.create("greedy,merger", jobs=jobs, rounds=rounds,
                                                             matches=matches))

    assert not likely(None, 200_000, None)                    # the default run plays in one process
    assert likely(None, 2 * ROUNDS_PER_WORKER[True], None) == (CORES > 1)
    assert likely(2, 100_000, None) and not likely(2, 1_000, None)     # an explicit --jobs: more than a chunk
    assert not likely(1, 10_000_000, None)
    assert likely(2, None, 20_000) and not likely(2, None, None)
    with pytest.raises(UserError, match="bad --jobs 0"):               # a bad --jobs never reaches the pool
        TournamentOptions.create("greedy,merger", jobs=0, rounds=10_000_000)
    pool = WorkerPool()
    assert not early.start_early(pool, TournamentOptions.create("greedy,merger", jobs=2, rounds=10_000_000,
                                                                backend="dask"))
    assert not pool.started


@pytest.mark.skipif(CORES < 2, reason="needs two cores")
def test_python_agents_need_fewer_rounds_per_worker():
    agents = ["agents/examples/my_python_agent.py:CautiousShedder", "greedy"]
    assert _workers(agents, 2 * ROUNDS_PER_WORKER[False]) == 2
    assert _workers(agents, ROUNDS_PER_WORKER[False] // 2) == 1


def test_the_loop_is_decided_by_the_agents_and_named(tmp_path):
    compiled = run_tournament(["greedy", "random"], rounds=2_000, out=tmp_path / "run", quiet=True, jobs=1)
    assert compiled.loop == "specialised loop"
    python = run_tournament(["agents/examples/my_python_agent.py:CautiousShedder", "greedy"], rounds=200,
                            out=tmp_path / "py", quiet=True, jobs=1)
    assert python.loop == "Python loop"


def test_a_cold_cache_plays_the_same_and_leaves_only_numbas_files(tmp_path):
    """From an empty compile cache the run compiles its loop, says which loop played on its final
    line, and plays exactly what a warm run plays; the cache folder then holds numba's own files
    and nothing else (no markers, no generated source, no play history)."""
    import subprocess
    import sys

    import pandas as pd

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    cold = tmp_path / "cold"
    r = subprocess.run([sys.executable, "-m", "kc_sim.cli", "tournament", "--agents", "greedy,random",
                        "--rounds", "2000", "--out", str(cold)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    final, = [line for line in r.stdout.splitlines() if "; results in " in line]      # cli.tournament.final_line
    assert "play " in final and "specialised loop" in final
    folder, = (tmp_path / "cache").glob("kc-sim-*")
    kinds = {f.suffix for f in folder.rglob("*") if f.is_file()}
    assert kinds and kinds <= {".nbi", ".nbc"}, kinds
    warm = run_tournament(["greedy", "random"], rounds=2_000, out=tmp_path / "warm", quiet=True)
    pd.testing.assert_frame_equal(pd.read_parquet(cold / "summary.parquet"), pd.read_parquet(warm.out / "summary.parquet"))


def test_kc_sim_warm_compiles_the_loop_a_run_of_those_agents_plays(tmp_path):
    """``kc-sim warm --agents greedy,merger`` compiles (or loads) the loop of that set and says
    which loop it is; a run of the same agents then names the same loop."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "kc_sim.cli", "warm", "--agents", "greedy,merger"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    first, last = r.stdout.strip().splitlines()
    assert first.split()[:3] == ["greedy,pile-merger", "rounds", "specialised"]
    assert last.startswith("warm in ") and os.environ["NUMBA_CACHE_DIR"] in last
    res = run_tournament(["greedy", "merger"], rounds=1_000, out=tmp_path / "run", quiet=True, jobs=1)
    assert res.loop == "specialised loop"
