"""Power: how many rounds a run needs to detect a given difference between two agents.

The rule (issue 12, item 4). The test is the two-sided z test at level ``alpha`` on the
per-deal paired score ``y_d`` (the share of a deal's rounds in which ``a`` finished ahead
of ``b``, ties half; :func:`kc_sim.stats.pair_deal_scores`) against "no difference"
(mean 1/2). To reject with probability ``power`` when the true mean is ``1/2 + diff``,

    deals = ceil(((z_{1 - alpha/2} + z_{power}) * sd / diff) ** 2)

where ``sd`` is the per-deal standard deviation of ``y_d``; rounds = deals times the
rounds per deal (the line-up's seatings; for a tournament, all its rounds per deal).
With the control variates of :mod:`kc_sim.analysis.variance` the variance per deal is
``sd^2 / factor`` (the measured variance-reduction factor, the cost of the estimated
feature expectation included), so the deals needed shrink by that factor.

``sd`` and the factor come from a run folder (:func:`power_from_run`) or from a small
pilot run made here (:func:`pilot_power`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from kc_sim.errors import UserError
from kc_sim.sequential import parse_share
from kc_sim.stats import z_of

#: default power and level
POWER = 0.8
ALPHA = 0.05


def z_power(alpha: float = ALPHA, power: float = POWER) -> float:
    """``z_{1 - alpha/2} + z_{power}`` (2.80 for the defaults)."""
    if not 0 < alpha < 1:
        raise UserError(f"bad alpha {alpha}: expected a level between 0 and 1")
    if not 0.5 <= power < 1:
        raise UserError(f"bad power {power}: expected at least 0.5 and below 1")
    return z_of(1 - alpha) + (z_of(2 * power - 1) if power > 0.5 else 0.0)


def deals_needed(sd: float, diff: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Deals needed to detect a mean ``1/2 + diff`` of the paired score with per-deal sd ``sd``."""
    if not 0 < abs(diff) < 0.5:
        raise UserError(f"bad difference {diff}: expected a rate difference between 0 and 0.5 (e.g. 0.5pp)")
    if not sd >= 0:
        raise UserError(f"bad standard deviation {sd}: expected 0 or more")
    return max(1, math.ceil((z_power(alpha, power) * sd / abs(diff)) ** 2))


def parse_diff(text: str) -> float:
    """A difference in the finishes-ahead rate: ``0.5pp``, ``0.5%`` or ``0.005``; returns
    the fraction (below 50pp)."""
    return parse_share(text, "--diff", 0.5)


@dataclass
class Power:
    """Rounds needed for one pair, without and with the control variates."""

    a: str
    b: str
    diff: float
    alpha: float
    power: float
    sd: float                  # per-deal sd of the paired score (from the run)
    factor: float              # variance-reduction factor of the control variates (>= 0)
    r2: float
    rounds_per_deal: float
    pilot_deals: int
    observed: float            # the run's finishes-ahead rate (unadjusted)
    deals: int                 # deals needed without control variates
    deals_cv: int              # with them

    @property
    def rounds(self) -> int:
        return math.ceil(self.deals * self.rounds_per_deal)

    @property
    def rounds_cv(self) -> int:
        return math.ceil(self.deals_cv * self.rounds_per_deal)

    def to_dict(self) -> dict:
        return {**asdict(self), "rounds": self.rounds, "rounds_cv": self.rounds_cv}


def power_of(pair, diff: float, alpha: float = ALPHA, power: float = POWER) -> Power:
    """:class:`Power` from a pair's :class:`~kc_sim.analysis.variance.PairAdjusted`."""
    e = pair.est
    factor = max(e.factor, 1e-12)
    return Power(pair.a, pair.b, diff, alpha, power, e.sd, e.factor, e.r2, pair.rounds_per_deal, e.deals, e.mean,
                 deals_needed(e.sd, diff, alpha, power), deals_needed(e.sd / math.sqrt(factor), diff, alpha, power))


def power_from_run(run_dir, diff: float, pairs=None, alpha: float = ALPHA, power: float = POWER,
                   **kw) -> list[Power]:
    """Rounds needed for every pair of a run folder (single rounds), from its per-deal sd and
    the variance-reduction factor measured on it (:func:`kc_sim.analysis.variance.run_adjusted`)."""
    from kc_sim.analysis.variance import run_adjusted
    return [power_of(p, diff, alpha, power) for p in run_adjusted(run_dir, pairs, **kw)]


def pilot_power(agents, diff: float, *, players: int = 2, rules: str = "classic", pilot_rounds: int = 20_000,
                seed: int = 0, out=None, jobs: int = 1, alpha: float = ALPHA, power: float = POWER) -> list[Power]:
    """Play a pilot tournament of ``pilot_rounds`` rounds (into ``out``, or a temporary
    folder removed afterwards) and compute the rounds needed from it."""
    import tempfile

    from kc_sim.tournament.run import run_tournament

    if pilot_rounds < 2:
        raise UserError(f"bad --pilot-rounds {pilot_rounds}: expected at least 2")
    if out is not None:
        run_tournament(list(agents), players=players, rounds=pilot_rounds, rules=rules, seed=seed, jobs=jobs,
                       backend="sequential", out=out, quiet=True)
        return power_from_run(out, diff, alpha=alpha, power=power)
    with tempfile.TemporaryDirectory(prefix="kc-sim-pilot-") as tmp:
        run_tournament(list(agents), players=players, rounds=pilot_rounds, rules=rules, seed=seed, jobs=jobs,
                       backend="sequential", out=tmp, quiet=True)
        return power_from_run(tmp, diff, alpha=alpha, power=power)


def format_power(rows: list[Power]) -> str:
    """One line per pair: rounds needed without and with the control variates."""
    if not rows:
        return "no pair"
    r0 = rows[0]
    head = (f"rounds to detect a {100 * r0.diff:g}pp difference in the finishes-ahead rate "
            f"({100 * r0.power:g}% power, two-sided alpha={r0.alpha:g})")
    lines = [head, f"{'pair':28s} {'observed':>9s} {'sd/deal':>8s} {'rounds':>13s} {'with CV':>13s} {'worth':>7s}"]
    for r in rows:
        lines.append(f"{r.a + ' vs ' + r.b:28s} {100 * r.observed:8.2f}% {r.sd:8.4f} {r.rounds:13,d} "
                     f"{r.rounds_cv:13,d} {r.factor:6.2f}x")
    lines.append(f"from {r0.pilot_deals:,} deals ({r0.rounds_per_deal:g} rounds per deal)")
    return "\n".join(lines)
