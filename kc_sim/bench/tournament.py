"""Whole-tournament figures for ``kc-sim bench``: the command's play phase against the loop
it calls, the wall time of the command itself (a fresh process: imports, planning, workers,
parquet and summary included), the speed-up of 2 playing processes over 1, and the import
time of the tournament package (what a command and every worker pays first).

* ``command_vs_loop`` (:func:`command_vs_loop`), the ratio users feel: in one process, the
  play rate of ``kc-sim tournament --agents greedy,merger --rounds 1000000 --jobs 1`` (what
  its final line reports: rounds over the play phase, from the first chunk sent to the last
  chunk stored) over the rate of :func:`kc_sim.play.driver.runner.play_rounds` playing the
  very same rounds (the same agents, seatings, seeds and calls, nothing else), the two
  timed in turns ``LOOP_TURNS`` times, the ratio taken turn by turn. 1 means that playing a
  tournament costs what its loop costs; what it loses is the work around the loop (rows,
  tally, parts, manifest) that the writer thread does not hide
  (:mod:`kc_sim.tournament.storing`);
* ``command_1m_rounds_s``: ``kc-sim tournament --agents greedy,merger --rounds 1000000``
  with the default options and a warm compile cache (after one untimed run that fills it);
* ``command_jobs1_s``, ``command_jobs2_s``: the same with ``--jobs 1`` and ``--jobs 2``,
  and their ratio ``command_jobs2_vs_jobs1``, start-up and all;
* ``command_jobs2_ceiling``: the most a second process could give that ratio, by Amdahl's
  law from the ``--jobs 1`` run's own final line: ``T / (T - play / 2)``, its play phase
  halved at no cost and its start-up (interpreter, imports, loading the compiled loop) and
  end left as they are, since every process pays them;
* with ``--cold``, :func:`first_vs_tenth`: the 1M-round command ten times from an empty
  compile cache, the first run's play rate over the tenth's (no history may change the speed).

The three commands take turns, ``COMMAND_REPEATS`` times; each figure is the median of its
runs with their min and max (:mod:`kc_sim.bench.spread`), and the ratio is taken between
the two runs of each turn. Seconds and rates are for information (they move 1.4-2x
between runs of the same bench on a shared machine); the ratios are judged
(:mod:`kc_sim.bench.targets`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kc_sim.bench.spread import with_spread
from kc_sim.play.agents.registry import builtin_agents
from kc_sim.play.driver import runner
from kc_sim.tournament.schedule import group_seeds, seat_lineup

COMMAND_REPEATS = 3
LOOP_TURNS = 5


def import_seconds(module: str = "kc_sim.tournament.run", repeats: int = 3) -> float:
    """Seconds to import ``module`` in a fresh interpreter with a warm compile cache (the
    fastest of ``repeats``): what every command and worker pays before its first chunk."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                  .stdout.split()[-1]) for _ in range(repeats)]
    return min(runs)


def command_seconds(args: list[str], out: Path, env=None, final_line: bool = False):
    """Wall seconds of ``kc-sim ARGS --out OUT --quiet`` in a fresh process (the run folder
    is removed first, so the run plays everything); with ``final_line``, also what it printed."""
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "kc_sim.cli", *args, "--out", str(out), "--quiet"], check=True,
                       capture_output=True, env=env, text=True)
    seconds = time.perf_counter() - t
    return (seconds, r.stdout) if final_line else seconds


_PLAY_SECONDS = re.compile(r"play ([0-9.]+) s at")


def two_process_ceiling(seconds: float, final_line: str) -> float:
    """Amdahl's bound on ``--jobs 2`` over ``--jobs 1`` for a ``--jobs 1`` command of
    ``seconds`` whose final line reports its play phase: ``T / (T - play / 2)`` (module doc)."""
    m = _PLAY_SECONDS.search(final_line)
    if m is None:                                   # pragma: no cover - the final line changed
        raise AssertionError(f"no play seconds in the final line: {final_line!r}")
    return seconds / (seconds - float(m.group(1)) / 2)


def default_agents() -> list[str]:
    known = builtin_agents()
    return ["greedy", "merger"] if {"greedy", "merger"} <= set(known) else ["random", "random"]


def bench_tournament(rounds: int = 1_000_000, agents=None, repeats: int = COMMAND_REPEATS,
                     turns: int = LOOP_TURNS) -> dict:
    """The figures of the module docstring, for ``rounds`` rounds of ``agents`` (each command
    timed ``repeats`` times, in turns; the command against its loop ``turns`` times, with
    ``--jobs 1`` and, for information, ``--jobs 2``)."""
    agents = agents or default_agents()
    figures = {"tournament_agents": ",".join(agents)}
    figures.update(command_vs_loop(rounds, agents, turns))
    figures.update(command_vs_loop(rounds, agents, turns, jobs=2))
    cmd = ["tournament", "--agents", ",".join(agents), "--rounds", str(rounds)]
    runs = {"default": [], "jobs1": [], "jobs2": []}
    extra = {"default": [], "jobs1": ["--jobs", "1"], "jobs2": ["--jobs", "2"]}
    ceilings = []
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        command_seconds(cmd, Path(tmp) / "warm")                       # untimed: fills the cache
        for _ in range(repeats):
            for k, args in extra.items():
                seconds, line = command_seconds([*cmd, *args], Path(tmp) / k, final_line=True)
                runs[k].append(seconds)
                if k == "jobs1":
                    ceilings.append(two_process_ceiling(seconds, line))
    figures.update(with_spread("command_1m_rounds_s", runs["default"]))
    figures.update(with_spread("command_jobs1_s", runs["jobs1"]))
    figures.update(with_spread("command_jobs2_s", runs["jobs2"]))
    figures.update(with_spread("command_jobs2_vs_jobs1", [a / b for a, b in zip(runs["jobs1"], runs["jobs2"])]))
    figures.update(with_spread("command_jobs2_ceiling", ceilings))
    figures["import_tournament_s"] = import_seconds()
    return figures


