"""Control variates from the deal: a cross-fitted regression adjustment of the per-deal
paired score that stays unbiased and needs fewer deals for the same interval.

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
  (several parts) is held until all of them are read, then counted once.
* **Reported:** the adjusted and the unadjusted score with 95% intervals, the
  cross-fitted ``R^2 = 1 - (residual variance) / (variance of y)``, and the
  variance-reduction factor ``var(unadjusted) / var(adjusted)``: the adjusted estimate
  is "worth that many times the rounds".
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from kc_sim.stats.hist import merge_intervals
from kc_sim.core.features import deal_features, expected_features, feature_names
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.stats import pair_deal_scores, t_of

#: default number of cross-fitting folds
FOLDS = 5
#: default expectation deals per played deal (the estimated mu then adds about R^2/10 of
#: var(y)/N to the variance: a few percent of the gain)
EXPECTATION_RATIO = 10
#: fewest expectation deals
MIN_EXPECTATION_DEALS = 200_000
#: per pair, at most this many per-deal scores are kept (a uniform sample of the run's deals),
#: for :mod:`kc_sim.analysis.power` to simulate short runs; memory stays flat at any run size
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


# --- a run folder ------------------------------------------------------------------------------

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


def _lineups(manifest: dict):
    for d in (manifest, manifest.get("schedule") or {}):
        if "lineups" in d:
            return [tuple(x) for x in d["lineups"]]
    return None


def _read_part(path, index):
    """(group, seed, dealer, seat agents, penalties, first-round mask) of a round part."""
    import pyarrow.parquet as pq  # lazy: pyarrow is slow to import

    from kc_sim.tournament.results import agent_codes, seats_of
    from kc_sim.tournament.schema import AGENT, PENALTY, seat_names

    names = pq.read_schema(path).names
    k = seats_of(names)
    cols = ["group", "seed", "dealer"] + seat_names(AGENT, k) + seat_names(PENALTY, k)
    if "match_round" in names:
        cols.append("match_round")
    t = pq.read_table(path, columns=cols)
    codes = np.stack([agent_codes(t.column(f"{AGENT}{s}"), index) for s in range(k)], axis=1)
    pen = np.stack([t.column(f"{PENALTY}{s}").fill_null(-1).to_numpy().astype(np.int64) for s in range(k)], axis=1)
    if "match_round" in names and t.column("match_round").null_count < t.num_rows:
        raise UserError(f"{path.parent.parent} played matches: control variates and power need a run of single "
                        "rounds (kc-sim tournament --rounds)")
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


class _Pending:
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


def run_adjusted(run_dir, pairs=None, *, folds: int = FOLDS, expectation_deals: int | None = None,
                 expectation_seed: int | None = None) -> list[PairAdjusted]:
    """The cross-fitted control-variate estimate of every pair (or of ``pairs``, label pairs)
    of a run folder of single rounds, reading its round parts one at a time. The features'
    expectation comes from ``expectation_deals`` extra deals (default ``EXPECTATION_RATIO``
    times the run's deals, at least ``MIN_EXPECTATION_DEALS``) on a stream independent of
    the run's deals (``expectation_seed``, default the run seed)."""
    from kc_sim.tournament.results import parts, read_manifest

    run_dir = Path(run_dir)
    if not (run_dir / "manifest.json").exists():
        raise UserError(f"{run_dir} is not a run folder: expected manifest.json written by kc-sim tournament")
    man = read_manifest(run_dir)
    man = {**man, **man.get("config", {}), "schedule": man.get("schedule") or {}}
    if man.get("mode", "rounds") != "rounds":
        raise UserError(f"{run_dir} played matches: control variates and power need a run of single rounds "
                        "(kc-sim tournament --rounds)")
    labels, players, rules = man["labels"], int(man["players"]), parse_rules(man["rules"])
    files = parts(run_dir)
    if not files:
        raise UserError(f"no round parts in {run_dir / 'rounds'}: expected a finished (or partly finished) run")
    pidx = pair_indices(labels, pairs)
    lineups = _lineups(man)
    need = [sum(1 for lu in lineups if a in lu and b in lu) if lineups else 0 for a, b in pidx]
    F = len(feature_names(players))
    stats = [FoldStats(F, folds) for _ in pidx]
    pending = [_Pending(nd if nd else 10**9) for nd in need]
    samples = [ScoreSample() for _ in pidx]
    rounds = np.zeros(len(pidx), np.int64)
    index = {n: i for i, n in enumerate(labels)}
    n_rows, deal_ranges = 0, []
    for path in files:
        group, seed, dealer, codes, pen = _read_part(path, index)
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
    mu, mu_cov = expected_features(players, rules, m, int(man.get("seed", 0)) if expectation_seed is None
                                   else expectation_seed)
    sched = man["schedule"]
    run_rpd = len(sched.get("lineups") or []) * len(sched.get("seatings") or [])
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


def format_adjusted(results: list[PairAdjusted]) -> str:
    """A table: per pair, the finishes-ahead rate unadjusted and adjusted (95%), R^2 and the factor."""
    lines = [f"{'pair':28s} {'deals':>9s} {'ahead (95%)':>22s} {'adjusted (95%)':>22s} {'R2':>6s} {'worth':>7s}"]
    for r in results:
        e = r.est
        lo, hi = e.interval(adjusted=False)
        alo, ahi = e.interval()
        lines.append(f"{r.a + ' vs ' + r.b:28s} {e.deals:9,d} {100 * e.mean:6.2f}% [{100 * lo:5.2f},{100 * hi:6.2f}] "
                     f"{100 * e.adj:6.2f}% [{100 * alo:5.2f},{100 * ahi:6.2f}] {e.r2:6.3f} {e.factor:6.2f}x")
    return "\n".join(lines)
