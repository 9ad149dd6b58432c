"""The research sections of the report (issue 12), each computed on the run by the function
that prints it elsewhere, in one more streaming pass:

* **Ratings** (3 or more agents): :func:`kc_sim.analysis.leaderboard.leaderboard` of the run
  folder alone, with the default bootstrap over deals (200 resamples, seed 0, as the
  leaderboard a tournament writes): the pairwise finishes-ahead matrix with intervals, the
  intransitive cycles (or none), Bradley-Terry's goodness of fit and the Nash averaging table.
* **Paired differences and variance reduction** (single rounds): per pair, the mean over
  deals of the per-deal paired score with its interval, the cross-fitted control-variate
  estimate with its interval and the variance-reduction factor
  (:func:`kc_sim.analysis.variance.run_adjusted`), and a sentence stating the factor measured.
* **Power**: rounds needed to detect 0.5pp and 1pp at 80% power, without and with the control
  variates (:func:`kc_sim.stats.power.power_of` on the same estimates: one pass for both).
* **Stopping** (runs with ``--until decided``): the stop reason and each pair's final
  confidence-sequence interval and status, from the manifest's ``stop``.

A section that does not apply is left out (ratings with fewer than 3 agents; paired
differences and power on a run of matches), and :attr:`Research.skipped` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kc_sim.analysis.html import esc, lines_html, table_html
from kc_sim.analysis.power import SIMULATED_NOTE
from kc_sim.analysis.text import digits_for_width, fmt_pct, fmt_pp, fmt_signed
from kc_sim.errors import UserError
from kc_sim.runs import StopInfo
from kc_sim.stats.power import power_of
from kc_sim.stats.run_stats import RunStats

#: the differences the Power section sizes a run for (finishes-ahead rate, fraction)
POWER_DIFFS = (0.005, 0.01)


@dataclass
class Research:
    """What the research sections show, computed once per report by :func:`research`:
    ``ratings`` (the leaderboard DataFrame, its ``attrs["metagame"]`` included, or None),
    ``adjusted`` (:class:`~kc_sim.stats.variates.PairAdjusted` per pair, or None),
    ``power`` (difference -> :class:`~kc_sim.stats.power.Power` per pair), ``stop``
    (the manifest's ``stop`` of an ``--until decided`` run, or None) and ``skipped`` (section
    -> why it is not shown)."""

    ratings: object = None
    bootstrap: int = 0
    adjusted: list | None = None
    power: dict = field(default_factory=dict)
    stop: StopInfo | None = None
    skipped: dict = field(default_factory=dict)


def research(data: RunStats, bootstrap: int | None = None, seed: int = 0, diffs=POWER_DIFFS) -> Research:
    """Compute the research sections of the report of ``data``'s run folder. A section that
    does not apply (fewer than 3 agents for the ratings; a run of matches, which
    :func:`~kc_sim.analysis.variance.run_adjusted` refuses, for the paired differences and
    power) or that its function refuses with a :class:`UserError` is recorded in ``skipped``
    with the reason, never raised: the rest of the report still builds."""
    # lazy: pandas, numba and pyarrow are only needed here
    from kc_sim.analysis.leaderboard import DEFAULT_BOOTSTRAP, leaderboard
    from kc_sim.analysis.variance import run_adjusted

    out = Research()
    seen = data.agents_seen()
    out.bootstrap = DEFAULT_BOOTSTRAP if bootstrap is None else int(bootstrap)
    if len(seen) >= 3:
        try:
            out.ratings = leaderboard([data.path], bootstrap=out.bootstrap, seed=seed)
        except UserError as e:
            out.skipped["ratings"] = str(e)
    else:
        out.skipped["ratings"] = f"{len(seen)} agents: a rating table needs 3 or more (see Head-to-head)"
    if len(seen) < 2:
        out.skipped["paired"] = "fewer than 2 agents: no pair to compare"
    elif data.n_matches is not None:
        out.skipped["paired"] = ("a run of matches; the per-deal paired score, its control variates and the "
                                 "power need a run of single rounds: kc-sim tournament --rounds")
    else:
        try:
            out.adjusted = run_adjusted(data.path)
            out.power = {d: [power_of(p, d) for p in out.adjusted] for d in diffs}
        except UserError as e:
            out.skipped["paired"] = str(e)
    man = data.manifest
    if man is not None and man.stop is not None and man.config.until is not None:
        out.stop = man.stop
    return out


def pairwise_table(df):
    """The pairwise finishes-ahead matrix of a leaderboard (rows and columns in rating
    order): the row agent's share against the column agent with its 95% interval (two
    decimals: large runs resolve tenths of a point), ``*``
    where the interval excludes 50%, ``.`` where they never met."""
    from kc_sim.analysis.leaderboard import excludes_half  # lazy: as in research()

    meta = df.attrs["metagame"]
    agents = df["agent"].astype(str).tolist()
    cell = {(r.agent, r.opponent): r for r in meta.pairs.itertuples(index=False)}
    header = ["agent"] + [f"vs {b}" for b in agents]
    rows = []
    for a in agents:
        row = [a]
        for b in agents:
            r = cell.get((a, b))
            row.append("-" if a == b else "." if r is None else
                       fmt_pct(r.share, r.share_lo, r.share_hi, digits=2)
                       + (" *" if excludes_half(r.share_lo, r.share_hi) else ""))
        rows.append(row)
    return header, rows


def ratings_table(df):
    """Bradley-Terry rating and Nash averaging per agent, best first."""
    header = ["#", "agent", "BT rating (Elo scale) [95% CI]", "beats next", "finishes ahead", "Nash weight",
              "Nash rating, pp [95% CI]", "in the Nash support (share of resamples)"]
    rows = []
    k = digits_for_width(df["nash_rating_lo"], df["nash_rating_hi"], least=2)
    for r in df.itertuples(index=False):
        if math.isnan(r.nash_rating):
            nash = "-"
        elif r.nash_rating_lo == r.nash_rating_hi == 0.0:     # 0 in every resample: the support share says it
            nash = fmt_pp(r.nash_rating, digits=k)
        else:
            nash = fmt_pp(r.nash_rating, r.nash_rating_lo, r.nash_rating_hi, digits=k)
        support = getattr(r, "nash_support", math.nan)
        rows.append([int(r.rank), r.agent, fmt_signed(r.rating, r.rating_lo, r.rating_hi, digits=1),
                     fmt_pct(r.p_vs_next), fmt_pct(r.score_rate, digits=2),
                     fmt_pct(r.nash_weight), nash, fmt_pct(support, digits=0)])
    return header, rows


def cycles_lines(df) -> list[str]:
    """One line per intransitive cycle (at most
    :data:`~kc_sim.analysis.leaderboard.SHOW_CYCLES`, then a count), or the single line "none ..."."""
    from kc_sim.analysis.leaderboard import CYCLES_FILE, SHOW_CYCLES  # lazy: as in research()

    cycles = df.attrs["metagame"].cycles
    if len(cycles) == 0:
        return ["none: no agents beat each other in a ring (a > b > c > a)"]
    sig = int(cycles["significant"].sum())
    lines = [f"{len(cycles)} cycle{'s' if len(cycles) != 1 else ''}, {sig} significant "
             "(every step's 95% interval above 50%); each agent finishes ahead of the next:"]
    for r in cycles.head(SHOW_CYCLES).itertuples(index=False):
        steps = ", ".join(f"{100 * s:.1f}% (lower end {100 * lo:.1f}%)" for s, lo in zip(r.shares, r.share_lo))
        support = "" if math.isnan(r.support) else f"; bootstrap support {100 * r.support:.0f}%"
        lines.append(f"{r.cycle}: {steps}; {'SIGNIFICANT' if r.significant else 'not significant'}{support}")
    if len(cycles) > SHOW_CYCLES:
        lines.append(f"... {len(cycles) - SHOW_CYCLES} more (kc-sim leaderboard RUN_DIR writes them all to "
                     f"{CYCLES_FILE})")
    return lines


def paired_table(adjusted):
    """Per pair: deals, rounds per deal, the mean per-deal paired score with its interval,
    the control-variate adjusted one with its interval, R^2 and the factor."""
    header = ["agent A", "agent B", "deals", "rounds per deal", "A finishes ahead, per deal [95% CI]",
              "adjusted by control variates [95% CI]", "R\u00b2 (cross-fitted)", "worth"]
    rows = []
    for p in adjusted:
        e = p.est
        if e.sd == 0:           # level in every deal: no spread, nothing for the control variates to remove
            rows.append([p.a, p.b, f"{e.deals:,}", f"{p.rounds_per_deal:g}",
                         f"{fmt_pct(e.mean, digits=2)} in every deal (they played identically)"
                         if e.mean == 0.5 else f"{fmt_pct(e.mean, digits=2)} in every deal", "-", "-", "-"])
            continue
        rows.append([p.a, p.b, f"{e.deals:,}", f"{p.rounds_per_deal:g}", fmt_pct(e.mean, *e.interval(adjusted=False),
                                                                              digits=2),
                     fmt_pct(e.adj, *e.interval(), digits=2), f"{e.r2:.3f}", f"{e.factor:.2f}x rounds"])
    return header, rows


def variance_sentence(adjusted) -> str:
    """The one honest sentence under the paired table: the range of the factor measured on
    this run, and why it is what it is (pairs level in every deal have no spread to reduce and
    are left out)."""
    varied = [p for p in adjusted if p.est.sd > 0]
    if not varied:
        return ("Every pair was level in every deal of this run (agents that play alike): there is no spread "
                "between deals for the control variates to reduce.")
    f = [p.est.factor for p in varied]
    r2 = [p.est.r2 for p in varied]
    span = f"{min(f):.2f}x" if f"{min(f):.2f}" == f"{max(f):.2f}" else f"{min(f):.2f}x to {max(f):.2f}x"
    r2s = f"{max(r2):.3f}" if f"{min(r2):.3f}" == f"{max(r2):.3f}" else f"{min(r2):.3f} to {max(r2):.3f}"
    text = (f"Measured on this run: the control variates are worth {span} the rounds (cross-fitted R\u00b2 {r2s}). ")
    if max(f) < 1.05:
        text += ("Every deal is already played in every seating of the schedule, so what the pre-play features "
                 "of the deal (kings and fitting cards in each hand, seat position) predict cancels within the "
                 "deal: they explain almost nothing of the paired score that is left, and the adjusted estimate "
                 "is no better than the plain one.")
        if min(f) < 1.0:
            text += (" A factor below 1.00x is the noise of fitting the adjustment on a finite run; use the "
                     "unadjusted figure then.")
    else:
        text += "The adjusted interval is correspondingly narrower; it stays unbiased (cross-fitted)."
    return text


def power_table(power: dict):
    """One row per pair and difference: the deals needed to detect that difference at 80%
    power, as the ``--rounds`` of a whole run of this schedule (all its line-ups and
    seatings: what to pass to the same tournament) and as rounds in which the pair sits
    together, without and with the control variates."""
    header = ["agent A", "agent B", "observed", "sd per deal", "to detect", "deals", "--rounds of a run like this",
              "with control variates", "of them with the pair together"]
    rows = []
    for d in sorted(power):
        for p in power[d]:
            if p.level:         # no spread between deals to size a run from (kc_sim.stats.power.Power.level)
                rows.append([p.a, p.b, fmt_pct(p.observed, digits=2), f"{p.sd:.4f}", f"{100 * d:g}pp",
                             "- (level in every deal)", "-", "-", "-"])
                continue
            rows.append([p.a, p.b, fmt_pct(p.observed, digits=2), f"{p.sd:.4f}", f"{100 * d:g}pp",
                         f"{p.deals:,}" + ("*" if p.simulated else ""),
                         f"{p.rounds:,}", f"{p.rounds_cv:,}", f"{p.rounds_together:,}"])
    return header, rows


def stop_table(stop: StopInfo):
    """Each pair's final anytime-valid interval and status when the run stopped."""
    header = ["agent A", "agent B", "deals", "A finishes ahead [confidence sequence]", "status"]
    rows = [[p.agents[0], p.agents[1], f"{p.deals:,}", fmt_pct(p.mean, p.lo, p.hi, digits=2), p.status]
            for p in stop.pairs]
    return header, rows