def cold_command_seconds(cache_dir: str, agents=None, out: Path | None = None) -> float:
    """Wall seconds of the default ``kc-sim tournament --agents greedy,merger`` (what
    ``make run`` runs) in a fresh process whose compile cache ``cache_dir`` is empty."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        return command_seconds(["tournament", "--agents", ",".join(agents or default_agents())],
                               out or Path(tmp) / "cold", env=env)


_PLAY_RATE = re.compile(r"play [0-9.]+ s at ([0-9,]+) rounds/s, ([a-zA-Z ]+ loop)")


def first_vs_tenth(cache_dir: str, rounds: int = 1_000_000, runs: int = 10, agents=None) -> dict:
    """The same ``kc-sim tournament --agents greedy,merger --rounds 1000000`` run ``runs`` times
    from an empty compile cache ``cache_dir``: the first run's whole seconds (its compile
    included), and the first run's play rate over the last run's (``first_vs_tenth_play_rate``:
    1 when nothing but the compile depends on history), the second run's whole seconds over
    the last's, and the loop each played in (the same in every run)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    cmd = ["tournament", "--agents", ",".join(agents or default_agents()), "--rounds", str(rounds)]
    seconds, rates, loops = [], [], set()
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        for _ in range(runs):
            took, line = command_seconds(cmd, Path(tmp) / "run", env=env, final_line=True)
            seconds.append(took)
            m = _PLAY_RATE.search(line)
            if m is None:                           # pragma: no cover - the final line changed
                raise AssertionError(f"no play rate in the final line: {line!r}")
            rates.append(float(m.group(1).replace(",", "")))
            loops.add(m.group(2))
    return {"cold_first_1m_command_s": round(seconds[0], 2), "cold_tenth_1m_command_s": round(seconds[-1], 2),
            "first_vs_tenth_play_rate": round(rates[0] / rates[-1], 3),
            "second_vs_tenth_command": round(seconds[1] / seconds[-1], 3),
            "first_to_tenth_loops": " and ".join(sorted(loops))}


def _loop_calls(plan) -> list[tuple[list, np.ndarray]]:
    """The calls of :func:`~kc_sim.play.driver.runner.play_rounds` a run of ``plan`` makes:
    every seating of every chunk, its seated agents and its seeds."""
    sched = plan.schedule
    calls = []
    for c in sched.chunks():
        agents = [plan.specs[i] for i in sched.lineups[c.lineup]]
        seeds = group_seeds(plan.config.seed, c.start, c.stop)
        calls += [(list(seat_lineup(agents, q)), seeds) for q in sched.seatings]
    return calls


def command_vs_loop(rounds: int = 1_000_000, agents=None, turns: int = LOOP_TURNS, jobs: int = 1) -> dict:
    """``command_vs_loop`` of the module doc (``jobs``: the command's ``--jobs``, for
    information with 2), with the two rates it comes from."""
    from kc_sim.tournament.options import TournamentOptions  # lazy: the tournament layer loads the agents
    from kc_sim.tournament.plan import make_plan
    from kc_sim.tournament.run import run_tournament

    agents = list(agents or default_agents())
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        out = Path(tmp) / "run"
        options = TournamentOptions.create(agents, rounds=rounds, jobs=jobs, quiet=True, out=out)
        plan = make_plan(options)
        calls = _loop_calls(plan)
        units = sum(len(seeds) for _, seeds in calls)

        def command() -> float:
            shutil.rmtree(out, ignore_errors=True)
            res = run_tournament(options)
            return (res.played_units + res.dropped_units) / res.play_seconds

        def loop() -> float:
            t = time.perf_counter()
            for seated, seeds in calls:
                runner.play_rounds(seated, seeds, plan.rules, loop_agents=plan.specs)
            return units / (time.perf_counter() - t)

        command()                                            # untimed: loads everything both use
        pairs = [(command(), loop()) for _ in range(turns)]
    tag = "" if jobs == 1 else f"_jobs{jobs}"
    return {**with_spread(f"command{tag}_vs_loop", [c / p for c, p in pairs]),
            **with_spread(f"command{tag}_play_rounds_per_s", [c for c, _ in pairs], 0),
            **with_spread(f"loop{tag}_rounds_per_s", [p for _, p in pairs], 0)}
