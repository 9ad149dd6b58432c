"""Power: how big a run must be to detect a given difference between two agents (``kc-sim power``).

The deals needed and the simulation of short runs are :mod:`kc_sim.stats.power`'s; this module
measures what they need on a run folder and prints the answer.

**The run to type.** Every deal of a tournament is played by every line-up in every
seating, so a tournament of ``deals`` deals plays ``deals x line-ups x seatings`` rounds:
that is the ``--rounds`` to pass to the same tournament (the schedule rounds a size up to
whole deals, so exactly this many deals are played). The pair itself sits together in only
some of those rounds (``rounds_together``); sizing a run by those would give it too few
deals (half of them for 4 agents at 3 seats, a tenth for 5 agents at 2 seats).

``sd`` and the variance-reduction factor of the control variates come from a run folder
(:func:`power_from_run`, through :func:`kc_sim.analysis.variance.run_adjusted`) or from a
small pilot run made here (:func:`pilot_power`): the same agents, seats and rules as the run
to size, so its line-ups and seatings are the run's.
"""

from __future__ import annotations

from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.runs import Manifest
from kc_sim.stats.power import (
    ALPHA,
    POWER,
    SIMULATE_BELOW,
    SIMULATIONS,
    Power,
    deals_needed,
    power_of,
    simulated_deals,
    t_power,
    z_power,
)
from kc_sim.stats.sequential import parse_share

__all__ = ["ALPHA", "POWER", "SIMULATED_NOTE", "SIMULATE_BELOW", "SIMULATIONS", "Power", "deals_needed", "format_power",
           "parse_diff", "pilot_power", "power_from_run", "power_of", "run_command", "simulated_deals", "t_power",
           "z_power"]

#: what a ``*`` beside the deals means, in the table of ``kc-sim power`` and in the report
SIMULATED_NOTE = (f"*: under {SIMULATE_BELOW} deals, the fewest at which {SIMULATIONS:,} runs resampled from the "
                  "run's per-deal scores found the difference that often (the formula assumes normal scores, "
                  "which short runs are not)")


def parse_diff(text: str) -> float:
    """A difference in the finishes-ahead rate: ``0.5pp``, ``0.5%`` or ``0.005``; returns
    the fraction (below 50pp)."""
    return parse_share(text, "--diff", 0.5)


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

    from kc_sim.runs import read_manifest
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


def run_command(manifest: Manifest, rounds: int) -> str:
    """``kc-sim tournament`` with the agents, seats, rules and seating of a run's manifest and
    ``--rounds rounds``: the run to type."""
    import shlex

    config = manifest.config
    words = ["kc-sim", "tournament", "--agents", ",".join(config.agents), "--players", str(config.players)]
    if config.rules and parse_rules(config.rules) != parse_rules("classic"):
        words += ["--rules", config.rules]
    if config.seating != "balanced":
        words += ["--seating", config.seating]
    return shlex.join(words + ["--rounds", str(rounds)])


def format_power(rows: list[Power], manifest: Manifest | None = None) -> str:
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
    if manifest is not None and manifest.schedule is not None:
        n_lu, n_seat = len(manifest.schedule.lineups), len(manifest.schedule.seatings)
        if n_lu and n_seat and n_lu * n_seat == r0.run_rounds_per_deal:
            per_deal = f"{n_lu} line-up{'s' if n_lu != 1 else ''} x {n_seat} seatings = " + per_deal
    lines.append(f"--rounds: of the whole tournament ({per_deal}); the pair sits together in "
                 f"{r0.rounds_per_deal:g} of them")
    if manifest is not None and worst is not None:
        lines.append(f"to decide every pair{' but those' if level else ''} ({worst.deals:,} deals): "
                     f"{run_command(manifest, worst.rounds)}")
    lines.append(f"measured on {r0.pilot_deals:,} deals")
    return "\n".join(lines)
