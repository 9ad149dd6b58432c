"""Bradley-Terry ratings from the pairwise comparisons of rounds, summed per batch of deals.

The model (see docs/agents.md, Stronger agents; :mod:`kc_sim.stats.ratings` builds the
leaderboard from it):

* every round is split into its pairs of seats (:func:`kc_sim.stats.pairs.seat_pairs`): in a
  pair, the agent with the **lower penalty** beats the other, equal penalties are a tie (half
  a win each: :func:`kc_sim.stats.pairs.ahead`). In a two-player round that went out, the
  winner beats the loser; a blocked round still ranks the two hands. With K seats a round
  gives K(K-1)/2 pairs (Plackett-Luce would weigh them slightly differently; the pairwise
  likelihood gives the same ratings when strengths are close and handles ties).
* agent i has a strength theta_i, and P(i beats j) = 1 / (1 + exp(theta_j - theta_i)).
  The strengths are fitted by maximum likelihood (Newton's method, sum of theta = 0),
  with one virtual tied comparison added for every pair of agents that met, so that an
  agent that always wins still gets a finite rating (:func:`fit_bt`).
* the **rating** is theta on the Elo scale (:data:`ELO` = 400 / ln 10 per unit of theta),
  centred on the mean agent: a 100-point gap means the stronger agent beats the weaker one
  64% of the time (in pairs that are not tied).
* the comparisons of one deal (every seating, every pair of seats, every line-up) are not
  independent: :func:`sandwich_cov` is the covariance of theta clustered by deal (or batch
  of deals), and :mod:`kc_sim.stats.bootstrap` resamples deals.

numpy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kc_sim.stats.pairs import ahead, seat_pairs

ELO = 400.0 / math.log(10.0)


@dataclass
class Comparisons:
    """Pairwise results aggregated per (unit, pair): ``unit`` (batch of deals, across runs),
    ``a`` < ``b`` agent indices, ``score`` (wins of a over b, ties count 1/2), ``count``."""

    agents: list[str]
    unit: np.ndarray
    a: np.ndarray
    b: np.ndarray
    score: np.ndarray
    count: np.ndarray
    rounds: np.ndarray          # rounds played, by agent
    n_units: int
    n_rounds: int
    families: int = 1           # sets of runs on their own deals (runs with one seed share theirs)
    n_deals: int = 0            # deals behind the units (a unit is a batch of deals past 16,384 deals)


def pair_sums(codes, pen, unit, n: int, span: int) -> tuple[np.ndarray, np.ndarray]:
    """The comparisons of rounds (``codes`` (R, k) agent index by seat, ``pen`` (R, k) penalty,
    negative where the seat was not dealt in, ``unit`` (R,) in ``0 .. span - 1``): each pair
    of seats both dealt in, held by different agents a < b, adds 1 to ``count`` and a's
    finishes-ahead score to ``won``, at index ``(a * n + b) * span + unit``. Returns
    ``(won, count)``, each of length ``n * n * span``."""
    codes = np.asarray(codes, dtype=np.int64)
    pen = np.asarray(pen, dtype=np.int64)
    unit = np.asarray(unit, dtype=np.int64)
    code_of, pen_of = np.ascontiguousarray(codes.T), np.ascontiguousarray(pen.T)   # by seat
    size = n * n * span
    won, count = np.zeros(size), np.zeros(size)
    for s, t, rows in seat_pairs(codes, pen >= 0, ordered=False):
        a, b, pa, pb = code_of[s][rows], code_of[t][rows], pen_of[s][rows], pen_of[t][rows]
        swap = a > b                                   # the lower agent index first
        key = (np.minimum(a, b) * n + np.maximum(a, b)) * span + unit[rows]
        won += np.bincount(key, weights=np.where(swap, ahead(pb, pa), ahead(pa, pb)), minlength=size)
        count += np.bincount(key, minlength=size)
    return won, count


def add_part(sums: dict, rounds_by_agent: dict, codes, pen, unit, n: int, units: int) -> None:
    """Add one part's rounds to the per-(agent pair, unit) sums ``sums[(a, b)]`` ((2, units):
    a's score, comparisons) and the rounds each agent was dealt in. A part holds consecutive
    deals, so its units span a short range: :func:`pair_sums` fills dense (pair, unit in
    that range) arrays, which are then added to the pairs that met."""
    k = codes.shape[1]
    for s in range(k):
        ok = pen[:, s] >= 0
        for i, c in enumerate(np.bincount(codes[ok, s], minlength=n)):
            if c:
                rounds_by_agent[i] = rounds_by_agent.get(i, 0) + int(c)
    first = int(unit.min())
    span = int(unit.max()) - first + 1
    won, count = pair_sums(codes, pen, unit - first, n, span)
    won, count = won.reshape(n * n, span), count.reshape(n * n, span)
    for pair in np.flatnonzero(count.any(axis=1)):
        x, y = divmod(int(pair), n)
        acc = sums.setdefault((x, y), np.zeros((2, units)))
        if acc.shape[1] < units:            # a later run (or group) widened the units
            acc = sums[(x, y)] = np.pad(acc, ((0, 0), (0, units - acc.shape[1])))
        acc[0, first:first + span] += won[pair]
        acc[1, first:first + span] += count[pair]


def totals(c: Comparisons, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(W, N)``: ``W[i, j]`` the score of i against j and ``N[i, j]`` their comparisons
    (symmetric), summed over the units (each weighed by ``weights[unit]``, a bootstrap
    resample's counts)."""
    n = len(c.agents)
    w = 1.0 if weights is None else weights[c.unit]
    idx = c.a * n + c.b
    S = np.bincount(idx, weights=c.score * w, minlength=n * n).reshape(n, n)
    C = np.bincount(idx, weights=c.count * w, minlength=n * n).reshape(n, n)
    W = S + (C - S).T
    N = C + C.T
    return W, N


