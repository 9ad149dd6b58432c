"""Control variates from the deal: a cross-fitted regression adjustment of the per-deal
paired score that stays unbiased and needs fewer deals for the same interval (the math;
:func:`kc_sim.analysis.variance.run_adjusted` applies it to a run folder).

The method (issue 12, item 3). For a pair of agents ``(a, b)`` the observation of deal
``d`` is ``y_d``, the share of the deal's rounds in which ``a`` finished ahead of ``b``
(:func:`kc_sim.stats.pair_deal_scores`); deals are independent. ``x_d`` are features of
the deal known before play (:mod:`kc_sim.core.features`) with expectation ``mu``. For
any fixed ``beta``, ``y_d - beta'(x_d - mu)`` has the mean of ``y_d``; the best ``beta``
(least squares) cuts the variance by the factor ``1 - R^2``.

* **Cross-fitting.** Deals fall into ``K`` folds by a hash of the deal number. Fold ``k``
  is adjusted with ``beta_{-k}`` fitted on the other folds only, so ``beta_{-k}`` is
  independent of the fold's deals and each fold's adjusted mean is unbiased whatever the
  fit: ``est = sum_k (n_k / N) (ybar_k - beta_{-k}' (xbar_k - mu))``.
* **Its variance** is ``sum_k (n_k / N)^2 s2_k / n_k`` with ``s2_k`` the variance of the
  residuals ``y - beta_{-k}' x`` inside fold ``k``, plus ``bbar' Cov(mu_hat) bbar`` when
  ``mu`` is estimated (``bbar`` the weighted mean of the ``beta_{-k}``): ``mu`` comes from
  deals dealt on a stream of their own and never played
  (:func:`kc_sim.core.features.expected_features`), so that term is the whole cost of not
  knowing it exactly.
* **Streaming.** Everything above needs, per fold, only ``n``, the sums of ``y``, ``x``,
  ``y^2``, ``x x'`` and ``x y`` (:class:`FoldStats`); a run folder is read part by part,
  so memory does not grow with the rounds. A deal met by a pair in several line-ups
  (several parts) is held until all of them are read, then counted once (:class:`PendingDeals`).
* **Reported:** the adjusted and the unadjusted score with 95% intervals, the
  cross-fitted ``R^2 = 1 - (residual variance) / (variance of y)``, and the
  variance-reduction factor ``var(unadjusted) / var(adjusted)``: the adjusted estimate
  is "worth that many times the rounds".
"""


from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from kc_sim.errors import UserError
from kc_sim.stats.intervals import t_of

#: default number of cross-fitting folds
FOLDS = 5
#: per pair, at most this many per-deal scores are kept (a uniform sample of the run's deals),
#: for :mod:`kc_sim.stats.power` to simulate short runs; memory stays flat at any run size
SCORE_SAMPLE = 20_000
_FOLD_SALT = np.uint64(0x666F6C64)
_RIDGE = 1e-9


def fold_of(deals, folds: int = FOLDS) -> np.ndarray:
    """The fold (0..folds-1) of each deal number: splitmix64's finaliser of the number, so
    folds are balanced and unrelated to the order of the deals."""
    z = np.asarray(deals, dtype=np.int64).astype(np.uint64) ^ _FOLD_SALT
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z % np.uint64(folds)).astype(np.int64)


