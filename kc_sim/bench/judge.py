"""``kc-sim bench --judge``: the cost of ``kc-sim analyse`` (docs/analysis.md).

Two figures (issue 37, item 6):

* ``judge_rollouts_vs_core``: the judge's rollouts against the compiled core, the same policy
  (the default evaluator, ``planner``) in every seat of 2-player classic rounds. A rollout
  from a fresh deal (:data:`~kc_sim.judge.rollouts.PRIOR`) is a whole round played by the
  judge's kernel, so the two rates are rounds per CPU-second of the same kind of round. They
  are timed in turns, the ratio taken turn by turn (median, min, max): load on the machine
  moves single batches, not the ratio of neighbours. Target: at least 0.5.
* ``judge_round_s``: wall seconds to judge every decision of one recorded 2-player round
  (``planner`` against ``greedy``) until the loss of each action played is known within
  :data:`WITHIN` point either side (95%), with the default evaluator; the median over
  :data:`ROUNDS` rounds, with the min and max, the decisions and worlds spent beside it.
  Target: at most 20 s (on the 2-core development machine; an absolute figure, so it is
  shown with the machine's steadiness probes).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from kc_sim.bench.agents import bench_spec, decisions, timed_rounds
from kc_sim.bench.spread import with_spread
from kc_sim.core.layout import STATE_SIZE
from kc_sim.core.rng import derive
from kc_sim.core.step import deal
from kc_sim.game.rules import parse_rules
from kc_sim.judge.decisions import judge_decision
from kc_sim.judge.positions import replay
from kc_sim.judge.rollouts import PRIOR, view_batch
from kc_sim.judge.settings import DEFAULT_EVALUATOR, MAX_BUDGET
from kc_sim.play.recording.recorded import record_round

__all__ = ["ROUNDS", "WITHIN", "judge_figures", "round_seconds", "rollouts_vs_core"]

#: the precision of ``judge_round_s``: each action played's loss known within this many points
WITHIN = 1.0
#: recorded rounds ``judge_round_s`` is the median of
ROUNDS = 3
#: turns of the rollouts-vs-core comparison, and rounds per batch of each side
TURNS = 7
BATCH_ROUNDS = 1500
PLAYERS = 2


def _fresh_position(seed: int, rules) -> np.ndarray:
    st = np.zeros(STATE_SIZE, np.int64)
    deal(st, seed, PLAYERS, 0, rules.codes())
    return st


def rollouts_vs_core(turns: int = TURNS, n: int = BATCH_ROUNDS, seed: int = 11) -> dict:
    """Rounds per CPU-second of the evaluator in the core's compiled loop and in the judge's
    rollout kernel, in turns on fresh deals, and their ratio turn by turn."""
    rules = parse_rules("classic")
    spec = bench_spec(DEFAULT_EVALUATOR)
    specs = [spec] * PLAYERS
    st = _fresh_position(seed, rules)
    view_batch(st, 0, PRIOR, spec.policy, seed, 0, 8)                      # compile or load first
    timed_rounds(specs, np.arange(8, dtype=np.int64), rules)
    core, roll, per_round = [], [], []
    for t in range(turns):
        seeds = np.arange(n, dtype=np.int64) + (seed * turns + t) * 1_000_003
        cpu, _, rows = timed_rounds(specs, seeds, rules)
        core.append(n / max(cpu, 1e-9))
        per_round.append(decisions(rows) / n)
        c0 = time.process_time()
        win, _, bad = view_batch(st, 0, PRIOR, spec.policy, derive(seed, t), 0, n)
        roll.append(n / max(time.process_time() - c0, 1e-9))
        if bad:
            raise RuntimeError(f"{DEFAULT_EVALUATOR} played an illegal action in {bad} rollout(s)")
    figures = {}
    figures.update(with_spread("judge_core_rounds_per_s", core, 0))
    figures.update(with_spread("judge_rollout_rounds_per_s", roll, 0))
    figures.update(with_spread("judge_rollouts_vs_core", [r / c for r, c in zip(roll, core)], 3))
    figures["judge_decisions_per_round"] = round(statistics.mean(per_round), 1)
    return figures


def round_seconds(rounds: int = ROUNDS, within: float = WITHIN, seed: int = 5) -> dict:
    """Wall seconds to judge every decision of ``rounds`` recorded rounds (``planner`` against
    ``greedy``, 2-player classic) to ``within`` points, the default evaluator rolling out."""
    policy = bench_spec(DEFAULT_EVALUATOR).policy
    seconds, cpu, judged, worlds = [], [], [], []
    for i in range(rounds):
        rec = record_round(["planner", "greedy"], int(derive(seed, i)), "classic")
        r = replay(i, i + 1, rec)
        t, c = time.perf_counter(), time.process_time()
        got = [judge_decision(d, policy, seed=int(derive(seed ^ 0x6A, d.index)), budget=MAX_BUDGET, within=within)
               for d in r.decisions]
        seconds.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        judged.append(sum(1 for j in got if not j.forced))
        worlds.append(sum(j.worlds for j in got))
    figures = {**with_spread("judge_round_s", seconds, 2), **with_spread("judge_round_cpu_s", cpu, 2)}
    figures["judge_round_decisions"] = round(statistics.mean(judged), 1)
    figures["judge_round_worlds"] = round(statistics.mean(worlds))
    return figures


def judge_figures() -> dict:
    """Both figures of the module doc."""
    # the first call compiles (or loads) the kernels: not part of a round's time
    round_seconds(rounds=1, within=50.0, seed=1)
    return {**rollouts_vs_core(), **round_seconds()}
