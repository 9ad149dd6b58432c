"""The reference interval of the tests, written from its definition (docs/analysis.md, "What
the intervals are") with pandas and scipy, not from kc-sim's code: clustered by deal (per-deal
sums by ``groupby``), the cluster-robust (CR1) standard error, Hall's skewness transformation of
the studentised mean (for a rate of 10-90% the sample skewness soft-thresholded by sqrt(6 / g);
otherwise scipy's adjusted skewness G1 of the deals' residuals), scipy's Student quantile on the
deals minus one, or (not paired, not a rare rate, at least four deals) on Satterthwaite's degrees
of freedom ``2 / (2 / (g - 1) + max(G2, 0) / g)`` (G2: scipy's adjusted excess kurtosis), for a rare
rate (under 10% or over 90%, not paired) the bound towards the edge the score bound with the
design-effect sample size (Clopper-Pearson's with at most 2-3 events, scipy's beta quantile), and
for rates the bounds kept inside [0, 1] (a rate of exactly 0 or 1: the Wilson interval of the
deals)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import beta, kurtosis, norm, skew as skewness
from scipy.stats import t as student_t


def per_deal(values, groups) -> tuple[np.ndarray, np.ndarray]:
    """Per-deal sums and counts of ``values`` (one per observation) by deal ``groups``."""
    d = pd.DataFrame({"x": np.asarray(values, float), "g": np.asarray(groups)})
    per = d.groupby("g")["x"].agg(["sum", "size"])
    return per["sum"].to_numpy(), per["size"].to_numpy(float)


def wilson(k: float, n: float, z: float) -> tuple[float, float]:
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (0.0 if p <= 0 else max(0.0, centre - half)), (1.0 if p >= 1 else min(1.0, centre + half))


def from_sums(S, N, rate: bool = False, level: float = 0.95, paired: bool = False, spread=None
              ) -> tuple[float, float, float]:
    S, N = np.asarray(S, float), np.asarray(N, float)
    g = len(S)
    m = S.sum() / N.sum()
    if rate and (g < 2 or m in (0.0, 1.0)):         # no spread to estimate: the deals' Wilson interval
        return (m, *wilson(m * g, g, float(norm.ppf(0.5 + level / 2))))
    if g < 2:
        return m, math.nan, math.nan
    r = S - m * N
    se = math.sqrt(g / (g - 1) * (r ** 2).sum()) / N.sum()
    if se == 0:
        if not rate:                                  # a share f of deals not yet seen to differ, by at most spread
            f = 1 - ((1 - level) / 2) ** (1 / g)
            return (m, m, m) if spread is None else (m, m - f * spread, m + f * spread)
        f = 1 - ((1 - level) / 2) ** (1 / g)          # a share of deals not yet seen to differ: at most f
        return m, m * (1 - f), m + (1 - m) * f
    rare = rate and not paired and min(m, 1 - m) < 0.1
    if paired:                                                         # a paired difference: the plain t
        skew = 0.0
    elif rate and not rare:                                            # a rate of 10-90%: shrunk by the se of
        skew = (r ** 3).mean() / (r ** 2).mean() ** 1.5                # the skewness under symmetry
        skew = np.sign(skew) * max(0.0, abs(skew) - math.sqrt(6 / g))
    else:                                                              # otherwise G1 (g1 itself below 3 deals)
        skew = float(skewness(r, bias=False))
    df = g - 1.0
    if g >= 4 and not (paired or rare):                                # heavy tails: fewer degrees of freedom
        df = 2 / (2 / (g - 1) + max(float(kurtosis(r, bias=False)), 0.0) / g)
    a, b = skew / (3 * math.sqrt(g)), skew / (6 * math.sqrt(g))
    q = float(student_t.ppf(0.5 + level / 2, df))

    def inverse(y):                  # of T + a T^2 + a^2 T^3 / 3 + b (Hall 1992)
        return y - b if abs(a) < 1e-12 else (np.cbrt(1 + 3 * a * (y - b)) - 1) / a

    lo, hi = m - se * inverse(q), m - se * inverse(-q)
    if rare:                                                           # the edge's bound is the score bound
        edge = min(m, 1 - m)
        n_eff = min(edge * (1 - edge) / se ** 2, N.sum())              # observations over the design effect
        z = float(norm.ppf(0.5 + level / 2))
        x, n = edge * n_eff * (z / q) ** 2, n_eff * (z / q) ** 2      # Korn-Graubard
        if x <= (2 if n <= 50 else 3):                                 # few events: Clopper-Pearson's bound
            bound = float(beta.ppf((1 - level) / 2, x, n - x + 1))
        else:                                                          # Wilson's with Student's quantile
            bound = wilson(edge * n_eff, n_eff, q)[0]
        lo, hi = (bound, hi) if m < 0.5 else (lo, 1 - bound)
    return (m, max(0.0, lo), min(1.0, hi)) if rate else (m, lo, hi)


def clustered(values, groups, rate: bool = False, level: float = 0.95, paired: bool = False, spread=None):
    """(estimate, lo, hi) of the mean of ``values`` (or their rate) clustered by ``groups``;
    ``paired``: a paired difference of two agents (no skewness correction); ``spread``: how far
    one deal's mean may lie, the bound of a mean the same in every deal."""
    return from_sums(*per_deal(values, groups), rate=rate, level=level, paired=paired, spread=spread)


def largest_deal_mean(values, groups) -> float:
    """The largest per-deal mean of ``values``."""
    S, N = per_deal(values, groups)
    return float((S / N).max())


def beat_share(pa, pb, groups, level: float = 0.95):
    """(estimate, lo, hi) of the share of rounds with ``pa < pb``: when the pair finished ahead
    of each other equally in every deal (wins plus half the ties is half the rounds), the
    share is (1 - tie share) / 2 deal by deal and takes the tie share's interval, mirrored;
    otherwise the interval of a rate."""
    pa, pb = np.asarray(pa, float), np.asarray(pb, float)
    B, N = per_deal(pa < pb, groups)
    T, _ = per_deal(pa == pb, groups)
    if np.array_equal(2 * B + T, N) and np.ptp(T / N) > 0:
        tie, lo, hi = from_sums(T, N, rate=True, level=level)
        return (1 - tie) / 2, (1 - hi) / 2, (1 - lo) / 2
    return from_sums(B, N, rate=True, level=level)