class FoldStats:
    """Per-fold sufficient statistics of (y, x): n, sums of y, y^2, x, x x' and x y."""

    def __init__(self, n_features: int, folds: int = FOLDS):
        K, F = int(folds), int(n_features)
        self.folds, self.F = K, F
        self.n = np.zeros(K)
        self.sy = np.zeros(K)
        self.syy = np.zeros(K)
        self.sx = np.zeros((K, F))
        self.sxx = np.zeros((K, F, F))
        self.sxy = np.zeros((K, F))

    def add(self, deals, y, X) -> None:
        """Add deals (numbers ``deals``, scores ``y`` (n,), features ``X`` (n, F)); NaN
        scores (the pair did not meet) are left out."""
        y = np.asarray(y, dtype=np.float64)
        X = np.asarray(X, dtype=np.float64).reshape(len(y), self.F)
        ok = ~np.isnan(y)
        y, X, f = y[ok], X[ok], fold_of(np.asarray(deals)[ok], self.folds)
        for k in range(self.folds):
            m = f == k
            if not m.any():
                continue
            yk, Xk = y[m], X[m]
            self.n[k] += len(yk)
            self.sy[k] += yk.sum()
            self.syy[k] += yk @ yk
            self.sx[k] += Xk.sum(axis=0)
            self.sxx[k] += Xk.T @ Xk
            self.sxy[k] += Xk.T @ yk

    def merge(self, other: FoldStats) -> FoldStats:
        for name in ("n", "sy", "syy", "sx", "sxx", "sxy"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self


def _moments(n, sy, syy, sx, sxx, sxy):
    """Means and (population) (co)variances from sums."""
    my, mx = sy / n, sx / n
    vy = syy / n - my * my
    cxx = sxx / n - np.outer(mx, mx)
    cxy = sxy / n - mx * my
    return my, mx, vy, cxx, cxy


def _fit(cxx, cxy):
    """Least-squares slope from covariances; a tiny ridge (relative to the diagonal) keeps
    constant or collinear features from making the system singular."""
    d = np.diag(cxx)
    reg = _RIDGE * (d.mean() if d.size and d.mean() > 0 else 1.0)
    return np.linalg.lstsq(cxx + reg * np.eye(len(cxy)), cxy, rcond=None)[0]


@dataclass
class Adjusted:
    """A cross-fitted control-variate estimate of a mean (the pair's finishes-ahead rate)."""

    deals: int
    mean: float            # unadjusted mean of y
    se: float              # its standard error (deals independent)
    adj: float             # the adjusted (cross-fitted control-variate) mean
    adj_se: float          # its standard error, the error of the estimated mu included
    mu_se: float           # the part of adj_se due to the estimated mu (in quadrature)
    sd: float              # per-deal standard deviation of y
    r2: float              # cross-fitted R^2 of y on the features
    factor: float          # var(unadjusted) / var(adjusted): "worth factor x rounds"

    def interval(self, level: float = 0.95, adjusted: bool = True) -> tuple[float, float]:
        """The interval of the adjusted (or plain) mean, Student's t on the deals minus one."""
        m, s = (self.adj, self.adj_se) if adjusted else (self.mean, self.se)
        q = t_of(level, max(self.deals - 1, 1))
        return m - q * s, m + q * s

    def to_dict(self) -> dict:
        d = asdict(self)
        d["lo"], d["hi"] = self.interval(adjusted=False)
        d["adj_lo"], d["adj_hi"] = self.interval()
        return d


def adjusted_mean(stats: FoldStats, mu, mu_cov=None) -> Adjusted:
    """The cross-fitted control-variate estimate from per-fold statistics; ``mu`` the
    features' expectation, ``mu_cov`` the covariance of its estimate (None: exact)."""
    mu = np.asarray(mu, dtype=np.float64)
    N = stats.n.sum()
    if N < 2 or (stats.n > 0).sum() < 2:
        raise UserError(f"too few deals for a control-variate estimate ({int(N)}): expected at least 2 folds with deals")
    tot = [stats.n.sum(), stats.sy.sum(), stats.syy.sum(), stats.sx.sum(0), stats.sxx.sum(0), stats.sxy.sum(0)]
    my, _, vy, _, _ = _moments(*tot)
    vy = max(vy * N / (N - 1), 0.0)
    est, var, resid, bbar = 0.0, 0.0, 0.0, np.zeros(stats.F)
    for k in range(stats.folds):
        nk = stats.n[k]
        if nk == 0:
            continue
        rest = [tot[0] - nk, tot[1] - stats.sy[k], tot[2] - stats.syy[k], tot[3] - stats.sx[k],
                tot[4] - stats.sxx[k], tot[5] - stats.sxy[k]]
        _, _, _, cxx_o, cxy_o = _moments(*rest)
        beta = _fit(cxx_o, cxy_o)
        myk, mxk, vyk, cxxk, cxyk = _moments(nk, stats.sy[k], stats.syy[k], stats.sx[k], stats.sxx[k],
                                           stats.sxy[k])
        s2 = max(vyk - 2 * beta @ cxyk + beta @ cxxk @ beta, 0.0)    # residual variance in fold k
        w = nk / N
        est += w * (myk - beta @ (mxk - mu))
        var += w * w * s2 * nk / max(nk - 1, 1) / nk
        resid += nk * s2
        bbar += w * beta
    mu_var = 0.0 if mu_cov is None else float(max(bbar @ np.asarray(mu_cov) @ bbar, 0.0))
    var += mu_var
    se = math.sqrt(vy / N)
    r2 = 1.0 - (resid / N) / vy if vy > 0 else 0.0
    factor = (vy / N) / var if var > 0 else math.inf
    return Adjusted(int(N), float(my), se, float(est), math.sqrt(var), math.sqrt(mu_var), math.sqrt(vy), float(r2),
                    float(factor))


def adjusted_arrays(deals, y, X, mu, mu_cov=None, folds: int = FOLDS) -> Adjusted:
    """:func:`adjusted_mean` for arrays in memory (one deal per row)."""
    X = np.asarray(X, dtype=np.float64)
    stats = FoldStats(X.shape[1], folds)
    stats.add(deals, y, X)
    return adjusted_mean(stats, mu, mu_cov)



@dataclass
class PairAdjusted:
    """One pair's result on a run folder: ``a`` finishes ahead of ``b`` (ties half)."""

    a: str
    b: str
    rounds: int            # rounds in which both were dealt in
    rounds_per_deal: float      # rounds of a deal in which the pair sits together
    est: Adjusted
    run_rounds_per_deal: float = math.nan   # rounds of a deal in the whole run (line-ups x seatings)
    scores: np.ndarray | None = None        # a uniform sample of the per-deal scores (ScoreSample)

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "rounds": self.rounds, "rounds_per_deal": self.rounds_per_deal,
                "run_rounds_per_deal": self.run_rounds_per_deal, **self.est.to_dict()}



