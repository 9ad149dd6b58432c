"""The ``stopping`` comparison: how early stopping (``until = "decided"``) behaves, repeat by repeat.

Every run of a stopping experiment stops early (:mod:`kc_sim.tournament.stopping`); a run
with ``repeat = N`` is played N times with consecutive seeds. Per run (its repeats together)
the findings report:

* **the stops**: how many repeats stopped because a pair *separated* (its confidence
  sequence excluded 0.5), because every pair was *precise* (half-width at most
  ``precision``), or at the *maximum size*; and the rounds each repeat used (median, min, max).
* **A/A runs** (agents known to be equal, e.g. ``random:1`` vs ``random:2``: every pair's true
  score is 0.5): a repeat whose stop has any pair "separated" is a *false decision*. The
  false-decision rate is the share of such repeats with its Wilson 95% interval; the verdict
  is "within alpha" when the rate is at most ``alpha``, else "above alpha". The confidence
  sequence promises a rate of at most ``alpha``.
* **runs with a real difference**: the rounds used against (a) a fixed-size run whose
  classical normal interval, at the same level ``alpha / P``, has the stopped run's final
  half-width (:func:`kc_sim.stats.sequential.fixed_n_for_halfwidth` with the per-deal sd of the
  run's scores), and (b) the default fixed-size run of
  :data:`kc_sim.tournament.plan.DEFAULT_ROUNDS` rounds, with the half-width that run would
  give; and whether stopping saved or cost rounds against each. A fixed-size run is planned
  before the data, so (a) is a run one could only size knowing the answer; it shows the price
  of looking after every block (the anytime-valid interval is about 2.2x as wide as the
  normal one at the same size).

The stop of a repeat is read from its manifest (its ``stop``). The per-deal sd is
recomputed by replaying the stopping rule over the repeat's stored parts, block by block in
chunk-index order as the run took them (:func:`replay`: one block in memory at a time), which
also checks that the parts give the interval the manifest recorded.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kc_sim.analysis.experiments.schema import RunSpec
from kc_sim.analysis.experiments.tables import md_table
from kc_sim.analysis.text import fmt_num, fmt_pct
from kc_sim.errors import UserError
from kc_sim.stats import wilson_scalar
from kc_sim.runs import PairStop, RunReader, read_manifest
from kc_sim.runs.manifest import DEFAULT_ALPHA
from kc_sim.stats.sequential import fixed_n_for_halfwidth, normal_quantile_two_sided
from kc_sim.tournament.plan import DEFAULT_ROUNDS
from kc_sim.tournament.stopping import Stopper

#: the stop kinds, in table order
STOP_KINDS = ("separated", "precise", "separated + precise", "maximum size")


@dataclass(frozen=True)
class Stop:
    """The stop of one run folder, from its manifest."""

    folder: Path
    seed: int
    rounds: int                 # rounds the run kept (the blocks up to the stop)
    deals: int                  # deals the stopping rule saw
    reason: str                 # the one-line reason of the run's last line
    kind: str                   # one of STOP_KINDS
    pairs: tuple[PairStop, ...]  # each pair at the stop: agents, deals, mean, lo, hi, status
    alpha: float
    precision: float | None

    @property
    def separated(self) -> bool:
        """Whether any pair was declared separated (for an A/A run: a false decision)."""
        return any(p.status == "separated" for p in self.pairs)

    @property
    def alpha_pair(self) -> float:
        """The level of each pair's sequence (Bonferroni over the pairs)."""
        return self.alpha / max(1, len(self.pairs))

    @property
    def rounds_per_deal(self) -> float:
        return self.rounds / self.deals if self.deals else math.nan


def read_stop(folder, seed: int | None = None) -> Stop:
    """The :class:`Stop` of a finished run folder played with ``until``."""
    folder = Path(folder)
    m = read_manifest(folder)
    stop, until = m.stop, m.config.until
    if stop is None or until is None:
        raise UserError(f"{folder}: the run has no early stop recorded (played without until, or not finished)")
    statuses = {p.status for p in stop.pairs}
    if stop.reason.startswith("maximum size"):
        kind = "maximum size"
    elif statuses == {"separated"}:
        kind = "separated"
    elif statuses == {"precise"}:
        kind = "precise"
    else:
        kind = "separated + precise"
    rounds = m.rounds if m.rounds is not None else m.units_done
    return Stop(folder, m.config.seed if seed is None else seed, rounds, stop.deals, stop.reason, kind, stop.pairs,
                until.alpha, until.precision)


