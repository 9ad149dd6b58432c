"""Control variates on a run folder: the cross-fitted control-variate estimate of every pair's
finishes-ahead rate (the method: :mod:`kc_sim.stats.variates`), read part by part.

The observation of a pair ``(a, b)`` is the per-deal paired score (:func:`kc_sim.stats.pair_deal_scores`);
the features of each deal known before play come from :mod:`kc_sim.core.features`, their
expectation from deals dealt on a stream of their own and never played
(:func:`kc_sim.core.features.expected_features`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kc_sim.core.features import deal_features, expected_features, feature_names
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.runs import RunReader, layout
from kc_sim.runs.schema import AGENT, PENALTY, seat_arrays, seat_names
from kc_sim.stats import pair_deal_scores
from kc_sim.stats.hist import merge_intervals
from kc_sim.stats.variates import (
    FOLDS,
    Adjusted,
    FoldStats,
    PairAdjusted,
    ScoreSample,
    adjusted_arrays,
    adjusted_mean,
    fold_of,
)
from kc_sim.stats.variates import PendingDeals as _Pending

__all__ = ["EXPECTATION_RATIO", "FOLDS", "MIN_EXPECTATION_DEALS", "Adjusted", "FoldStats", "PairAdjusted", "ScoreSample",
           "adjusted_arrays", "adjusted_mean", "fold_of", "pair_indices", "run_adjusted"]

#: default expectation deals per played deal (the estimated mu then adds about R^2/10 of
#: var(y)/N to the variance: a few percent of the gain)
EXPECTATION_RATIO = 10
#: fewest expectation deals
MIN_EXPECTATION_DEALS = 200_000


# --- a run folder ------------------------------------------------------------------------------



def _columns(t, k: int, index: dict):
    """(group, seed, dealer, seat agents, penalties) of a round part's table (``k`` seats)."""
    codes, pen = seat_arrays(t, k, PENALTY, index)
    return (t.column("group").to_numpy().astype(np.int64), t.column("seed").to_numpy().astype(np.int64),
            t.column("dealer").to_numpy().astype(np.int64), codes, pen)


def pair_indices(labels, pairs=None) -> list[tuple[int, int]]:
    """Agent index pairs: ``pairs`` given as label pairs, or every pair (i < j) in label order."""
    if pairs is None:
        return [(i, j) for i in range(len(labels)) for j in range(i + 1, len(labels))]
    index = {n: i for i, n in enumerate(labels)}
    out = []
    for a, b in pairs:
        if a not in index or b not in index:
            raise UserError(f"unknown agent in pair {a},{b}: expected two of {', '.join(labels)}")
        out.append((index[a], index[b]))
    return out



def run_adjusted(run_dir, pairs=None, *, folds: int = FOLDS, expectation_deals: int | None = None,
                 expectation_seed: int | None = None) -> list[PairAdjusted]:
    """The cross-fitted control-variate estimate of every pair (or of ``pairs``, label pairs)
    of a run folder of single rounds, reading its round parts one at a time. The features'
    expectation comes from ``expectation_deals`` extra deals (default ``EXPECTATION_RATIO``
    times the run's deals, at least ``MIN_EXPECTATION_DEALS``) on a stream independent of
    the run's deals (``expectation_seed``, default the run seed)."""
    run_dir = Path(run_dir)
    reader = RunReader.open(run_dir)
    man = reader.manifest
    if man.mode != "rounds":
        raise UserError(f"{run_dir} played matches: control variates and power need a run of single rounds "
                        "(kc-sim tournament --rounds)")
    labels, players, rules = man.labels, man.config.players, parse_rules(man.config.rules)
    files = reader.parts()                      # verified: only these are read
    if not files:
        raise UserError(f"no round parts in {run_dir / layout.ROUNDS}: expected a finished (or partly finished) run")
    pidx = pair_indices(labels, pairs)
    lineups = man.lineups or None
    need = [sum(1 for lu in lineups if a in lu and b in lu) if lineups else 0 for a, b in pidx]
    F = len(feature_names(players))
    stats = [FoldStats(F, folds) for _ in pidx]
    pending = [_Pending(nd if nd else 10**9) for nd in need]
    samples = [ScoreSample() for _ in pidx]
    rounds = np.zeros(len(pidx), np.int64)
    index = {n: i for i, n in enumerate(labels)}
    n_rows, deal_ranges = 0, []
    cols = ["group", "seed", "dealer"] + seat_names(AGENT, players) + seat_names(PENALTY, players)
    for t in reader.tables(columns=cols, paths=files):
        group, seed, dealer, codes, pen = _columns(t, players, index)
        n_rows += len(group)
        if len(group):
            deal_ranges.append((int(group.min()), int(group.max()) + 1))
        deals, score, n = pair_deal_scores(group, codes, pen, pidx)
        first = np.unique(group, return_index=True)[1]       # a round of each deal: its seed and dealer
        X = deal_features(seed[first], dealer[first], codes.shape[1], rules)
        for p in range(len(pidx)):
            met = n[:, p] > 0
            if not met.any():
                continue
            rounds[p] += n[met, p].sum()
            d, y, Xd = pending[p].add(deals[met], score[met, p] * n[met, p], n[met, p], X[met])
            stats[p].add(d, y, Xd)
            samples[p].add(y)
    for p in range(len(pidx)):
        d, y, Xd = pending[p].rest()
        if len(d):
            stats[p].add(d, y, Xd)
            samples[p].add(y)
    total_deals = int(max(s.n.sum() for s in stats)) if stats else 0
    n_deals = sum(b - a for a, b in merge_intervals(deal_ranges))
    m = expectation_deals or max(MIN_EXPECTATION_DEALS, EXPECTATION_RATIO * total_deals)
    mu, mu_cov = expected_features(players, rules, m, man.config.seed if expectation_seed is None
                                   else expectation_seed)
    sched = man.schedule
    run_rpd = len(sched.lineups) * len(sched.seatings) if sched is not None else 0
    if not run_rpd:                             # no schedule (an old run folder): the rounds per deal played
        run_rpd = n_rows / max(n_deals, 1)
    out = []
    for p, (a, b) in enumerate(pidx):
        if stats[p].n.sum() < 2:
            continue
        est = adjusted_mean(stats[p], mu, mu_cov)
        out.append(PairAdjusted(labels[a], labels[b], int(rounds[p]), float(rounds[p] / stats[p].n.sum()), est,
                                float(run_rpd), samples[p].values))
    if not out:
        raise UserError(f"no pair of agents met in {run_dir}: expected rounds with two agents dealt in")
    return out
