"""Coverage of the luck-adjusted intervals (:mod:`kc_sim.analysis.luck_adjusted`) in the coverage
study (``experiments/interval_coverage.py``): many short runs of real agents, two seats, both
seat orders on duplicate deals (as a tournament plays them), each summed up with and without
the draw control variates; how often each 95% interval holds the truth, and the factor.

The truth: no difference for an A/A pair (one agent against itself, or against itself with
another seed), else the plain mean of a run of ``truth_deals`` other deals.
"""

from __future__ import annotations

import numpy as np

from kc_sim.analysis.luck_adjusted import pair_luck
from kc_sim.core import loop
from kc_sim.core.layout import MAX_SEATS
from kc_sim.play.driver.runner import play_rounds
from kc_sim.stats.pairs import ahead

#: the pairs of the study: name -> (a, b, truth of (score, penalty difference) or None: measured)
LUCK_PAIRS = {"aa-random": ("random:1", "random:2", (0.5, 0.0)),
              "aa-greedy": ("greedy", "greedy", (0.5, 0.0)),
              "greedy-merger": ("greedy", "pile-merger", None)}


def _luck(rows, seat: int) -> np.ndarray:
    return rows[:, [loop.C_LUCK + j * MAX_SEATS + seat for j in range(loop.N_LUCK)]] / loop.LUCK_SCALE


def paired_deals(a: str, b: str, seeds, rules="classic"):
    """Per deal (seed): ``a``'s finishes-ahead score and penalty difference against ``b`` over the
    deal's two seatings, and the mean of the per-round differences of the draw sums (a's seat minus b's)."""
    A = play_rounds([a, b], seeds, rules, luck=True)
    B = play_rounds([b, a], seeds, rules, luck=True)
    P = loop.C_PENALTY
    ys = (ahead(A[:, P], A[:, P + 1]) + ahead(B[:, P + 1], B[:, P])) / 2
    yp = ((A[:, P] - A[:, P + 1]) + (B[:, P + 1] - B[:, P])) / 2
    X = ((_luck(A, 0) - _luck(A, 1)) + (_luck(B, 1) - _luck(B, 0))) / 2
    return ys.astype(np.float64), yp.astype(np.float64), X


def luck_cell(pair: str, deals: int, runs: int, *, seed: int = 1, truth_deals: int = 200_000) -> dict:
    """``runs`` runs of ``deals`` deals of the pair ``pair`` (:data:`LUCK_PAIRS`): per estimate
    (score, penalty) the share of runs whose plain and adjusted intervals hold the truth, the
    mean factor and the mean half-widths, over the runs that are not exact (every deal level,
    as identical agents can play: counted apart, ``*_exact``; None when every run is)."""
    a, b, truth = LUCK_PAIRS[pair]
    base = 10**9 * seed
    if truth is None:
        ys, yp, _ = paired_deals(a, b, np.arange(truth_deals, dtype=np.int64) + base + 5 * 10**8)
        truth = (float(ys.mean()), float(yp.mean()))
    seeds = np.arange(deals * runs, dtype=np.int64) + base
    ys, yp, X = paired_deals(a, b, seeds)
    out = {"pair": pair, "a": a, "b": b, "deals": deals, "runs": runs, "truth": list(truth)}
    tally = {f"{w}_{k}": 0.0 for w in ("score", "penalty") for k in ("plain", "adjusted", "factor", "half_plain",
                                                                      "half_adjusted", "exact", "exact_miss")}
    for r in range(runs):
        sl = slice(r * deals, (r + 1) * deals)
        for what, est, t in zip(("score", "penalty"), pair_luck(seeds[sl], ys[sl], yp[sl], X[sl]), truth):
            if est.sd < 1e-9:                    # every deal level (identical agents): an exact answer
                tally[f"{what}_exact"] += 1
                tally[f"{what}_exact_miss"] += abs(est.adj - t) > 1e-9
                continue
            for kind, adjusted in (("plain", False), ("adjusted", True)):
                lo, hi = est.interval(adjusted=adjusted)
                tally[f"{what}_{kind}"] += lo <= t <= hi
                tally[f"{what}_half_{kind}"] += (hi - lo) / 2
            tally[f"{what}_factor"] += est.factor
    for what in ("score", "penalty"):
        n = runs - tally[f"{what}_exact"]
        for k in ("plain", "adjusted", "factor", "half_plain", "half_adjusted"):
            tally[f"{what}_{k}"] = tally[f"{what}_{k}"] / n if n else None   # every run exact
    return out | tally


def luck_table(cells: list[dict]) -> str:
    """The study's table of the luck-adjusted intervals. The factor is (mean plain half-width /
    mean adjusted half-width) squared: rounds for the same width (the mean of the runs' own
    factors is dominated by the few runs whose adjusted variance happens to be near 0)."""
    lines = ["| pair | deals | runs | estimate | truth | plain covers | adjusted covers | factor | "
             "half-width plain / adjusted (mean) |", "|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        for i, what in enumerate(("score", "penalty")):
            exact = int(c[f"{what}_exact"])
            if exact == c["runs"]:
                held = "exact in every run" if not c[f"{what}_exact_miss"] else f"{int(c[f'{what}_exact_miss'])} runs off"
                lines.append(f"| {c['a']} vs {c['b']} | {c['deals']} | {c['runs']:,} | {what} | {c['truth'][i]:+.4f} | "
                             f"{held} | {held} | - | 0 / 0 |")
                continue
            what_runs = f"{c['runs'] - exact:,} (+{exact:,} exact)" if exact else f"{c['runs']:,}"
            lines.append(f"| {c['a']} vs {c['b']} | {c['deals']} | {what_runs} | {what} | {c['truth'][i]:+.4f} | "
                         f"{100 * c[f'{what}_plain']:.1f}% | {100 * c[f'{what}_adjusted']:.1f}% | "
                         f"{(c[f'{what}_half_plain'] / c[f'{what}_half_adjusted']) ** 2:.3f} | "
                         f"{c[f'{what}_half_plain']:.4f} / "
                         f"{c[f'{what}_half_adjusted']:.4f} |")
    return "\n".join(lines)