@dataclass(frozen=True)
class PairReplay:
    """One pair's confidence sequence recomputed from a run's parts."""

    agents: tuple[str, str]
    deals: int
    mean: float
    lo: float
    hi: float
    sd: float                   # sample sd of the per-deal scores

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2


def replay(folder) -> list[PairReplay]:
    """The stopping rule of :mod:`kc_sim.tournament.stopping` fed again with the stored
    parts of a run, block by block in chunk-index order (block ``b`` = chunks ``b L ..
    b L + L - 1`` for ``L`` line-ups), exactly as the run fed it
    (:meth:`~kc_sim.tournament.stopping.Stopper.of_run`); one block is read at a time, so
    memory does not grow with the run. Returns every meeting pair's sequence."""
    reader = RunReader(folder)
    stopper = Stopper.of_run(reader)
    done = {c.index for c in reader.manifest.done_chunks()}
    stopper.advance(done.__contains__)
    rule, labels = stopper.rule, stopper.labels
    out = []
    for (a, b), cs in zip(rule.pairs, rule.sequences):
        mean, lo, hi = cs.interval()
        out.append(PairReplay((labels[a], labels[b]), cs.n, mean, lo, hi, cs.sd))
    return out


# --- one run (its repeats together) ----------------------------------------------------

def _spread(values) -> str:
    """``median [min, max]`` of whole numbers, or ``-``."""
    v = np.asarray([x for x in values if not math.isnan(x)], dtype=np.float64)
    if not v.size:
        return "-"
    return f"{np.median(v):,.0f} [{v.min():,.0f}, {v.max():,.0f}]"


def _stops_text(stops) -> str:
    counts = Counter(s.kind for s in stops)
    return ", ".join(f"{counts[k]:,} {k}" for k in STOP_KINDS if counts[k])


def _mean_of_repeats(values) -> tuple[float, float, float]:
    """Mean of the repeats' scores with a normal 95% interval over the repeats."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return (float(v.mean()) if v.size else math.nan), math.nan, math.nan
    half = 1.959963984540054 * v.std(ddof=1) / math.sqrt(v.size)
    return float(v.mean()), float(v.mean() - half), float(v.mean() + half)


def false_decisions(stops, alpha: float) -> dict:
    """A/A repeats: ``{"n", "false", "rate", "lo", "hi", "verdict"}``: the share of repeats
    whose stop declared a pair separated, with its Wilson 95% interval; "within alpha" when
    the rate is at most ``alpha``."""
    n, k = len(stops), sum(s.separated for s in stops)
    lo, hi = wilson_scalar(k, n)
    rate = k / n if n else math.nan
    return {"n": n, "false": k, "rate": rate, "lo": lo, "hi": hi,
            "verdict": "within alpha" if rate <= alpha else "above alpha"}


@dataclass(frozen=True)
class Compared:
    """A repeat with a real difference, against the fixed-size runs (see the module docstring)."""

    stop: Stop
    pairs: tuple[PairReplay, ...]
    fixed_rounds: float         # (a): rounds of the fixed-size run with the same final half-widths
    default_halfwidth: float    # (b): the largest half-width of the default fixed-size run
    consistent: bool            # the parts replay to the interval the manifest recorded


def compare_fixed(stop: Stop) -> Compared:
    """(a) and (b) of the module docstring for one repeat: the fixed-size run must reach
    every pair's final half-width, so its size is the largest over the pairs."""
    pairs = replay(stop.folder)
    rpd = stop.rounds_per_deal
    z = normal_quantile_two_sided(stop.alpha_pair)
    fixed, default_hw = [], []
    for p in pairs:
        ok = p.deals >= 2 and math.isfinite(p.sd) and p.half_width > 0
        fixed.append(fixed_n_for_halfwidth(p.sd, p.half_width, stop.alpha_pair) * rpd if ok else math.nan)
        default_hw.append(z * p.sd / math.sqrt(DEFAULT_ROUNDS / rpd) if ok else math.nan)
    recorded = {p.agents: p for p in stop.pairs}
    consistent = all(
        tuple(p.agents) in recorded and recorded[tuple(p.agents)].deals == p.deals
        and abs(recorded[tuple(p.agents)].lo - p.lo) < 1e-9 and abs(recorded[tuple(p.agents)].hi - p.hi) < 1e-9
        for p in pairs)
    return Compared(stop, tuple(pairs), max(fixed) if fixed else math.nan,
                    max(default_hw) if default_hw else math.nan, consistent)


