"""Power: how big a run must be to detect a given difference between two agents.

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

**The run to type.** Every deal of a tournament is played by every line-up in every
seating, so a tournament of ``deals`` deals plays ``deals x line-ups x seatings`` rounds:
that is the ``--rounds`` to pass to the same tournament (the schedule rounds a size up to
whole deals, so exactly this many deals are played). The pair itself sits together in only
some of those rounds (``rounds_together``); sizing a run by those would give it too few
deals (half of them for 4 agents at 3 seats, a tenth for 5 agents at 2 seats).

With the control variates of :mod:`kc_sim.analysis.variance` the variance per deal is
``sd^2 / factor`` (the measured variance-reduction factor, the cost of the estimated
feature expectation included), so the deals needed shrink by that factor.

``sd`` and the factor come from a run folder (:func:`power_from_run`) or from a small
pilot run made here (:func:`pilot_power`): the same agents, seats and rules as the run
to size, so its line-ups and seatings are the run's.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.stats.sequential import parse_share
from kc_sim.stats import t_of, z_of

#: default power and level
POWER = 0.8
ALPHA = 0.05
#: the formula's deals under which the deals are found by simulation, and its runs
SIMULATE_BELOW = 200
SIMULATIONS = 4000
#: what a ``*`` beside the deals means, in the table of ``kc-sim power`` and in the report
SIMULATED_NOTE = (f"*: under {SIMULATE_BELOW} deals, the fewest at which {SIMULATIONS:,} runs resampled from the "
                  "run's per-deal scores found the difference that often (the formula assumes normal scores, "
                  "which short runs are not)")


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
    from kc_sim.stats.intervals import unseen_share

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


def parse_diff(text: str) -> float:
    """A difference in the finishes-ahead rate: ``0.5pp``, ``0.5%`` or ``0.005``; returns
    the fraction (below 50pp)."""
    return parse_share(text, "--diff", 0.5)


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
    """:class:`Power` from a pair's :class:`~kc_sim.analysis.variance.PairAdjusted`: the
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


def power_from_run(run_dir, diff: float, pairs=None, alpha: float = ALPHA, power: float = POWER,
                   **kw) -> list[Power]:
    """Rounds needed for every pair of a run folder (single rounds), from its per-deal sd and
    the variance-reduction factor measured on it (:func:`kc_sim.analysis.variance.run_adjusted`)."""
    from kc_sim.analysis.variance import run_adjusted
    return [power_of(p, diff, alpha, power) for p in run_adjusted(run_dir, pairs, **kw)]


def pilot_power(agents, diff: float, *, players: int | None = None, rules: str = "classic", pilot_rounds: int = 20_000,
                seed: int = 0, out=None, jobs: int = 1, alpha: float = ALPHA, power: float = POWER):
    """Play a pilot tournament of ``pilot_rounds`` rounds (into ``out``, or a temporary
    folder removed afterwards) and compute the deals and rounds needed from it. Returns
    ``(rows, manifest)``: the pilot's manifest names the tournament to size."""
    import tempfile

    from kc_sim.tournament.results import read_manifest
    from kc_sim.tournament.run import run_tournament

    if pilot_rounds < 2:
        raise UserError(f"bad --pilot-rounds {pilot_rounds}: expected at least 2")

    def pilot(folder):
        run_tournament(list(agents), players=players, rounds=pilot_rounds, rules=rules, seed=seed, jobs=jobs,
                       backend="sequential", out=folder, quiet=True)
        return power_from_run(folder, diff, alpha=alpha, power=power), read_manifest(folder)

    if out is not None:
        return pilot(out)
    with tempfile.TemporaryDirectory(prefix="kc-sim-pilot-") as tmp:
        return pilot(tmp)


def run_command(manifest: dict, rounds: int) -> str:
    """``kc-sim tournament`` with the agents, seats, rules and seating of a run's manifest and
    ``--rounds rounds``: the run to type."""
    import shlex

    config = manifest.get("config") or {}
    words = ["kc-sim", "tournament", "--agents", ",".join(config.get("agents") or []),
             "--players", str(config.get("players"))]
    rules = config.get("rules")
    if rules and parse_rules(rules) != parse_rules("classic"):
        words += ["--rules", rules]
    if config.get("seating", "balanced") != "balanced":
        words += ["--seating", config["seating"]]
    return shlex.join(words + ["--rounds", str(rounds)])


def format_power(rows: list[Power], manifest: dict | None = None) -> str:
    """One line per pair: the deals needed and the ``--rounds`` of a whole run of the same
    tournament, without and with the control variates; then the command of a run that
    decides every pair."""
    if not rows:
        return "no pair"
    r0 = rows[0]
    head = (f"deals and --rounds to detect a {100 * r0.diff:g}pp difference in the finishes-ahead rate "
            f"({100 * r0.power:g}% power, two-sided alpha={r0.alpha:g}, t interval clustered by deal)")
    lines = [head, f"{'pair':28s} {'observed':>9s} {'sd/deal':>8s} {'deals':>11s} {'--rounds':>13s} "
             f"{'with CV':>13s} {'worth':>7s}"]
    for r in rows:
        if r.level:
            lines.append(f"{r.a + ' vs ' + r.b:28s} {100 * r.observed:8.2f}% {r.sd:8.4f} {'-':>11s} {'-':>13s} "
                         f"{'-':>13s} {'-':>7s}")
            continue
        deals = f"{r.deals:,d}" + ("*" if r.simulated else "")
        lines.append(f"{r.a + ' vs ' + r.b:28s} {100 * r.observed:8.2f}% {r.sd:8.4f} {deals:>11s} {r.rounds:13,d} "
                     f"{r.rounds_cv:13,d} {r.factor:6.2f}x")
    if any(r.simulated for r in rows):
        lines.append(SIMULATED_NOTE)
    level = [r for r in rows if r.level]
    if level:
        names = "; ".join(f"{r.a} and {r.b}" + (" (they played identically)" if r.observed == 0.5 else "")
                          for r in level)
        lines.append(f"-: {names}: the same finishes-ahead share in every deal, so no spread between deals to size "
                     "a run from; a run of any size tells them apart only through deals where they play differently, "
                     "which this one did not see")
    sized = [r for r in rows if not r.level]
    worst = max(sized, key=lambda r: r.deals) if sized else None
    per_deal = f"{r0.run_rounds_per_deal:g} rounds per deal"
    if manifest is not None:
        sched = manifest.get("schedule") or {}
        n_lu, n_seat = len(sched.get("lineups") or []), len(sched.get("seatings") or [])
        if n_lu and n_seat and n_lu * n_seat == r0.run_rounds_per_deal:
            per_deal = f"{n_lu} line-up{'s' if n_lu != 1 else ''} x {n_seat} seatings = " + per_deal
    lines.append(f"--rounds: of the whole tournament ({per_deal}); the pair sits together in "
                 f"{r0.rounds_per_deal:g} of them")
    if manifest is not None and worst is not None:
        lines.append(f"to decide every pair{' but those' if level else ''} ({worst.deals:,} deals): "
                     f"{run_command(manifest, worst.rounds)}")
    lines.append(f"measured on {r0.pilot_deals:,} deals")
    return "\n".join(lines)
