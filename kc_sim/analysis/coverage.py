"""The coverage study: do kc-sim's 95% intervals cover the truth 95% of the time?

Many tournaments are simulated whose truth is known, each is summarised by kc-sim's own code
(the workers' :class:`~kc_sim.stats.Tally` and its summary, the scan's
:class:`~kc_sim.stats.run_stats.RunStats`, the leaderboard), and for every kind of interval
kc-sim prints the share of intervals that contain the truth is counted. With ``runs``
simulated tournaments per cell the binomial standard error around 95% is
``sqrt(0.95 * 0.05 / runs)`` (0.49pp at 2,000 runs), so a kind is judged against the band
93.5-96.5% only with 2,000 runs or more.

**The synthetic tournament** (:class:`~kc_sim.analysis.coverage_model.Model`: its rules, the
figures kc-sim computes of a simulated run and their truth are in
:mod:`kc_sim.analysis.coverage_model`) has the structure of a real one: every line-up of ``k``
agents, every seating, and every deal played by all of them.

**The truth** of every figure is its expectation under the model, computed once by Monte
Carlo over many more deals (``truth_deals``; its error is a few percent of the narrowest
interval studied), and exactly where symmetry gives it (self-play). Where a run's interval
depends on a few counts (identical agents, rare events on 20-50 deals), the runs' bounds sit
on a few values, and a truth that crosses one moves the whole cell: the published study
takes the truth on 1,000,000 deals (results/README.md section 10). Ratings are judged
against the Bradley-Terry fit of the truth's comparisons.

**Scenarios**: ``self-play`` (all agents equal, stochastic), ``difference`` (agents of known
unequal strength), ``identical`` (equal and deterministic: every pairwise figure is the same
in every deal, its interval has zero width at the exact truth; such intervals are counted
apart as ``exact``, not as covering). **Real agents** (:func:`real_cell`): tournaments played by
the workers' own code, against one large run on another seed; such a cell is also kept agent
by agent and pair by pair (:func:`key_tables`), with the share of deals in which each pair's
penalties differ: two agents that play alike in all but a few deals (greedy and king-first)
hold the truth in every run, and pooled with the other pairs they lift a paired kind by
0.6-0.8pp.

``experiments/interval_coverage.py`` runs the full study and writes its table;
``tests/analysis/test_coverage.py`` runs a small one.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from kc_sim.analysis.coverage_model import (
    AGENTS,
    KINDS,
    SCENARIOS,
    Model,
    comparisons_of,
    intervals,
    labels,
    scan_of,
    tally_of,
    tally_truth,
    truth,
)
from kc_sim.stats import Tally
from kc_sim.stats.intervals import no_variation
from kc_sim.stats.sums import MAX_BATCHES

__all__ = ["AGENTS", "ALIKE", "KINDS", "SCENARIOS", "Cell", "Model", "band", "comparisons_of", "differ_shares",
           "intervals", "key_tables", "labels", "power_check", "real_cell", "real_tally", "run_cell", "scan_of",
           "table", "tally_intervals", "tally_of", "tally_truth", "truth"]


# --- the study ---------------------------------------------------------------------------------

@dataclass
class Cell:
    """One cell of the study: a model, a number of deals, and the counts per kind."""

    scenario: str
    players: int
    deals: int
    runs: int = 0
    covered: dict = field(default_factory=dict)     # kind -> intervals containing the truth
    total: dict = field(default_factory=dict)       # kind -> intervals (zero-width exact ones left out)
    exact: dict = field(default_factory=dict)       # kind -> zero-width intervals at the exact truth
    width: dict = field(default_factory=dict)       # kind -> sum of widths
    by_key: dict = field(default_factory=dict)      # kind -> {str(key): [intervals, containing the truth]}
    differ: dict = field(default_factory=dict)      # str((a, b)) -> share of deals the pair's penalties differ

    def add(self, got: dict, true: dict) -> None:
        for kind, per_key in got.items():
            for key, ci in per_key.items():
                v, lo, hi = ci
                tv = true[kind][key]
                if math.isnan(lo):
                    continue
                if no_variation(ci) and abs(v - tv) < 1e-12:
                    self.exact[kind] = self.exact.get(kind, 0) + 1
                    continue
                hit = int(lo <= tv <= hi)
                self.total[kind] = self.total.get(kind, 0) + 1
                self.covered[kind] = self.covered.get(kind, 0) + hit
                self.width[kind] = self.width.get(kind, 0.0) + (hi - lo)
                counts = self.by_key.setdefault(kind, {}).setdefault(str(key), [0, 0])
                counts[0] += 1
                counts[1] += hit

    def coverage(self, kind: str) -> float:
        return self.covered.get(kind, 0) / self.total[kind] if self.total.get(kind) else math.nan


def run_cell(scenario: str, players: int, deals: int, runs: int, *, true: dict | None = None, bootstrap: int = 0,
             matches: bool = True, seed: int = 0, truth_deals: int = 200_000) -> Cell:
    """``runs`` simulated tournaments of ``deals`` deals, each summarised by kc-sim and checked
    against the truth."""
    model = Model.scenario(scenario, players)
    true = true if true is not None else truth(model, truth_deals)
    cell = Cell(scenario, players, deals)
    rng = np.random.default_rng([seed, players, deals, SCENARIOS.index(scenario)])
    for i in range(runs):
        r = model.rounds(rng, deals)
        m = model.matches(rng, deals) if matches else None
        cell.add(intervals(model, r, m, bootstrap=bootstrap, seed=i), true)
        cell.runs += 1
    return cell


def band(runs: int, level: float = 0.95, sigmas: float = 3.0) -> tuple[float, float]:
    """The coverage a correct 95% interval shows in ``runs`` runs, within ``sigmas`` binomial
    standard errors (one interval per run: pooling keys of one run only narrows it)."""
    se = math.sqrt(level * (1 - level) / runs)
    return level - sigmas * se, level + sigmas * se


def table(cells: list[Cell]) -> str:
    """The coverage table (markdown): one row per kind, one column per cell."""
    head = "| interval kind | printed by | " + " | ".join(
        f"{c.players}p {c.scenario} {c.deals} deals" for c in cells) + " |"
    lines = [head, "|---|---|" + "---|" * len(cells)]
    for kind, what, where in KINDS:
        cells_txt = []
        for c in cells:
            cov = c.coverage(kind)
            if math.isnan(cov):
                cells_txt.append("exact" if c.exact.get(kind) else "-")
            else:
                cells_txt.append(f"{100 * cov:.1f}%" + (" (+exact)" if c.exact.get(kind) else ""))
        if any(x != "-" for x in cells_txt):
            lines.append(f"| {what} | {where} | " + " | ".join(cells_txt) + " |")
    lines.append("| runs per cell | | " + " | ".join(f"{c.runs:,}" for c in cells) + " |")
    return "\n".join(lines)


# --- real agents -----------------------------------------------------------------------------

def real_tally(agents, players: int, deals: int, seed: int, rules: str = "classic", start: int = 0,
               width_deals: int | None = None) -> tuple[Tally, list[str]]:
    """The tally of a real tournament of ``agents`` on deals ``start .. start + deals`` of run
    seed ``seed``, made by the workers' own code (:func:`kc_sim.tournament.worker.run_chunk`,
    one chunk per line-up), without a run folder. Returns (tally, labels)."""
    from kc_sim.tournament.options import TournamentOptions
    from kc_sim.tournament.plan import make_plan
    from kc_sim.tournament.worker import ChunkTask, RunSetup, run_chunk

    plan = make_plan(TournamentOptions.create(list(agents), players=players, rounds=1, rules=rules, seed=seed,
                                              out="unused"))
    sched = plan.schedule
    tally = Tally.for_deals(len(plan.labels), players, width_deals or (start + deals))
    for li, lineup in enumerate(sched.lineups):
        setup = RunSetup(seed=seed, rules=plan.rules.spec(), mode="rounds", groups_per_lineup=width_deals or (start + deals),
                         n_agents=len(plan.labels), seatings=sched.seatings)
        task = ChunkTask(index=li, lineup=li, agents=tuple(lineup), names=tuple(plan.load_names[i] for i in lineup),
                         start=start, stop=start + deals, setup=setup)
        tally.merge(Tally.from_json(run_chunk(task).tally))
    return tally, plan.labels


def tally_intervals(tally: Tally, labels) -> dict:
    """The intervals of the summary of a tally, in the keys of :func:`intervals`."""
    out: dict = {kind: {} for kind in ("agent_win", "agent_penalty", "summary_position_win", "pair_win", "pair_penalty", "beat",
                                       "diff", "ahead")}
    names = list(labels)
    for row in tally.agent_table(names).itertuples(index=False):
        a = names.index(row.agent)
        out["agent_win"][a] = (row.win_rate, row.win_lo, row.win_hi)
        out["agent_penalty"][a] = (row.mean_penalty, row.penalty_lo, row.penalty_hi)
        for s in range(tally.players):
            out["summary_position_win"][(a, s)] = (getattr(row, f"win_rate_pos_{s + 1}"),
                                                   getattr(row, f"win_lo_pos_{s + 1}"), getattr(row, f"win_hi_pos_{s + 1}"))
    for row in tally.head_to_head(names).itertuples(index=False):
        key = (names.index(row.agent), names.index(row.opponent))
        out["pair_win"][key] = (row.win_rate, row.win_lo, row.win_hi)
        out["pair_penalty"][key] = (row.mean_penalty, row.penalty_lo, row.penalty_hi)
        out["beat"][key] = (row.beat_rate, row.beat_lo, row.beat_hi)
        out["diff"][key] = (row.penalty_diff, row.diff_lo, row.diff_hi)
        out["ahead"][key] = (row.ahead, row.ahead_lo, row.ahead_hi)
    return out


def real_cell(agents, players: int, deals: int, runs: int, *, truth_deals: int = 100_000, seed: int = 1,
              truth_seed: int = 999_999, chunk: int = 2_000) -> Cell:
    """The summary's intervals of ``runs`` real tournaments of ``deals`` deals each (run seeds
    ``seed .. seed + runs - 1``) against the figures of one large real tournament of
    ``truth_deals`` deals on another seed (its own error: a few percent of the intervals)."""
    big = None
    for start in range(0, truth_deals, chunk):
        t, labels = real_tally(agents, players, min(chunk, truth_deals - start), truth_seed, start=start,
                               width_deals=truth_deals)
        big = t if big is None else big.merge(t)
    true = tally_truth(big)
    cell = Cell("real: " + ",".join(labels), players, deals)
    cell.differ = differ_shares(agents, players, min(truth_deals, MAX_BATCHES), truth_seed)
    for i in range(runs):
        t, labels = real_tally(agents, players, deals, seed + i)
        cell.add(tally_intervals(t, labels), true)
        cell.runs += 1
    return cell


def differ_shares(agents, players: int, deals: int, seed: int) -> dict:
    """For each pair of a real tournament of ``deals`` deals (at most :data:`MAX_BATCHES`: one
    deal per batch), the share of deals in which their penalties differ (a per-deal paired
    difference other than 0). A pair that differs in few deals has few informative deals in a
    short run, and its paired intervals are conservative there (Student's t on a few non-zero
    values, or the bound of deals not yet seen to differ)."""
    t, _ = real_tally(agents, players, deals, seed)
    pr, A = t.pair, t.n_agents
    out = {}
    for a, b in itertools.permutations(range(A), 2):
        ab, ba = a * A + b, b * A + a
        n = pr.N[ab]
        d = (pr.S["penalty"][ab] - pr.S["penalty"][ba])[n > 0]
        if len(d):
            out[str((a, b))] = float((np.abs(d) > 1e-9).mean())
    return out


#: a pair whose penalties differ in fewer deals than this plays alike: a run of 50-200 deals sees
#: about one such deal or none, and its paired intervals hold the truth every time
ALIKE = 0.01


def key_tables(cell: Cell) -> str:
    """The coverage of a real-agent cell key by key (markdown): per agent (its win rate, mean
    penalty and win rate at each position in turn order) and per ordered pair (with the share of deals in which
    the pair's penalties differ). The pooled figure of a kind can hide a key the game makes
    conservative (two agents that play alike in most deals); this shows which."""
    labels = cell.scenario.split(": ", 1)[1].split(",")
    k = cell.players

    def pct(kind: str, key) -> str:
        n, c = cell.by_key.get(kind, {}).get(str(key), (0, 0))
        return f"{100 * c / n:.1f}%" if n else "exact" if cell.exact.get(kind) else "-"

    lines = ["| agent | win rate | mean penalty | " + " | ".join(f"position {s + 1}" for s in range(k)) + " |",
             "|---|---|---|" + "---|" * k]
    for a, name in enumerate(labels):
        lines.append(f"| {name} | {pct('agent_win', a)} | {pct('agent_penalty', a)} | "
                     + " | ".join(pct("summary_position_win", (a, s)) for s in range(k)) + " |")
    pair_kinds = ("pair_win", "pair_penalty", "beat", "diff", "ahead")
    lines += ["", "| agent, with | penalties differ in | win rate | mean penalty | lower penalty | "
              "penalty difference | finishes ahead |", "|---|---|---|---|---|---|---|"]
    for a, b in itertools.permutations(range(len(labels)), 2):
        if str((a, b)) not in cell.by_key.get("pair_win", {}):
            continue
        share = cell.differ.get(str((a, b)))
        lines.append(f"| {labels[a]}, {labels[b]} | {'-' if share is None else f'{100 * share:.1f}% of deals'} | "
                     + " | ".join(pct(kind, (a, b)) for kind in pair_kinds) + " |")
    alike = {key for key, share in cell.differ.items() if share < ALIKE}
    if alike:
        what, pooled = {kind: w for kind, w, _ in KINDS}, []
        for kind in pair_kinds:
            n, c = (sum(x[i] for key, x in cell.by_key.get(kind, {}).items() if key not in alike) for i in (0, 1))
            pooled.append(f"{what[kind]} {100 * c / n:.1f}%" if n else f"{what[kind]} -")
        lines.append(f"\nWithout the pairs whose penalties differ in under {100 * ALIKE:g}% of deals: "
                     + "; ".join(pooled) + ".")
    lines.append(f"\n{cell.runs:,} runs of {cell.deals} deals.")
    return "\n".join(lines)


# --- power ----------------------------------------------------------------------------------------

def power_check(run_dir, diff: float, sims: int = 4000, seed: int = 0) -> dict:
    """Does a run of the size ``kc-sim power`` prints reach its power? The per-deal paired
    scores of each pair of the run folder (their real distribution), shifted so that the
    pair's true finishes-ahead rate is ``1/2 + diff``, are resampled into ``sims`` runs of the
    deals :func:`kc_sim.analysis.power.power_from_run` says are needed; each run's interval
    (the summary's: clustered by deal, paired) is checked for excluding 1/2. Returns per pair
    the deals, the ``--rounds`` and the share of runs that found the difference."""
    from kc_sim.analysis.power import power_from_run
    from kc_sim.runs import RunReader
    from kc_sim.stats import pair_deal_scores

    reader = RunReader(run_dir)
    labels = reader.labels
    rows = power_from_run(run_dir, diff)
    pairs = [(labels.index(r.a), labels.index(r.b)) for r in rows]
    per = {p: ([], []) for p in range(len(pairs))}
    for t, (codes, pen, _) in zip(reader.tables(columns=["group"]), reader.codes()):
        group = t.column("group").to_numpy()
        deals, score, n = pair_deal_scores(group, codes, pen, pairs)
        for p in range(len(pairs)):
            met = n[:, p] > 0
            per[p][0].append(deals[met])
            per[p][1].append(np.c_[score[met, p] * n[met, p], n[met, p]])
    rng = np.random.default_rng(seed)
    out = []
    for p, r in enumerate(rows):
        deal_ids = np.concatenate(per[p][0])
        sn = np.concatenate(per[p][1])
        u, inv = np.unique(deal_ids, return_inverse=True)       # a deal met in several parts (line-ups): one
        S = np.bincount(inv, weights=sn[:, 0])
        N = np.bincount(inv, weights=sn[:, 1])
        y = S / N
        shifted = y - y.mean() + 0.5 + diff                    # the pair's true rate: 1/2 + diff
        found = 0
        for _ in range(sims):
            pick = rng.integers(0, len(u), r.deals)
            lo, hi = _paired_interval(shifted[pick] * N[pick], N[pick])
            found += lo > 0.5 or hi < 0.5
        out.append({"pair": f"{r.a} vs {r.b}", "sd": r.sd, "deals": r.deals, "rounds": r.rounds,
                    "power": found / sims, "sims": sims})
    return {"diff": diff, "run": str(run_dir), "pairs": out}


def _paired_interval(S, N):
    from kc_sim.stats import rate_from_sums
    _, lo, hi = rate_from_sums(S, N, paired=True)
    return lo, hi
