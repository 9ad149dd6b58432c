"""The dask backend on a real LocalCluster (2 worker processes, 1 thread each) gives the
same rounds as a run in this process."""

from __future__ import annotations

import socket
import subprocess
import sys

import dask.distributed as distributed
import pandas as pd

from kc_sim.runs import read_rounds, read_summary
from kc_sim.runs.manifest import read_manifest_json
from kc_sim.tournament.run import run_tournament

RUN = dict(agents=["random", "random", "random"], players=2, rounds=1200, chunk_size=200, quiet=True)


def test_dask_local_cluster_equals_in_process(tmp_path):
    here = run_tournament(**RUN, jobs=1, out=tmp_path / "here")
    dask = run_tournament(**RUN, jobs=2, backend="dask", out=tmp_path / "dask")
    pd.testing.assert_frame_equal(read_rounds(dask.out), read_rounds(here.out))
    pd.testing.assert_frame_equal(read_summary(dask.out), read_summary(here.out))
    assert dask.played_chunks == len(read_manifest_json(dask.out)["chunks"]) == 6


def test_dask_scheduler_address(tmp_path):
    """``--scheduler ADDRESS`` uses an existing cluster, as with a multi-machine set-up."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        here = run_tournament(**RUN, jobs=1, out=tmp_path / "here")
        res = run_tournament(**RUN, scheduler=cluster.scheduler_address, out=tmp_path / "remote")
        pd.testing.assert_frame_equal(read_rounds(res.out), read_rounds(here.out))


def test_a_taken_dashboard_port_prints_nothing(tmp_path):
    """dask's usual port 8787 held by another program: the run's stderr stays empty (dask
    warned there, so an error of the run was no longer one line)."""
    with socket.socket() as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            held.bind(("0.0.0.0", 8787))
            held.listen()
        except OSError:
            pass                                      # taken already: the same situation
        run = subprocess.run([sys.executable, "-m", "kc_sim.cli", "tournament", "--agents", "greedy,random",
                              "--rounds", "400", "--jobs", "2", "--backend", "dask", "--quiet",
                              "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stderr == "", run.stderr
