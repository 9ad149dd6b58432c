"""Whole-tournament figures for ``kc-sim bench``: the wall time of the command itself (a
fresh process: imports, planning, workers, parquet and summary included), the speed-up
of 2 playing processes over 1, and the import time of the tournament package (what a
command and every worker pays first).

* ``command_1m_rounds_s``: ``kc-sim tournament --agents greedy,merger --rounds 1000000``
  with the default options and a warm compile cache (after one untimed run that fills it);
* ``command_jobs1_s``, ``command_jobs2_s``: the same with ``--jobs 1`` and ``--jobs 2``,
  and their ratio ``command_jobs2_vs_jobs1``, start-up and all.

The three commands take turns, ``COMMAND_REPEATS`` times; each figure is the median of its
runs with their min and max (:mod:`kc_sim.bench.spread`), and the ratio is taken between
the two runs of each turn.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kc_sim.bench.spread import with_spread
from kc_sim.play.registry import builtin_agents

COMMAND_REPEATS = 3


def import_seconds(module: str = "kc_sim.tournament.run", repeats: int = 3) -> float:
    """Seconds to import ``module`` in a fresh interpreter with a warm compile cache (the
    fastest of ``repeats``): what every command and worker pays before its first chunk."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                  .stdout.split()[-1]) for _ in range(repeats)]
    return min(runs)


def command_seconds(args: list[str], out: Path, env=None) -> float:
    """Wall seconds of ``kc-sim ARGS --out OUT --quiet`` in a fresh process (the run folder
    is removed first, so the run plays everything)."""
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kc_sim.cli", *args, "--out", str(out), "--quiet"], check=True,
                   capture_output=True, env=env)
    return time.perf_counter() - t


def default_agents() -> list[str]:
    known = builtin_agents()
    return ["greedy", "merger"] if {"greedy", "merger"} <= set(known) else ["random", "random"]


def bench_tournament(rounds: int = 1_000_000, agents=None, repeats: int = COMMAND_REPEATS) -> dict:
    """The figures of the module docstring, for ``rounds`` rounds of ``agents`` (each command
    timed ``repeats`` times, in turns)."""
    agents = agents or default_agents()
    figures = {"tournament_agents": ",".join(agents)}
    cmd = ["tournament", "--agents", ",".join(agents), "--rounds", str(rounds)]
    runs = {"default": [], "jobs1": [], "jobs2": []}
    extra = {"default": [], "jobs1": ["--jobs", "1"], "jobs2": ["--jobs", "2"]}
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        command_seconds(cmd, Path(tmp) / "warm")                       # untimed: fills the cache
        for _ in range(repeats):
            for k, args in extra.items():
                runs[k].append(command_seconds([*cmd, *args], Path(tmp) / k))
    figures.update(with_spread("command_1m_rounds_s", runs["default"]))
    figures.update(with_spread("command_jobs1_s", runs["jobs1"]))
    figures.update(with_spread("command_jobs2_s", runs["jobs2"]))
    figures.update(with_spread("command_jobs2_vs_jobs1", [a / b for a, b in zip(runs["jobs1"], runs["jobs2"])]))
    figures["import_tournament_s"] = import_seconds()
    return figures


def cold_command_seconds(cache_dir: str, agents=None, out: Path | None = None) -> float:
    """Wall seconds of the default ``kc-sim tournament --agents greedy,merger`` (what
    ``make run`` runs) in a fresh process whose compile cache ``cache_dir`` is empty."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        return command_seconds(["tournament", "--agents", ",".join(agents or default_agents())],
                               out or Path(tmp) / "cold", env=env)