def research_html(data: RunStats, res: Research) -> list[str]:
    """The HTML of the research sections that apply (see the module doc)."""
    from kc_sim.analysis.leaderboard import format_fit  # lazy: as in research()

    parts: list[str] = []
    df = res.ratings
    if df is not None:
        how = df["interval"].iloc[0]
        parts += ["<h2>Ratings</h2>",
                  '<p class="note">From <code>kc-sim leaderboard</code> on this run folder alone: every pair of '
                  "seats of every round is a comparison, won by the lower penalty (ties half). Intervals: "
                  + esc(f"bootstrap over deals, {res.bootstrap} resamples: the estimate ± Student's t times their "
                         "standard deviation (the leaderboard files a tournament of 3 or more agents writes hold the "
                         "same numbers)" if how == "bootstrap"
                         else "clustered by deal (ratings: the sandwich covariance; shares)") + "; "
                  "* marks a share whose 95% interval excludes 50%.</p>",
                  "<h3>Pairwise: the row agent finishes ahead of the column agent</h3>",
                  table_html(*pairwise_table(df)),
                  "<h3>Intransitive cycles</h3>", lines_html(cycles_lines(df)),
                  "<h3>Bradley-Terry and Nash averaging</h3>",
                  f'<p id="bt-fit">{esc(format_fit(df.attrs["metagame"].fit))}</p>',
                  table_html(*ratings_table(df), left=2),
                  '<p class="note">BT rating: Bradley-Terry strength on the Elo scale, mean agent 0. Nash '
                  "averaging: the maximum-entropy Nash mixture of the meta-game with payoff share - 50%; an "
                  "agent's Nash rating is its payoff against that mixture (0 in the support, negative off it), "
                  "and does not move when a copy of another agent is added.</p>"]
    if res.adjusted:
        parts += ["<h2>Paired differences and variance reduction</h2>",
                  '<p class="note">The observation is the deal: the share of the deal\'s rounds in which A '
                  "finishes ahead of B (lower penalty, ties half), averaged over deals, which are independent; "
                  "95% intervals on Student's t (deals minus one). Adjusted: cross-fitted control variates from what is known before play "
                  "(kings and fitting cards in each hand, seat position), unbiased whatever the fit; worth: the "
                  "variance-reduction factor, how many times the rounds the plain estimate would need to be "
                  "as precise.</p>",
                  table_html(*paired_table(res.adjusted), left=2),
                  f'<p id="variance-sentence">{esc(variance_sentence(res.adjusted))}</p>']
        if res.power:
            p0 = next(iter(res.power.values()))[0]
            rpd = p0.run_rounds_per_deal
            parts += ["<h2>Power</h2>",
                      f'<p class="note">Deals needed to detect a difference of the finishes-ahead rate from 50% '
                      f"at {100 * p0.power:g}% power (two-sided t test at {p0.alpha:g} on the per-deal paired "
                      "score, the interval the summary prints), from the per-deal standard deviation measured on "
                      "this run; with control variates the variance per deal is divided by the factor above. "
                      f"--rounds: the size to give the same tournament, which plays {esc(f'{rpd:g}')} rounds per "
                      "deal (every line-up in every seating); the pair sits together in the last column's "
                      f"rounds of them. {esc(SIMULATED_NOTE)}.</p>",
                      table_html(*power_table(res.power), left=2)]
    if res.stop is not None:
        until = data.manifest.config.until
        prec = until.precision
        parts += ["<h2>Stopping</h2>",
                  f'<p class="note">--until decided (alpha {esc(until.alpha)}'
                  + (f", precision {esc(f'{100 * prec:g}pp')}" if prec else ", no precision") +
                  f"): checked after each block of deals in chunk order; stopped after "
                  f"{res.stop.deals:,} deals ({res.stop.blocks:,} blocks).</p>",
                  f'<p id="stop-reason"><b>Why it stopped:</b> {esc(res.stop.reason or "-")}</p>',
                  table_html(*stop_table(res.stop), left=2),
                  '<p class="note">The intervals here are anytime-valid confidence sequences: valid at whatever '
                  "deal the run stopped, so wider than a fixed-size interval. The fixed-size intervals of the other "
                  "sections are not guaranteed at 95% after a stop chosen by the data; these are. status: "
                  "separated (excludes 50%), precise (half-width below the precision) or open.</p>"]
    return parts
