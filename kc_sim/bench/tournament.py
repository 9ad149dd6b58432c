"""Whole-tournament figures for ``kc-sim bench``: the wall time of a command's worth of work
(workers, parquet and summary included), the speed-up of 2 workers over 1, and the import
time of the tournament package (what a command and every worker pays first)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kc_sim.play.registry import builtin_agents
from kc_sim.tournament.run import run_tournament


def import_seconds(module: str = "kc_sim.tournament.run", repeats: int = 3) -> float:
    """Seconds to import ``module`` in a fresh interpreter with a warm compile cache (the
    fastest of ``repeats``): what every command and worker pays before its first chunk."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                  .stdout.split()[-1]) for _ in range(repeats)]
    return min(runs)


def bench_tournament(rounds: int = 1_000_000, ratio_rounds: int = 400_000, agents=None) -> dict:
    """Figures for ``kc-sim bench``: wall time of a ``rounds``-round tournament (2 workers,
    parquet and summary included, in this process), and the speed-up of 2 workers over 1."""
    if agents is None:
        known = builtin_agents()
        agents = ["greedy", "merger"] if {"greedy", "merger"} <= set(known) else ["random", "random"]
    figures = {"tournament_agents": ",".join(agents)}
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        def timed(n, jobs, name):
            t0 = time.perf_counter()
            run_tournament(agents, rounds=n, jobs=jobs, out=Path(tmp) / name, quiet=True)
            return time.perf_counter() - t0

        secs = timed(rounds, 2, "big")
        figures[f"tournament_{rounds}_rounds_s"] = secs
        figures["tournament_rounds_per_s"] = rounds / secs
        one = timed(ratio_rounds, 1, "jobs1")
        two = timed(ratio_rounds, 2, "jobs2")
        figures["tournament_jobs1_rounds_per_s"] = ratio_rounds / one
        figures["tournament_jobs2_rounds_per_s"] = ratio_rounds / two
        figures["tournament_speedup_2_vs_1"] = one / two
    figures["import_tournament_s"] = import_seconds()
    return figures