def saved_or_cost(used: float, fixed: float) -> str:
    """``saved 42%`` / ``cost 3.1x the rounds`` / ``-``: stopping's ``used`` rounds against a
    fixed-size run of ``fixed`` rounds (both summed over the repeats)."""
    if not (math.isfinite(used) and math.isfinite(fixed)) or fixed <= 0:
        return "-"
    if used <= fixed:
        return f"saved {1 - used / fixed:.0%}"
    return f"cost {used / fixed:.1f}x the rounds"


# --- the section --------------------------------------------------------------------------

def _stops_of(spec: RunSpec, folder: Path) -> list[Stop]:
    return [read_stop(f, seed) for f, seed in spec.folders(folder)]


def stopping_runs_table(specs, run_dirs: dict, out: Path) -> str:
    """The ``## Runs`` table of a stopping experiment (from the specs, nothing is read)."""
    rows = []
    for s in specs:
        folder = run_dirs[s.name]
        try:
            rel = folder.resolve().relative_to(Path(out).resolve().parent)
        except ValueError:
            rel = folder
        n = s.repeat or 1
        rule = f"until {s.until}, alpha {s.alpha if s.alpha is not None else DEFAULT_ALPHA:g}"
        rule += f", precision {100 * s.precision:g} pp" if s.precision is not None else ", no precision"
        seeds = f"{s.seed}" if n == 1 else f"{s.seed} .. {s.seed + n - 1}"
        where = f"`{rel.as_posix()}`" if s.repeat is None else f"`{rel.as_posix()}/r000` .. `r{n - 1:03d}`"
        rows.append([s.name, ", ".join(s.agents), s.players or min(len(s.agents), 4), s.rules, rule,
                     f"{s.count:,}", f"{n:,}", seeds, where])
    return md_table(["run", "agents", "players", "rules", "stopping", "max rounds", "repeats", "seeds", "folder"], rows)


