"""``kc-sim bench``: speed figures measured in one run, as ratios where they compare.

Uniform-random play (the ``random`` agent), classic rules, 4 players, one core. The
core plays whole rounds in its compiled loop; the reference plays the same deals with
the same policy in plain Python. Rates are per CPU-second of this process, so other
work on the machine does not skew the ratio.

The three compiled loops side by side (``loop_*``): ``greedy`` 4-player self-play, classic,
one core, in the generic loop (policies through function pointers, ``kc_sim.core.loop``),
the loop compiled for the greedy policy (``kc_sim.core.policy_set``: greedy compiled in, its
actions not checked again) and the hand-inlined reference loop (``kc_sim.core.inline_greedy``:
greedy written into the loop, no action ids, no legality check). They take turns on the same
seeds in short batches, ``LOOP_REPEATS`` times, and every ratio is given per turn (the
batches of one turn ran under the same conditions) as its median with the min and max over
the turns (``_min``, ``_max``): other work on the machine moves single batches, not the
ratio of neighbours. The three must write identical rows. ``loop_specialised_load_s`` is
what the specialised loop cost to get in this run (a compile the first time, then a load
from the cache); ``--cold`` adds its compile in a fresh process with an empty cache.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

from kc_sim.bench.agents import agents_vs_core, bench_agents, decisions
from kc_sim.bench.scale import run_scale
from kc_sim.bench.spread import with_spread
from kc_sim.bench.steadiness import Probes
from kc_sim.bench.tournament import bench_tournament, cold_command_seconds, first_vs_tenth
from kc_sim.core import inline_greedy, loop
from kc_sim.core import layout as L
from kc_sim.core.policy import random_policy
from kc_sim.core.step import deal, first_dealer
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


LOOP_REPEATS = 15
_SPECIALISED_COMPILE = (
    "import time, numpy as np; from kc_sim.core import loop; from kc_sim.game.rules import parse_rules; "
    "from kc_sim.play.driver import runner; from kc_sim.play.agents.registry import load_agent; g = load_agent('greedy'); "
    "t = time.perf_counter(); play, seated = runner.compiled_loop([g] * 4, 'rounds'); "
    "play(np.zeros(1, np.int64), 4, parse_rules('classic').codes(), seated, np.zeros((1, loop.ROUND_COLS), np.int64)); "
    "print(time.perf_counter() - t)"
)


def loop_figures(rounds: int, rules, repeats: int = LOOP_REPEATS) -> dict:
    """Greedy 4-player self-play in the generic, specialised and hand-inlined loops, side by
    side: rounds/s and ns per decision (per CPU-second, the median batch), the ratios with
    their spread over the turns, and the seconds the specialised loop took to get here."""
    from kc_sim.play.driver import runner  # lazy: the registry reads entry points
    from kc_sim.play.agents.registry import load_agent

    greedy = load_agent("greedy")
    codes = rules.codes()
    pols = runner.policies_tuple([greedy] * PLAYERS)
    t = time.perf_counter()
    spec, seated = runner.compiled_loop([greedy] * PLAYERS, "rounds")
    spec(np.zeros(1, dtype=np.int64), PLAYERS, codes, seated, np.zeros((1, loop.ROUND_COLS), dtype=np.int64))
    load_s = time.perf_counter() - t
    loops = {
        "generic": lambda s, o: loop.play_rounds(s, PLAYERS, codes, pols, o),
        "specialised": lambda s, o: spec(s, PLAYERS, codes, seated, o),
        "inline": lambda s, o: inline_greedy.play_greedy_rounds(s, PLAYERS, codes, o),
    }
    batch = max(1, rounds // repeats)
    seeds = np.arange(batch, dtype=np.int64) + 10**12
    outs = {k: np.zeros((batch, loop.ROUND_COLS), dtype=np.int64) for k in loops}
    for k, f in loops.items():                       # warm-up
        f(seeds[:100], outs[k][:100])
    rates = {k: [] for k in loops}
    for _ in range(repeats):
        for k, f in loops.items():
            t = time.process_time()
            f(seeds, outs[k])
            rates[k].append(batch / max(time.process_time() - t, 1e-9))
    if not (np.array_equal(outs["generic"], outs["specialised"]) and np.array_equal(outs["generic"], outs["inline"])):
        raise AssertionError("the three loops played different rounds")   # pragma: no cover - a core bug
    per_round = decisions(outs["generic"]) / batch
    figures = {}
    for k in loops:
        figures[f"loop_{k}_rounds_per_s"] = round(float(np.median(rates[k])), 1)
    for k in loops:
        figures[f"loop_{k}_ns_per_decision"] = round(1e9 / (float(np.median(rates[k])) * per_round), 2)
    figures["loop_decisions_per_round"] = round(per_round, 2)
    for a, b in (("specialised", "inline"), ("generic", "inline"), ("specialised", "generic")):
        figures.update(with_spread(f"{a}_vs_{b}", [x / y for x, y in zip(rates[a], rates[b])], 3))
    figures["loop_specialised_load_s"] = round(load_s, 3)
    return figures


def specialised_cold_compile_seconds(cache_dir: str) -> float:
    """Seconds to compile (and play one round in) the loop compiled for greedy in a fresh
    process whose cache is ``cache_dir`` (the agent's own compile untimed)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", _SPECIALISED_COMPILE], check=True, env=env,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


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
        deal(st, n, PLAYERS, first_dealer(n, PLAYERS), rules.codes())
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
              tournament: bool = False, scale=None, env: bool = False, judge: bool = False) -> dict:
    """All figures as one flat dict (what ``kc-sim bench --json`` prints, with ``targets``:
    :func:`kc_sim.bench.targets.check` of them)."""
    rules = parse_rules("classic")
    probes = Probes()                      # the machine's steadiness, between the parts (steadiness.py)
    probes.take()
    core = core_rounds_per_s(rounds, rules)
    ref = reference_rounds_per_s(seconds, rules)
    figures = {
        "core_rounds_per_s": round(core, 1),
        "reference_rounds_per_s": round(ref, 1),
        "core_vs_reference": round(core / ref, 1),
        "warm_start_first_round_s": round(start_seconds(), 3),
    }
    figures.update(loop_figures(rounds, rules))
    probes.take()
    if cold:
        with tempfile.TemporaryDirectory() as empty:
            figures["cold_compile_s"] = round(start_seconds(empty), 2)
            figures["loop_specialised_cold_compile_s"] = round(specialised_cold_compile_seconds(empty), 2)
        with tempfile.TemporaryDirectory() as empty:
            figures["cold_command_s"] = round(cold_command_seconds(empty), 2)
        with tempfile.TemporaryDirectory() as empty:
            figures.update(first_vs_tenth(empty))
        probes.take()
    if agents:
        for row in bench_agents():
            key = f"agent_{row['agent']}_rounds_per_s"
            figures.update({key: row["rounds_per_s"], f"{key}_min": row["rounds_per_s_min"],
                            f"{key}_max": row["rounds_per_s_max"]})
        figures.update(agents_vs_core())
        probes.take()
    if tournament:
        figures.update({k: round(v, 3) if isinstance(v, float) else v for k, v in bench_tournament().items()})
        probes.take()
    if judge:
        from kc_sim.bench.judge import judge_figures  # lazy: the judge's kernels compile on first use

        figures.update(judge_figures())
        probes.take()
    if scale:
        figures.update(run_scale(scale))
    if env:
        from kc_sim.bench.env import bench_env  # lazy: the AEC env needs the rl extra

        figures.update({k: round(v, 1) if isinstance(v, float) else v for k, v in bench_env(seconds).items()})
    probes.take()
    figures.update(probes.figures())
    return figures
