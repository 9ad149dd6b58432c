"""The paired observation of a deal: how often one agent finished ahead of another in it.

Every deal is played in every seating (and by every line-up), so seat and hand effects
cancel inside a deal, and deals are independent draws: the per-deal score is the
observation of kc-sim's early stopping (:mod:`kc_sim.stats.sequential`), control variates and
power (:mod:`kc_sim.stats.variates`, :mod:`kc_sim.stats.power`).
"""

from __future__ import annotations

import numpy as np

from kc_sim.stats.pairs import ahead


def pair_deal_scores(group, seat_agent, penalty, pairs):
    """Per deal and pair of agents, the share of the deal's rounds in which the first
    agent of the pair finished ahead of the second (:func:`~kc_sim.stats.pairs.ahead`).

    This is the paired observation of kc-sim's early stopping, control variates and power:
    every deal is played in every seating, so seat and hand effects cancel inside it, and
    deals are independent draws. ``group`` (R,) deal numbers; ``seat_agent`` (R, k) agent
    index by seat; ``penalty`` (R, k), negative where the seat was not dealt in; ``pairs``
    (P, 2) agent index pairs ``(a, b)``. Returns ``(deals, score, n)``: the sorted deal
    numbers (D,), ``score`` (D, P) in [0, 1] (NaN where the pair did not meet in that deal)
    and ``n`` (D, P), the rounds in which both were dealt in."""
    group = np.asarray(group, dtype=np.int64)
    seat_agent = np.asarray(seat_agent, dtype=np.int64)
    penalty = np.asarray(penalty, dtype=np.int64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    deals, inv = np.unique(group, return_inverse=True)
    D, P = len(deals), len(pairs)
    score = np.full((D, P), np.nan)
    n = np.zeros((D, P), np.int64)
    dealt = penalty >= 0
    for p, (a, b) in enumerate(pairs):
        in_a, in_b = (seat_agent == a) & dealt, (seat_agent == b) & dealt
        both = in_a.any(axis=1) & in_b.any(axis=1)
        pen_a = np.where(in_a, penalty, 0).sum(axis=1)[both]
        pen_b = np.where(in_b, penalty, 0).sum(axis=1)[both]
        n[:, p] = np.bincount(inv[both], minlength=D)
        total = np.bincount(inv[both], weights=ahead(pen_a, pen_b), minlength=D)
        met = n[:, p] > 0
        score[met, p] = total[met] / n[met, p]
    return deals, score, n