class ScoreSample:
    """A uniform sample of at most ``cap`` per-deal scores of a stream of deals (reservoir
    sampling, Vitter's algorithm R, with a fixed seed: the same run gives the same sample)."""

    def __init__(self, cap: int = SCORE_SAMPLE, seed: int = 0):
        self.cap, self.seen = cap, 0
        self.values = np.empty(0)
        self._rng = np.random.default_rng(seed)

    def add(self, y) -> None:
        y = np.asarray(y, dtype=np.float64)
        room = max(0, min(len(y), self.cap - len(self.values)))
        self.values = np.r_[self.values, y[:room]]
        rest = y[room:]
        if len(rest):                # item t (0-based) replaces a random slot with probability cap / (t + 1)
            t = self.seen + room + np.arange(len(rest))
            j = self._rng.integers(0, t + 1)
            keep = j < self.cap
            self.values[j[keep]] = rest[keep]      # in order: a later item overwrites an earlier one
        self.seen += len(y)


class PendingDeals:
    """Per pair, the deals met in more than one part, held until all their parts are read."""

    def __init__(self, need: int):
        self.need = need
        self.total, self.n, self.seen, self.x = {}, {}, {}, {}

    def add(self, deals, total, n, X):
        """Add a part's sums; returns (deals, y, X) of the deals now complete."""
        if self.need <= 1:
            return deals, total / np.where(n > 0, n, 1), X
        done = []
        for i, d in enumerate(deals.tolist()):
            self.total[d] = self.total.get(d, 0.0) + total[i]
            self.n[d] = self.n.get(d, 0) + n[i]
            self.seen[d] = self.seen.get(d, 0) + 1
            self.x.setdefault(d, X[i])
            if self.seen[d] >= self.need:
                done.append(d)
        return self._pop(done)

    def _pop(self, done):
        F = next(iter(self.x.values())).shape[0] if self.x else 0
        y = np.array([self.total[d] / self.n[d] for d in done])
        X = np.array([self.x[d] for d in done]).reshape(len(done), F)
        for d in done:
            for m in (self.total, self.n, self.seen, self.x):
                del m[d]
        return np.array(done, dtype=np.int64), y, X

    def rest(self):
        return self._pop(list(self.total))
