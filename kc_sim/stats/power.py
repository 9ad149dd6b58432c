"""Power: how many deals a run needs to detect a given difference between two agents.

The rule (issue 12, item 4; issue 22). The test is the two-sided test at level ``alpha``
on the per-deal paired score ``y_d`` (the share of a deal's rounds in which ``a`` finished
ahead of ``b``, ties half, over all the deal's seatings and line-ups;
:func:`kc_sim.stats.pair_deal_scores`) against "no difference" (mean 1/2), with the
interval the summary prints (clustered by deal, Student's t on the deals minus one). To
reject with probability ``power`` when the true mean is ``1/2 + diff``,

    deals = the fewest n with ((t_{1 - alpha/2, n-1} + t_{power, n-1}) * sd / diff) ** 2 <= n

(the normal formula with Student's quantiles; the same past a few dozen deals), where
``sd`` is the per-deal standard deviation of ``y_d``.

**Short runs are simulated.** When the formula asks for fewer than :data:`SIMULATE_BELOW`
deals, the deals are instead the fewest ``n`` at which runs of ``n`` deals resampled from
the measured per-deal scores (shifted to a true mean of ``1/2 + diff``) reject in a share
``power`` of :data:`SIMULATIONS` simulated runs (:func:`simulated_deals`). The formula
assumes each run's standard deviation is ``sd``; the per-deal score of two agents that are
level in most deals is heavy-tailed (0.5 in most deals, far from it in a few), most short
runs see a smaller spread than ``sd``, and a run of the formula's size found the difference
86% of the time (greedy against pile-merger at 3 players: 71 deals). Past a few hundred
deals the t statistic is close to normal and the two agree.

With the control variates of :mod:`kc_sim.stats.variates` the variance per deal is
``sd^2 / factor`` (the measured variance-reduction factor, the cost of the estimated
feature expectation included), so the deals needed shrink by that factor. A tournament of
``deals`` deals plays every line-up in every seating of each: :class:`Power` gives the
deals and the rounds of the run to type (:mod:`kc_sim.analysis.power` measures ``sd`` and
the factor on a run folder and prints the table).

numpy only.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from kc_sim.errors import UserError
from kc_sim.stats.intervals import t_of, unseen_share, z_of

#: default power and level
POWER = 0.8
ALPHA = 0.05
#: the formula's deals under which the deals are found by simulation, and its runs
SIMULATE_BELOW = 200
SIMULATIONS = 4000


def z_power(alpha: float = ALPHA, power: float = POWER) -> float:
    """``z_{1 - alpha/2} + z_{power}`` (2.80 for the defaults)."""
    _check(alpha, power)
    return z_of(1 - alpha) + (z_of(2 * power - 1) if power > 0.5 else 0.0)


def _check(alpha: float, power: float) -> None:
    if not 0 < alpha < 1:
        raise UserError(f"bad alpha {alpha}: expected a level between 0 and 1")
    if not 0.5 <= power < 1:
        raise UserError(f"bad power {power}: expected at least 0.5 and below 1")


def t_power(df: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """``t_{1 - alpha/2, df} + t_{power, df}``: :func:`z_power` with Student's quantiles."""
    _check(alpha, power)
    return t_of(1 - alpha, df) + (t_of(2 * power - 1, df) if power > 0.5 else 0.0)


