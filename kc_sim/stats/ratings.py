"""The leaderboard's numbers: Bradley-Terry ratings with intervals over deals, and the
pairwise meta-game they summarise.

:func:`rate_comparisons` turns the comparisons of one or more runs, summed per unit (a deal,
or a batch of deals; :class:`~kc_sim.stats.bradley_terry.Comparisons`), into the leaderboard
table: the Bradley-Terry fit (:mod:`kc_sim.stats.bradley_terry`) with intervals from the
bootstrap over deals (:mod:`kc_sim.stats.bootstrap`) or, with ``bootstrap=0``, from the
sandwich covariance clustered by deal and Student's quantile on the deals minus one; and the
meta-game (:mod:`kc_sim.stats.metagame`): the share of comparisons each agent finishes ahead
of each other one with its interval, the intransitive cycles (a > b > c > a), a goodness of
fit test of Bradley-Terry's predicted shares, and Nash averaging. A single rating cannot show
a cycle; these say when the rating hides one.

**Agents that did not all meet** cannot be rated against each other: :func:`rate_comparisons`
says so. In a bootstrap resample that leaves some agents apart (a few deals, sparse line-ups)
the resample is drawn again, and after 100 draws each group is fitted on its own
(:func:`~kc_sim.stats.bootstrap.resample`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kc_sim.errors import UserError
from kc_sim.stats import metagame
from kc_sim.stats.bootstrap import bootstrap_interval, quantiles, resample, widen
from kc_sim.stats.bradley_terry import (
    ELO,
    Comparisons,
    components,
    fit_bt,
    sandwich_cov,
    totals,
)
from kc_sim.stats.intervals import rate_from_sums, t_of

DEFAULT_BOOTSTRAP = 200
#: the p-value below which Bradley-Terry "does not fit"
FIT_LEVEL = 0.05


@dataclass(eq=False)
class Metagame:
    """The pairwise meta-game behind a leaderboard (``df.attrs["metagame"]``): ``pairs`` (one
    row per ordered pair of agents that met), ``cycles`` (one row per intransitive cycle) and
    ``fit`` (Bradley-Terry's goodness of fit). Compared by identity, so pandas can copy and
    concatenate a leaderboard's attrs."""

    pairs: pd.DataFrame
    cycles: pd.DataFrame
    fit: dict


def rate_comparisons(c: Comparisons, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0, level: float = 0.95):
    """The leaderboard of the comparisons ``c`` (summed per unit and pair) as a DataFrame, best
    first. Columns: ``rank``, ``agent``, ``rating``, ``rating_lo``,
    ``rating_hi`` (Elo scale, mean agent 0), ``theta`` (+ ``theta_lo``, ``theta_hi``),
    ``p_vs_mean`` (chance to beat an agent of rating 0), ``p_vs_next`` (chance to beat the
    next agent down), ``score_rate`` (share of its pairwise comparisons won, ties 1/2),
    ``comparisons``, ``rounds``, ``interval`` (``bootstrap`` over deals, or ``clustered``: the
    sandwich covariance clustered by deal with ``bootstrap=0``), ``nash_weight`` (its
    weight in the maximum-entropy Nash mixture of the meta-game), ``nash_rating`` (its
    payoff, share - 1/2, against that mixture: 0 in the support, negative off it) with
    ``nash_rating_lo``, ``nash_rating_hi`` (bootstrap; NaN with ``bootstrap=0``) and
    ``nash_support`` (the share of bootstrap resamples in which the agent is in the support).

    ``df.attrs``: ``units`` (deals or batches of deals), ``families``, ``deals``, ``rounds``,
    and ``metagame`` (:class:`Metagame`: the pairwise shares, the cycles and Bradley-Terry's
    fit). :func:`kc_sim.analysis.leaderboard.leaderboard` reads the comparisons of run folders
    into it; tests build them directly."""
    if bootstrap < 0:
        raise UserError(f"bad bootstrap count {bootstrap}: expected 0 or more")
    n = len(c.agents)
    W, N = totals(c)
    comps = components(n, N > 0)
    if len(comps) > 1:
        groups = "; ".join(", ".join(c.agents[i] for i in comp) for comp in comps)
        raise UserError(f"these agents never met across the groups {groups}: a rating cannot compare them; "
                        "add a run where the groups play each other")
    theta, cov = fit_bt(W, N)
    boot_shares = None
    if bootstrap > 0:
        boot, boot_shares = resample(c, bootstrap, seed)
        lo, hi = bootstrap_interval(theta, boot, c.n_units, level)
        how = "bootstrap"
    else:
        se = np.sqrt(np.maximum(np.diag(sandwich_cov(c, theta, cov)), 0.0))
        q = t_of(level, max(c.n_units - 1, 1))
        lo, hi = theta - q * se, theta + q * se
        how = "clustered"
    comparisons = N.sum(axis=1)
    score = W.sum(axis=1)
    # best first; agents whose ratings differ only by rounding (a tie) keep their given order, so
    # the rows do not depend on the last bits of the linear-algebra library's arithmetic
    order = np.lexsort((np.arange(n), -np.round(theta, 9)))
    meta, nash = _metagame(c, W, N, theta, order, boot_shares, level)
    rows = []
    for rank, i in enumerate(order, start=1):
        nxt = order[rank] if rank < n else None
        rows.append({
            "rank": rank, "agent": c.agents[i],
            "rating": ELO * theta[i], "rating_lo": ELO * lo[i], "rating_hi": ELO * hi[i],
            "theta": theta[i], "theta_lo": lo[i], "theta_hi": hi[i],
            "p_vs_mean": 1.0 / (1.0 + math.exp(-theta[i])),
            "p_vs_next": (1.0 / (1.0 + math.exp(theta[nxt] - theta[i]))) if nxt is not None else float("nan"),
            "score_rate": score[i] / comparisons[i] if comparisons[i] else float("nan"),
            "comparisons": int(round(comparisons[i])), "rounds": int(c.rounds[i]), "interval": how,
            "nash_weight": nash["weight"][i], "nash_rating": nash["rating"][i],
            "nash_rating_lo": nash["lo"][i], "nash_rating_hi": nash["hi"][i], "nash_support": nash["support"][i],
        })
    df = pd.DataFrame(rows)
    df.attrs["units"] = c.n_units
    df.attrs["families"] = c.families
    df.attrs["deals"] = c.n_deals or c.n_units
    df.attrs["rounds"] = c.n_rounds
    df.attrs["metagame"] = meta
    return df


def _nash(S: np.ndarray, boot_shares, level: float, units: int) -> dict:
    """Nash averaging of the shares ``S`` (:func:`kc_sim.stats.metagame.nash_average`),
    with percentile intervals of the Nash ratings over the bootstrap resamples (widened for
    few deals, :func:`widen`) and each agent's ``support``: the share of resamples in which it
    is in the support of the mixture (its rating there is 0 by definition, so an interval of the rating says little
    about an agent in the support: the support share does). NaN for more agents than
    :data:`~kc_sim.stats.metagame.MAX_NASH_AGENTS`, and for the intervals and support
    without a bootstrap."""
    n = len(S)
    nan = np.full(n, np.nan)
    if n > metagame.MAX_NASH_AGENTS:
        return {"weight": nan, "rating": nan, "lo": nan, "hi": nan, "support": nan}
    weight, rating = metagame.nash_average(metagame.payoff(S))
    lo = hi = support = nan
    if boot_shares is not None:
        res = [metagame.nash_average(metagame.payoff(b)) for b in boot_shares]
        boot = np.array([r for _, r in res])
        lo, hi = widen(rating, *quantiles(boot, level), units, level)
        hi = np.minimum(hi, 0.0)                                   # a Nash rating is never above 0
        support = np.mean([w > metagame.TOL for w, _ in res], axis=0)
    return {"weight": weight, "rating": rating, "lo": lo, "hi": hi, "support": support}


def _metagame(c: Comparisons, W, N, theta, order, boot_shares, level: float):
    """The pairwise shares with their intervals (the bootstrap's standard error,
    :func:`bootstrap_interval`, or clustered by deal with ``bootstrap=0``), the cycles,
    Bradley-Terry's fit test and Nash averaging (:mod:`kc_sim.stats.metagame`). Returns
    (:class:`Metagame`, nash dict)."""
    n = len(c.agents)
    S = metagame.shares(W, N)
    key = c.a * n + c.b                                     # the comparisons' pairs, a < b
    pair_keys = np.unique(key)
    pairs = np.stack(np.divmod(pair_keys, n), axis=1)
    pid = np.searchsorted(pair_keys, key)
    share, count, cov = metagame.clustered_share_cov(c.unit, pid, c.score, c.count, c.n_units, len(pairs))
    LO, HI = np.full((n, n), np.nan), np.full((n, n), np.nan)
    if boot_shares is not None:
        lo, hi = bootstrap_interval(share, boot_shares[:, pairs[:, 0], pairs[:, 1]], c.n_units, level)
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        how = "bootstrap"
    else:
        lo, hi = np.empty(len(pairs)), np.empty(len(pairs))
        for k in range(len(pairs)):
            here = pid == k
            _, lo[k], hi[k] = rate_from_sums(c.score[here], c.count[here], level=level, paired=True)
        how = "clustered"
    LO[pairs[:, 0], pairs[:, 1]], HI[pairs[:, 0], pairs[:, 1]] = lo, hi
    LO[pairs[:, 1], pairs[:, 0]], HI[pairs[:, 1], pairs[:, 0]] = 1.0 - hi, 1.0 - lo
    level_pairs = np.diag(cov) <= 0.0                       # the same share in every deal: nothing to test
    test = metagame.bt_fit_test(theta, pairs, share, count, cov, drop=level_pairs)
    Z = np.full((n, n), np.nan)
    Z[pairs[:, 0], pairs[:, 1]], Z[pairs[:, 1], pairs[:, 0]] = test["z"], -test["z"]
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    rows = []
    for i in order:
        for j in order:
            if i != j and N[i, j] > 0:
                rows.append({"agent": c.agents[i], "opponent": c.agents[j], "share": S[i, j],
                             "share_lo": LO[i, j], "share_hi": HI[i, j], "comparisons": int(round(N[i, j])),
                             "bt_share": 1.0 / (1.0 + math.exp(theta[j] - theta[i])), "z": Z[i, j],
                             "interval": how})
    pairs_df = pd.DataFrame(rows, columns=["agent", "opponent", "share", "share_lo", "share_hi", "comparisons",
                                           "bt_share", "z", "interval"])
    cycles = metagame.find_cycles(S, LO, boot_shares, rank)
    cycles_df = pd.DataFrame(
        [{"cycle": " > ".join(c.agents[m] for m in cy["members"] + cy["members"][:1]), "length": cy["length"],
          "agents": [c.agents[m] for m in cy["members"]], "shares": cy["shares"], "share_lo": cy["lo"],
          "min_share": min(cy["shares"]), "min_lo": min(cy["lo"]), "significant": cy["significant"],
          "support": cy["support"]} for cy in cycles],
        columns=["cycle", "length", "agents", "shares", "share_lo", "min_share", "min_lo", "significant",
                 "support"])
    fit = {"test": "wald, clustered by deal", "chi2": test["chi2"], "df": test["df"],
           "p_value": test["p_value"], "fits": bool(test["df"] == 0 or test["p_value"] >= FIT_LEVEL)}
    if level_pairs.any():
        fit["level_pairs"] = [[c.agents[int(a)], c.agents[int(b)], float(share[k])]
                              for k, (a, b) in enumerate(pairs) if level_pairs[k]]
    if test["worst"] >= 0:
        a, b = (int(x) for x in pairs[test["worst"]])
        if Z[a, b] < 0:
            a, b = b, a
        fit.update({"worst_agent": c.agents[a], "worst_opponent": c.agents[b], "worst_share": float(S[a, b]),
                    "worst_bt_share": 1.0 / (1.0 + math.exp(theta[b] - theta[a])), "worst_z": float(Z[a, b])})
    return Metagame(pairs_df, cycles_df, fit), _nash(S, boot_shares, level, c.n_units)
