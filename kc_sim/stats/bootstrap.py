"""The bootstrap over deals behind the leaderboard's intervals.

The unit resampled is a deal, or a batch of consecutive deals past
:data:`~kc_sim.stats.sums.MAX_BATCHES` of them (:class:`~kc_sim.stats.bradley_terry.Comparisons`
are summed per unit): one deal is played in every seating and by every line-up of a run, and
by every run made with the same ``--seed``, so its comparisons are resampled together and the
correlation that duplicate deals create is kept. :func:`resample` draws Poisson weights per
unit and refits Bradley-Terry; the ratings' and shares' intervals are the estimate plus or
minus Student's quantile on the deals minus one times the resamples' standard deviation,
scaled by ``sqrt(g/(g-1))`` (:func:`bootstrap_interval`); the Nash ratings, bounded above by
0, keep percentile intervals (:func:`quantiles`, median-unbiased) widened for few deals
(:func:`widen`).

numpy only.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from kc_sim.stats.bradley_terry import Comparisons, components, fit_bt, totals
from kc_sim.stats.intervals import t_of, z_of
from kc_sim.stats.metagame import shares


def resample(c: Comparisons, bootstrap: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``bootstrap`` Poisson resamples of the units (deals) of ``c``, seeded by ``seed``:
    (strengths ``(bootstrap, agents)``, shares ``(bootstrap, agents, agents)``, NaN for pairs
    that did not meet). A resample in which some agents never meet rates nothing: it is
    drawn again, and after 100 draws each group is fitted on its own (:func:`fit_bt`)."""
    n = len(c.agents)
    rng = np.random.default_rng(seed)
    boot = np.empty((bootstrap, n))
    boot_shares = np.empty((bootstrap, n, n))
    for r in range(bootstrap):
        for _ in range(100):
            wts = rng.poisson(1.0, size=c.n_units).astype(np.float64)
            Wb, Nb = totals(c, wts)
            if len(components(n, Nb > 0)) == 1:
                break
        boot[r], _ = fit_bt(Wb, Nb)
        boot_shares[r] = shares(Wb, Nb)
    return boot, boot_shares


def _few_deals_factor(units: int, level: float) -> float:
    """``t_{units-1} / z * sqrt(units / (units - 1))``: how much wider than the bootstrap's
    normal-theory spread an interval over ``units`` deals must be (1.10 at 20 deals, 1.03 at
    100, 1.00 past a few thousand; 1 below 2 units). The two ways a bootstrap over ``units``
    deals is too narrow: the bootstrap variance of a mean is ``(units - 1) / units`` of the
    unbiased (clustered) one, and the bootstrap knows no Student quantile (Hesterberg 2015,
    "What teachers should know about the bootstrap", The American Statistician 69(4), the
    expanded percentile interval)."""
    if units < 2:
        return 1.0
    return t_of(level, units - 1) / z_of(level) * math.sqrt(units / (units - 1))


def bootstrap_interval(est, boot, units: int, level: float = 0.95):
    """The interval of ``est`` from its bootstrap resamples ``boot`` (first axis; NaN, a
    resample where the figure is undefined, left out): ``est -+ z * sd * f``, ``sd`` the
    resamples' standard deviation and ``f`` :func:`_few_deals_factor`, i.e. Student's quantile
    on ``units - 1`` times ``sqrt(units / (units - 1))`` times ``sd``: the clustered t interval
    with the bootstrap's standard error in place of the sandwich's.

    **Why not the percentile interval.** A standard error is estimated well from 200
    resamples, the 2.5% and 97.5% points of their distribution are not (Efron and Tibshirani
    1993, An Introduction to the Bootstrap: 25-200 resamples for a standard error, section 6.4;
    about 1,000 or more for percentile intervals). With 200 resamples a percentile bound is
    the 5th-6th of 200 order statistics: numpy's default (linear) quantile put it 1.4-2.2%
    nearer the estimate than the resamples' ``z * sd`` on average (0.4% or less with 1,000
    resamples), and it varied by 8-10% of that distance from one bootstrap seed to another
    (the standard deviation of 200 resamples by about 5%): a noisy bound covers less than a
    steady one of the same average width. On the coverage study's "difference" model
    (``experiments/bootstrap_intervals.py``: 400 simulated runs per cell, the same runs and
    resamples for every method) the widened percentile intervals of the ratings covered
    94.1-94.8% at 2 and 4 players on 20 and 500 deals, the same with 1,000 resamples
    94.8-95.8%, and this interval 94.8-96.2% with 200 (results/README.md, section 10). The
    resamples' spread itself is not short: times ``sqrt(units / (units - 1))`` it is 1.00 of
    the sandwich standard error at 500 deals and 1.03-1.04 at 20.

    Symmetric, as the clustered intervals of the summary's paired shares are; the caller
    clips shares to [0, 1]. Returns ``(lo, hi)`` arrays of ``est``'s shape; NaN where fewer
    than two resamples are defined."""
    est = np.asarray(est, np.float64)
    boot = np.asarray(boot, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sd = np.nanstd(boot, axis=0, ddof=1)
    half = z_of(level) * _few_deals_factor(units, level) * sd
    return est - half, est + half


def widen(est, lo, hi, units: int, level: float = 0.95):
    """Bootstrap percentile bounds ``lo``, ``hi`` of ``est`` widened for few deals: each side's
    distance from the estimate times :func:`_few_deals_factor` (Hesterberg's expanded
    percentile interval). Used for the Nash ratings, whose resamples pile up at their bound 0
    (a normal-theory interval would not respect it); the ratings and shares take
    :func:`bootstrap_interval`."""
    if units < 2:
        return lo, hi
    f = _few_deals_factor(units, level)
    est = np.asarray(est, np.float64)
    return est - f * (est - np.asarray(lo)), est + f * (np.asarray(hi) - est)


def quantiles(x: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over the first axis, ignoring NaN; NaN where every resample is NaN.
    The median-unbiased quantile (Hyndman and Fan 1996, "Sample quantiles in statistical
    packages", definition 8): numpy's default (linear, definition 7) put the 2.5% and 97.5%
    points of 200 resamples of the coverage study's ratings 1.4-2.2% nearer the estimate than
    ``z`` resample standard deviations, the median-unbiased one 0.6-1.5% further."""
    alpha = (1.0 - level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (np.nanquantile(x, alpha, axis=0, method="median_unbiased"),
                np.nanquantile(x, 1 - alpha, axis=0, method="median_unbiased"))