def deals_needed(sd: float, diff: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Deals needed to detect a mean ``1/2 + diff`` of the paired score with per-deal sd
    ``sd``, with the t interval on the deals minus one (module doc)."""
    if not 0 < abs(diff) < 0.5:
        raise UserError(f"bad difference {diff}: expected a rate difference between 0 and 0.5 (e.g. 0.5pp)")
    if not sd >= 0:
        raise UserError(f"bad standard deviation {sd}: expected 0 or more")
    def enough(n: int) -> bool:            # n deals reach the power (t's quantiles shrink as n grows)
        return (t_power(n - 1, alpha, power) * sd / abs(diff)) ** 2 <= n

    lo = max(2, math.ceil((z_power(alpha, power) * sd / abs(diff)) ** 2))   # the normal formula: never more
    hi = lo
    while not enough(hi):
        lo, hi = hi, 2 * hi
    while lo < hi:                         # the fewest deals that are enough
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


def simulated_deals(scores, diff: float, alpha: float = ALPHA, power: float = POWER, n_max: int = 2 * SIMULATE_BELOW,
                    sims: int = SIMULATIONS, seed: int = 0, limit: int = 16 * SIMULATE_BELOW) -> int | None:
    """The fewest deals ``n`` from which every larger run, up to ``n_max``, rejects "no
    difference" in at least a share ``power`` of ``sims`` runs resampled from the per-deal
    ``scores`` shifted to a mean of ``1/2 + diff`` (module doc). ``n_max`` doubles while it
    is not enough, up to ``limit`` (then None). The test is the summary's: the t interval on
    the deals minus one (a run whose deals are all alike gets the bound of the deals not yet
    seen to differ). Runs of every length share their draws (the first ``n`` deals of one
    ``n_max``-deal run), so neighbouring lengths differ by their deals, not by their luck; the
    seed is fixed, and the runs are drawn in blocks, so memory stays small."""
    y = np.asarray(scores, dtype=np.float64)
    y = y - y.mean()                               # centred: the sums below lose no precision
    while True:
        k = range(2, n_max + 1)                    # the test's quantile and unseen share per length
        q = np.r_[np.inf, np.inf, [t_of(1 - alpha, n - 1) for n in k]]
        f = np.r_[1.0, 1.0, [unseen_share(n, 1 - alpha) for n in k]]
        power_at = np.zeros(n_max + 1)
        rng = np.random.default_rng(seed)
        for start in range(0, sims, SIM_BLOCK):
            power_at += _rejections(y[rng.integers(0, len(y), (min(SIM_BLOCK, sims - start), n_max))], diff, q, f)
        enough = power_at >= power * sims
        if enough[n_max]:
            short = np.flatnonzero(~enough)
            return int(short[-1] + 1)
        if n_max >= limit:
            return None
        n_max = min(2 * n_max, limit)


#: simulated runs drawn at once by :func:`simulated_deals`
SIM_BLOCK = 500


def _rejections(Y, diff: float, q, f) -> np.ndarray:
    """For every run length ``k`` (index ``k``; 0 at 0 and 1), how many of the runs ``Y``
    (centred per-deal scores, one run per row) reject 1/2 on their first ``k`` deals when the
    true rate is ``1/2 + diff``: ``q[k]`` the test's quantile, ``f[k]`` the share of deals not
    yet seen to differ that bounds a run whose deals are all alike."""
    n = np.arange(1, Y.shape[1] + 1, dtype=np.float64)
    mean = np.cumsum(Y, axis=1) / n
    ss = np.maximum(np.cumsum(Y * Y, axis=1) - n * mean * mean, 0.0)
    flat = np.maximum.accumulate(Y, axis=1) == np.minimum.accumulate(Y, axis=1)   # every deal alike
    mean += 0.5 + diff
    out = np.zeros(Y.shape[1] + 1)
    for k in range(2, Y.shape[1] + 1):
        m, se = mean[:, k - 1], np.sqrt(ss[:, k - 1] / ((k - 1) * k))
        reject = np.where(flat[:, k - 1], (m * (1 - f[k]) > 0.5) | (m + (1 - m) * f[k] < 0.5),
                          np.abs(m - 0.5) > q[k] * se)
        out[k] = reject.sum()
    return out


@dataclass
class Power:
    """Deals and rounds needed for one pair, without and with the control variates."""

    a: str
    b: str
    diff: float
    alpha: float
    power: float
    sd: float                  # per-deal sd of the paired score (from the run)
    factor: float              # variance-reduction factor of the control variates (>= 0)
    r2: float
    rounds_per_deal: float     # rounds of a deal in which the pair sits together
    pilot_deals: int
    observed: float            # the run's finishes-ahead rate (unadjusted)
    deals: int                 # deals needed without control variates
    deals_cv: int              # with them
    run_rounds_per_deal: float = math.nan   # rounds of a deal in the whole run (line-ups x seatings)
    simulated: bool = False    # deals found by simulating short runs (module doc), not by the formula

    @property
    def level(self) -> bool:
        """True when the pair's paired score was the same in every deal of the run (two agents
        that play alike): there is no spread between deals to size a run from, and the
        deals are not printed (the formula would say 2 whatever the difference)."""
        return self.sd == 0

    @property
    def rounds(self) -> int:
        """The ``--rounds`` of the same tournament that plays :attr:`deals` deals."""
        return math.ceil(self.deals * self.run_rounds_per_deal)

    @property
    def rounds_cv(self) -> int:
        return math.ceil(self.deals_cv * self.run_rounds_per_deal)

    @property
    def rounds_together(self) -> int:
        """Of :attr:`rounds`, those in which the pair sits together."""
        return math.ceil(self.deals * self.rounds_per_deal)

    def to_dict(self) -> dict:
        return {**asdict(self), "rounds": self.rounds, "rounds_cv": self.rounds_cv,
                "rounds_together": self.rounds_together, "level": self.level}


def power_of(pair, diff: float, alpha: float = ALPHA, power: float = POWER) -> Power:
    """:class:`Power` from a pair's :class:`~kc_sim.stats.variates.PairAdjusted`: the
    formula's deals, or under :data:`SIMULATE_BELOW` of them the simulated ones (module doc)
    when the pair's per-deal scores are at hand; the deals with control variates are the
    formula's, scaled like the deals without."""
    e = pair.est
    factor = max(e.factor, 1e-12)
    deals = deals_needed(e.sd, diff, alpha, power)
    deals_cv = deals_needed(e.sd / math.sqrt(factor), diff, alpha, power)
    simulated = None
    if deals < SIMULATE_BELOW and pair.scores is not None and len(pair.scores) >= 20 and e.sd > 0:
        simulated = simulated_deals(pair.scores, diff, alpha, power, n_max=max(40, 2 * deals))
    if simulated is not None:
        deals_cv = max(2, math.ceil(simulated * deals_cv / deals))
        deals = simulated
    return Power(pair.a, pair.b, diff, alpha, power, e.sd, e.factor, e.r2, pair.rounds_per_deal, e.deals, e.mean,
                 deals, deals_cv, pair.run_rounds_per_deal, simulated is not None)