def components(n: int, met: np.ndarray) -> list[list[int]]:
    """The groups of agents connected by comparisons (``met[i, j]``), each sorted."""
    seen, comps = set(), []
    for start in range(n):
        if start in seen:
            continue
        stack, comp = [start], []
        seen.add(start)
        while stack:
            i = stack.pop()
            comp.append(i)
            for j in np.flatnonzero(met[i]):
                if int(j) not in seen:
                    seen.add(int(j))
                    stack.append(int(j))
        comps.append(sorted(comp))
    return comps


def fit_bt(W: np.ndarray, N: np.ndarray, prior: float = 1.0, tol: float = 1e-10,
           max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry strengths from ``W[i, j]`` (score of i against j) and ``N[i, j]``
    (comparisons of i and j, symmetric), with ``prior`` virtual tied comparisons per pair
    that met. Returns (theta with sum 0, covariance of theta from the observed information).

    **Agents that did not all meet.** The strengths of groups of agents with no comparison
    between them are not identified by the data; each connected group (:func:`components`)
    is fitted on its own, by Newton's method with its strengths summing to zero, so an agent
    with no comparison at all stays at the mean (0) and a group is centred on it. Every
    linear system solved is that of one connected group, which is non-singular, so the fit
    is the same whatever the linear-algebra library (no singular matrix is ever handed to
    it, and no fallback path depends on how it reports one)."""
    n = W.shape[0]
    met = N > 0
    W = W + 0.5 * prior * met
    N = N + prior * met
    theta = np.zeros(n)
    for comp in components(n, met):
        if len(comp) > 1:
            idx = np.asarray(comp)
            theta[idx] = _fit_component(W[np.ix_(idx, idx)], N[np.ix_(idx, idx)], tol, max_iter)
    theta -= theta.mean()
    d = theta[:, None] - theta[None, :]
    p = 1.0 / (1.0 + np.exp(-d))
    v = N * p * (1.0 - p)
    info = np.diag(v.sum(axis=1)) - v
    np.fill_diagonal(info, v.sum(axis=1) - np.diag(v))
    cov = np.linalg.pinv(info)
    return theta, cov


def _fit_component(W: np.ndarray, N: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """Newton's method for the strengths of one connected group of agents (sum 0)."""
    n = W.shape[0]
    theta = np.zeros(n)
    for _ in range(max_iter):
        d = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = (W - N * p).sum(axis=1)
        v = N * p * (1.0 - p)
        H = -v
        np.fill_diagonal(H, v.sum(axis=1) - np.diag(v))
        # the sum-to-zero constraint: H is singular along the all-ones direction only
        step = np.linalg.solve(H + np.ones((n, n)) / n, grad)
        big = np.max(np.abs(step))
        if big > 2.0:               # damp the first steps on lopsided data
            step *= 2.0 / big
        theta = theta + step
        theta -= theta.mean()
        if np.max(np.abs(step)) < tol:
            break
    return theta


def sandwich_cov(c: Comparisons, theta: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """The covariance of theta clustered by deal (the sandwich ``I^+ J I^+``): ``I^+`` the
    inverse information of :func:`fit_bt` (``cov``), ``J = g / (g - 1) sum_u s_u s_u'`` with
    ``s_u`` the score (gradient of the log-likelihood) of unit ``u``'s comparisons at theta,
    over the ``g`` units. The information alone treats every comparison as independent, which
    the comparisons of one deal (every seating, every pair of seats, every line-up) are not."""
    n = len(theta)
    p = 1.0 / (1.0 + np.exp(theta[c.b] - theta[c.a]))
    r = c.score - c.count * p                     # d loglik / d theta_a of each (unit, pair)
    g = int(c.n_units)
    scores = np.zeros((g, n))
    np.add.at(scores, (c.unit, c.a), r)
    np.add.at(scores, (c.unit, c.b), -r)
    J = scores.T @ scores * (g / (g - 1) if g > 1 else math.nan)
    return cov @ J @ cov
