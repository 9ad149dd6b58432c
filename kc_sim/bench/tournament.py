"""Whole-tournament figures for ``kc-sim bench``: the wall time of the command itself (a
fresh process: imports, planning, workers, parquet and summary included), the speed-up
of 2 playing processes over 1, and the import time of the tournament package (what a
command and every worker pays first).

* ``command_1m_rounds_s``: ``kc-sim tournament --agents greedy,merger --rounds 1000000``
  with the default options and a warm compile cache, the fastest of ``COMMAND_REPEATS``
  (after one untimed run that fills the cache, the specialised loop of the agents
  included: what a machine that has played them for a while holds, see
  :mod:`kc_sim.play.runner`);
* ``command_jobs1_s``, ``command_jobs2_s``: the same with ``--jobs 1`` and ``--jobs 2``,
  and their ratio ``command_jobs2_vs_jobs1`` (the fixed start-up of a command included);
* ``tournament_jobs1_rounds_per_s``, ``tournament_jobs2_rounds_per_s`` and their ratio
  ``tournament_speedup_2_vs_1``: the same rounds run in this process, where the worker of
  the second is already started: how play scales with a second core.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kc_sim.play.registry import builtin_agents
from kc_sim.tournament.backends import release_workers
from kc_sim.tournament.run import run_tournament

COMMAND_REPEATS = 3


def import_seconds(module: str = "kc_sim.tournament.run", repeats: int = 3) -> float:
    """Seconds to import ``module`` in a fresh interpreter with a warm compile cache (the
    fastest of ``repeats``): what every command and worker pays before its first chunk."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                  .stdout.split()[-1]) for _ in range(repeats)]
    return min(runs)


def command_seconds(args: list[str], out: Path, env=None, repeats: int = 1) -> float:
    """Wall seconds of ``kc-sim ARGS --out OUT --quiet`` in a fresh process (the fastest of
    ``repeats``; the run folder is removed before each, so every run plays everything)."""
    best = float("inf")
    for _ in range(repeats):
        shutil.rmtree(out, ignore_errors=True)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kc_sim.cli", *args, "--out", str(out), "--quiet"], check=True,
                       capture_output=True, env=env)
        best = min(best, time.perf_counter() - t)
    return best


def default_agents() -> list[str]:
    known = builtin_agents()
    return ["greedy", "merger"] if {"greedy", "merger"} <= set(known) else ["random", "random"]


def bench_tournament(rounds: int = 1_000_000, agents=None, repeats: int = COMMAND_REPEATS) -> dict:
    """The figures of the module docstring, for ``rounds`` rounds of ``agents`` (each command
    timed ``repeats`` times)."""
    agents = agents or default_agents()
    figures = {"tournament_agents": ",".join(agents)}
    cmd = ["tournament", "--agents", ",".join(agents), "--rounds", str(rounds)]
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        command_seconds(cmd, Path(tmp) / "warm", env=dict(os.environ, KC_SIM_SPECIALISE="always"))  # untimed
        figures["command_1m_rounds_s"] = command_seconds(cmd, Path(tmp) / "cmd", repeats=repeats)
        one = command_seconds([*cmd, "--jobs", "1"], Path(tmp) / "cmd1", repeats=repeats)
        two = command_seconds([*cmd, "--jobs", "2"], Path(tmp) / "cmd2", repeats=repeats)
        figures.update(command_jobs1_s=one, command_jobs2_s=two, command_jobs2_vs_jobs1=one / two)

        def timed(jobs, name):
            t0 = time.perf_counter()
            run_tournament(agents, rounds=rounds, jobs=jobs, out=Path(tmp) / name, quiet=True)
            return time.perf_counter() - t0

        timed(2, "start")                                  # starts the worker the next run reuses
        one, two = timed(1, "jobs1"), timed(2, "jobs2")
        release_workers()
        figures["tournament_jobs1_rounds_per_s"] = rounds / one
        figures["tournament_jobs2_rounds_per_s"] = rounds / two
        figures["tournament_speedup_2_vs_1"] = one / two
    figures["import_tournament_s"] = import_seconds()
    return figures


def cold_command_seconds(cache_dir: str, agents=None, out: Path | None = None) -> float:
    """Wall seconds of the default ``kc-sim tournament --agents greedy,merger`` (what
    ``make run`` runs) in a fresh process whose compile cache ``cache_dir`` is empty."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        return command_seconds(["tournament", "--agents", ",".join(agents or default_agents())],
                               out or Path(tmp) / "cold", env=env)