def stopping_section(exp, specs, run_dirs: dict):
    """The results and summary of a stopping experiment: ``(body lines, summary sentences)``."""
    body, summary = [], []
    aa_rows, diff_rows, single = [], [], []
    for s in specs:
        stops = _stops_of(s, run_dirs[s.name])
        alpha = stops[0].alpha
        rounds = [st.rounds for st in stops]
        agents = ", ".join(s.agents)
        if s.repeat is None:
            single.append([s.name, stops[0].reason])
        if s.name in exp.aa:
            f = false_decisions(stops, alpha)
            mean = _mean_of_repeats([p.mean for st in stops for p in st.pairs])
            aa_rows.append([s.name, agents, f"{f['n']:,}", f"{alpha:g}", _stops_text(stops), f"{f['false']:,}",
                            fmt_pct(f["rate"], f["lo"], f["hi"], digits=2), f["verdict"], _spread(rounds),
                            fmt_num(*mean, digits=4)])
            summary.append(
                f"{s.name} (A/A: {agents}, {f['n']:,} repeat{'s' if f['n'] != 1 else ''}, alpha {alpha:g}): {f['false']:,} of {f['n']:,} "
                f"repeats stopped on a false \"separated\" decision, a rate of "
                f"{fmt_pct(f['rate'], f['lo'], f['hi'], digits=2)}: {f['verdict']} ({alpha:.0%}). Each repeat used "
                f"{_spread(rounds)} rounds (median [min, max]); stops: {_stops_text(stops)}.")
            continue
        compared = [compare_fixed(st) for st in stops]
        used = float(sum(rounds))
        fixed_a = float(sum(c.fixed_rounds for c in compared))
        fixed_b = float(DEFAULT_ROUNDS * len(stops))
        inconsistent = sum(not c.consistent for c in compared)
        for p_index, pair in enumerate(compared[0].pairs):
            a, b = pair.agents
            scores = [c.pairs[p_index].mean for c in compared]
            ahead = [c.stop.pairs[p_index].status == "separated" for c in compared]
            a_ahead = sum(x and c.pairs[p_index].mean > 0.5 for x, c in zip(ahead, compared))
            b_ahead = sum(x and c.pairs[p_index].mean < 0.5 for x, c in zip(ahead, compared))
            hw = [c.pairs[p_index].half_width for c in compared]
            sd = [c.pairs[p_index].sd for c in compared]
            diff_rows.append([
                s.name, f"{a} vs {b}", f"{len(stops):,}", _stops_text(stops),
                f"{a_ahead:,} / {b_ahead:,} / {len(stops) - a_ahead - b_ahead:,}",
                fmt_num(*_mean_of_repeats(scores), digits=4), _spread(rounds),
                f"{100 * float(np.median(hw)):.2f} pp", fmt_num(float(np.nanmedian(sd)), digits=3),
                _spread([c.fixed_rounds for c in compared]), saved_or_cost(used, fixed_a),
                f"{100 * float(np.nanmedian([c.default_halfwidth for c in compared])):.2f} pp",
                saved_or_cost(used, fixed_b)])
        worded_a = saved_or_cost(used, fixed_a)
        worded_b = saved_or_cost(used, fixed_b)
        summary.append(
            f"{s.name} ({agents}, {len(stops):,} repeat{'s' if len(stops) != 1 else ''}): stops: {_stops_text(stops)}; each repeat used "
            f"{_spread(rounds)} rounds (median [min, max]), {used:,.0f} in all. A fixed-size run sized to reach the "
            f"same final half-width with a normal interval would need {_spread([c.fixed_rounds for c in compared])} "
            f"rounds ({fixed_a:,.0f} in all): against it stopping {_plain(worded_a)}. Against the default "
            f"fixed-size run of {DEFAULT_ROUNDS:,} rounds per repeat ({fixed_b:,.0f} in all), stopping "
            f"{_plain(worded_b)}."
            + (f" {inconsistent} repeat(s) do not replay to the interval their manifest recorded." if inconsistent
               else ""))
    if aa_rows:
        body += ["### A/A runs: false decisions", "",
                 "Both agents are the same policy, so every pair's true score is 0.5 and a stop that declares a pair "
                 "\"separated\" is false. The confidence sequence promises a false-decision rate of at most alpha. "
                 "Rate: share of repeats with a false decision, Wilson 95% interval. Rounds used: median [min, max] "
                 "over the repeats. Mean score: mean of the repeats' finishes-ahead scores (0.5 expected), normal "
                 "95% interval over the repeats.", "",
                 md_table(["run", "agents", "repeats", "alpha", "stops", "false decisions",
                           "false-decision rate [95%]", "verdict", "rounds used", "mean score"], aa_rows), ""]
    if diff_rows:
        body += ["### Runs with a difference: rounds used against fixed-size runs", "",
                 "A/B/undecided: repeats that separated with A ahead, with B ahead, and that did not separate. "
                 "Final half-width and per-deal sd: medians over the repeats (the sd recomputed from the parts). "
                 "(a) a fixed-size run whose normal interval at the same level has the stopped run's final "
                 "half-width (rounds: median [min, max]); only sizeable knowing the answer, it shows the price of "
                 "looking after every block. (b) the default fixed-size run of "
                 f"{DEFAULT_ROUNDS:,} rounds and the half-width its normal interval would have. Saved / cost: the "
                 "rounds stopping used against that run, summed over the repeats.", "",
                 md_table(["run", "pair (A vs B)", "repeats", "stops", "A / B / undecided", "score (mean of repeats)",
                           "rounds used", "final half-width", "per-deal sd", "(a) fixed, same half-width: rounds",
                           "stopping vs (a)", f"(b) {DEFAULT_ROUNDS:,} rounds: half-width", "stopping vs (b)"],
                          diff_rows), ""]
    if single:
        body += ["### Why each single run stopped", "", md_table(["run", "stop"], single), ""]
    return body[:-1] if body and body[-1] == "" else body, summary


def _plain(worded: str) -> str:
    """``saved 42%`` -> ``saved 42% of the rounds``; ``cost 3.1x the rounds`` stays."""
    if worded.startswith("saved"):
        return worded + " of the rounds"
    if worded.startswith("cost"):
        return "cost " + worded[len("cost "):]
    return "cannot be compared (too few deals)"
