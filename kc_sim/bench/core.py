"""``kc-sim bench``: speed figures measured in one run, as ratios where they compare.

Uniform-random play (the ``random`` agent), classic rules, 4 players, one core. The
core plays whole rounds in its compiled loop; the reference plays the same deals with
the same policy in plain Python. Rates are per CPU-second of this process, so other
work on the machine does not skew the ratio.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

from kc_sim.bench.agents import bench_agents
from kc_sim.bench.scale import run_scale
from kc_sim.bench.tournament import bench_tournament
from kc_sim.core import layout as L
from kc_sim.core import loop
from kc_sim.core.policy import random_policy
from kc_sim.core.step import deal
from kc_sim.game.reference import STOP, RefRound
from kc_sim.game.rules import parse_rules

PLAYERS = 4
_FIRST_ROUND = (
    "import time; t = time.perf_counter(); import numpy as np; "
    "from kc_sim.core.loop import play_rounds, ROUND_COLS; from kc_sim.core.policy import random_policy; "
    "from kc_sim.game.rules import parse_rules; "
    "play_rounds(np.zeros(1, np.int64), 4, parse_rules('classic').codes(), (random_policy,) * 8, "
    "np.zeros((1, ROUND_COLS), np.int64)); print(time.perf_counter() - t)"
)


def core_rounds_per_s(rounds: int, rules) -> float:
    """Rounds per second of the compiled loop (after a warm-up call)."""
    codes = rules.codes()
    pols = (random_policy,) * L.MAX_SEATS
    out = np.zeros((rounds, loop.ROUND_COLS), dtype=np.int64)
    loop.play_rounds(np.arange(100, dtype=np.int64), PLAYERS, codes, pols, out[:100])
    seeds = np.arange(rounds, dtype=np.int64)
    t = time.process_time()
    loop.play_rounds(seeds, PLAYERS, codes, pols, out)
    return rounds / (time.process_time() - t)


def reference_rounds_per_s(seconds: float, rules) -> float:
    """Rounds per second of the reference, same deals, same policy (random legal play, stop when none)."""
    st = np.zeros(L.STATE_SIZE, dtype=np.int64)
    rng = random.Random(0)
    n, t = 0, time.process_time()
    while time.process_time() - t < seconds:
        deal(st, n, PLAYERS, loop.first_dealer(n, PLAYERS), rules.codes())
        deck = [int(c) for c in st[L.STOCK:L.STOCK + st[L.STOCK_LEN]]]
        ref = RefRound(rules, PLAYERS, int(st[L.DEALER]), deck)
        while not ref.over:
            plays = sorted(ref.place_and_move_actions())
            ref.play(rng.choice(plays) if plays else STOP)
        n += 1
    return n / (time.process_time() - t)


def start_seconds(cache_dir: str | None = None) -> float:
    """Wall time of a fresh process importing the core and playing its first round."""
    env = dict(os.environ)
    if cache_dir:
        env["NUMBA_CACHE_DIR"] = cache_dir
    t = time.perf_counter()
    subprocess.run([sys.executable, "-W", "ignore", "-c", _FIRST_ROUND], check=True, env=env, capture_output=True)
    return time.perf_counter() - t


def run_bench(rounds: int = 400_000, seconds: float = 3.0, cold: bool = False, agents: bool = False,
              tournament: bool = False, scale=None) -> dict:
    """All figures as one flat dict (what ``kc-sim bench --json`` prints)."""
    rules = parse_rules("classic")
    core = core_rounds_per_s(rounds, rules)
    ref = reference_rounds_per_s(seconds, rules)
    figures = {
        "core_rounds_per_s": round(core, 1),
        "reference_rounds_per_s": round(ref, 1),
        "core_vs_reference": round(core / ref, 1),
        "warm_start_first_round_s": round(start_seconds(), 3),
    }
    if cold:
        with tempfile.TemporaryDirectory() as empty:
            figures["cold_compile_s"] = round(start_seconds(empty), 2)
    if agents:
        for row in bench_agents():
            figures[f"agent_{row['agent']}_rounds_per_s"] = round(row["rounds_per_s"], 1)
    if tournament:
        figures.update({k: round(v, 3) if isinstance(v, float) else v for k, v in bench_tournament().items()})
    if scale:
        figures.update(run_scale(scale))
    return figures
