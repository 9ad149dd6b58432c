"""One self-contained HTML report of a run folder (``kc-sim report RUN_DIR``).

The report (``RUN_DIR/report.html`` by default) holds the run's configuration, tables of
the agents, head-to-head pairs, win rate by position in turn order, round length and
end reasons (and matches, when the run played matches), and every figure of
:mod:`kc_sim.analysis.plots` embedded as a base64 PNG data URI, so the single file opens in any
browser, can be mailed, and needs nothing next to it. The figures are also written to
``RUN_DIR/figures/`` (the report links each one by its file name).

All intervals are 95% and clustered by deal (see :mod:`kc_sim.analysis.plots`). Every table and
figure comes from one streaming pass over the run's parquet parts (:mod:`kc_sim.analysis.scan`), so
the report of a run of any size needs about the memory of one part.

The research sections (issue 12: ratings, paired differences and variance reduction, power,
stopping) reuse the analysis functions on this one run, each in one more streaming pass, so
they show the same numbers as the commands that print them (:mod:`kc_sim.analysis.research`).

* **Method**: the seating schedule (all ``k!`` seatings, balanced round tables, or the cyclic
  rotations, with a warning that pairwise figures then reflect who sits before whom).

* **Sample rounds** (issue 15): for each line-up, the deal whose results differ most between
  its seatings (the sum over the line-up's agents of the range of each one's penalty across
  the seatings of the deal), shown as two browser replays of that deal: the seatings where
  the agent with the widest range did best and worst. The deals are picked in one more
  streaming pass that keeps a few candidates per line-up (:func:`sample_deals`); the
  rounds are then played again from their seeds with the run's agents
  (:func:`kc_sim.play.recording.recorded.record_round`, as ``tournament --records`` does) and drawn
  by :mod:`kc_sim.picture.replay_page`. At most :data:`REPLAY_LINEUPS` line-ups are shown
  (those with the widest ranges). In a run of matches only first rounds are sampled
  (later rounds depend on the match so far).

A section that does not apply is left out (ratings with fewer than 3 agents; paired
differences and power on a run of matches), and the Method note says why.
"""

from __future__ import annotations

import base64
import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

from kc_sim.analysis.html import CSS, esc, table_html
from kc_sim.analysis.judged import judged_html
from kc_sim.analysis.plots import FIGURES, plot_all
from kc_sim.analysis.research import Research, research, research_html
from kc_sim.analysis.luck_adjusted import luck_html
from kc_sim.analysis.run_stats import RunStats
from kc_sim.analysis.scan import load_stats
from kc_sim.analysis.text import fmt_num, fmt_pct
from kc_sim.errors import UserError
from kc_sim.play.agents.names import base_label
from kc_sim.runs import Manifest
from kc_sim.runs.schema import AGENT, PENALTY, seat_arrays, seat_names
from kc_sim.support.atomic import write_text_atomic

REPORT_FILE = "report.html"
#: line-ups with sample replays in the report (the widest ranges between seatings)
REPLAY_LINEUPS = 6


def position_name(p: int, k: int) -> str:
    return f"{p + 1}" + (" (first)" if p == 0 else " (last)" if p == k - 1 else "")


# --- tables (plain lists: header and rows) ----------------------------------------------

def agents_table(data: RunStats):
    header = ["agent", "rounds", "win rate [95% CI]", "mean penalty [95% CI]"]
    rows = [[r["agent"], f"{r['rounds']:,}", fmt_pct(*r["win"]), fmt_num(*r["penalty"])] for r in data.agent_rows()]
    return header, rows


def head_to_head_table(data: RunStats):
    header = ["agent", "opponent", "rounds together", "finishes ahead [95% CI]", "wins the round [95% CI]",
              "penalty diff (agent - opponent) [95% CI]"]
    rows = [[r["agent"], r["opponent"], f"{r['rounds']:,}", fmt_pct(*r["score"]), fmt_pct(*r["win"]),
             fmt_num(*r["diff"], digits=3)] for r in data.head_to_head()]
    return header, rows


def positions_table(data: RunStats):
    seen = data.agents_seen()
    series = [("all agents", data.position_rows())]
    if len({base_label(data.labels[a]) for a in seen}) > 1:      # not self-play
        series += [(data.labels[a], data.position_rows(a)) for a in seen]
    header = ["position in turn order"] + [name for name, _ in series]
    rows = []
    for p in range(data.players):
        rows.append([position_name(p, data.players)] + [fmt_pct(*rs[p]["win"]) for _, rs in series])
    return header, rows


def length_table(data: RunStats):
    e = data.end_rows()
    header = ["rounds", "deals", "mean turns [95% CI]", "median turns", "mean actions [95% CI]",
              "out [95% CI]", "blocked [95% CI]"]
    rows = [[f"{e['rounds']:,}", f"{e['deals']:,}", fmt_num(*e["turns"]), f"{e['turns_median']:g}",
             fmt_num(*e["actions"]), fmt_pct(*e["out"], digits=2), fmt_pct(*e["blocked"], digits=3)]]
    return header, rows


def matches_table(data: RunStats):
    header = ["agent", "matches", "match win rate [95% CI]", "mean penalty total [95% CI]"]
    rows = [[r["agent"], f"{r['matches']:,}", fmt_pct(*r["win"]), fmt_num(*r["total"])] for r in data.match_rows()]
    return header, rows, data.match_length()


def schedule_note(manifest: Manifest | None, players: int) -> str:
    """What the seating schedule of the run is, and (cyclic rotations with 3 or more seats)
    the warning that pairwise figures then reflect who sits before whom."""
    sched = manifest.schedule if manifest is not None else None
    kind = sched.seating if sched is not None else "rotations"
    seatings = sched.seatings if sched is not None else ()
    S, k = len(seatings) or players, players
    if kind == "balanced" and k <= 4:
        return (f"Seating: balanced. Every deal is played in all {k}! = {S} seatings of each line-up, so every "
                "agent plays every hand of the deal, and sits after every other agent, equally often; the order "
                "of --agents changes no figure.")
    if kind == "balanced":
        return (f"Seating: balanced round tables. Every deal is played in {S} seatings: {S // k} clockwise "
                "orders in which every ordered pair of agents sits next to each other equally often, each "
                f"turned through all {k} seats, so every agent takes every position equally often.")
    text = (f"Seating: cyclic rotations (--seating rotations). Every deal is played in the {S} rotations of "
            "each line-up, so every agent takes every seat, but the clockwise order of a line-up never changes.")
    if k >= 3:
        text += (f" WARNING: with {k} seats the pairwise figures (head-to-head, ratings, paired differences) "
                 "then also measure who sits just before whom; rerun with the default balanced seating to "
                 "compare agents.")
    return text


def _rotated(data: RunStats) -> bool:
    """Cyclic rotations with 3 or more seats: pairwise figures reflect the seating order."""
    sched = data.manifest.schedule if data.manifest is not None else None
    return (sched.seating if sched is not None else "rotations") == "rotations" and data.players >= 3


def method_html(data: RunStats, res: Research) -> list[str]:
    """The Method section: seating schedule, dependence of rounds on a deal, intervals, and
    which research sections were left out and why."""
    skipped = {"ratings": "Ratings", "paired": "Paired differences and power"}
    left_out = [f"{skipped[k]}: not shown ({v})." for k, v in res.skipped.items() if k in skipped]
    return ["<h2>Method</h2>",
            f'<p class="note" id="schedule-note">{esc(schedule_note(data.manifest, data.players))}</p>',
            '<p class="note">Every deal is played once in every seating of the schedule (and again in every '
            "line-up), so rounds on the same deal are not independent; in self-play of a deterministic agent "
            "the seatings replay the same game. Every interval is 95% and clustered by deal: cluster-robust "
            "intervals with Student's t on the deals minus one and Hall's correction for the skewness of "
            "penalties and rare events, rates kept inside [0, 1]; the tournament's own "
            "<code>summary.parquet</code> uses the same engine and agrees with these tables.</p>"] + [f'<p class="note">{esc(x)}</p>' for x in left_out]


# --- sample rounds (browser replays) -----------------------------------------------------

@dataclass
class SampleDeal:
    """A deal of one line-up whose results differ between seatings: ``spread`` is the sum
    over the line-up's agents of (largest - smallest penalty) across the deal's seatings;
    ``rows`` the two seatings to show (best and worst for ``agent``, the agent with the
    widest range), as dicts of the round columns."""

    lineup: int
    group: int
    spread: int
    agent: str
    rows: list = field(default_factory=list)


def _part_candidates(t, players: int, labels: list[str], lineup: int, keep: int) -> list[SampleDeal]:
    """The ``keep`` deals of one line-up's rows of a part (consecutive groups) with the
    widest ranges, each with its best and worst seating (numpy over the part's columns)."""
    import numpy as np
    import pyarrow.compute as pc

    group = t.column("group").to_numpy(zero_copy_only=False).astype(np.int64)
    ok = np.ones(len(group), dtype=bool)
    if "match_round" in t.column_names:          # matches: first rounds only
        ok = pc.fill_null(pc.equal(t.column("match_round"), 0), True).to_numpy(zero_copy_only=False)
    g0 = int(group.min())
    n_g, n_a = int(group.max()) - g0 + 1, len(labels)
    lo = np.full(n_g * n_a, np.iinfo(np.int64).max)
    hi = np.full(n_g * n_a, -1)
    codes, pens = seat_arrays(t, players, PENALTY, {name: i for i, name in enumerate(labels)})
    for s in range(players):
        code, pen = codes[:, s], pens[:, s]
        m = ok & (code >= 0) & (pen >= 0)
        key = (group[m] - g0) * n_a + code[m]
        np.minimum.at(lo, key, pen[m])
        np.maximum.at(hi, key, pen[m])
    rng = np.where(hi >= 0, hi - lo, 0).reshape(n_g, n_a)
    spread = rng.sum(axis=1)
    order = [g for g in np.argsort(-spread, kind="stable")[:keep] if spread[g] > 0]
    out = []
    for gi in order:
        g, agent = g0 + int(gi), labels[int(np.argmax(rng[gi]))]
        rows = t.take(np.flatnonzero((group == g) & ok)).to_pylist()

        def pen_of(row):
            return next(row[f"{PENALTY}{s}"] for s in range(players) if row[f"{AGENT}{s}"] == agent)
        rows.sort(key=lambda r: (pen_of(r), r["seating"]))
        out.append(SampleDeal(lineup, g, int(spread[gi]), agent, [rows[0], rows[-1]]))
    return out


def sample_deals(run_dir, players: int, labels: list[str], per_lineup: int = 1,
                 lineups: int = REPLAY_LINEUPS) -> list[SampleDeal]:
    """One streaming pass over the round parts: per line-up the ``per_lineup`` deals whose
    results differ most between seatings, then the ``lineups`` line-ups with the widest
    ranges. Memory: one part plus a few rows per line-up."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from kc_sim.runs import RunReader, layout

    reader = RunReader(run_dir)
    best: dict[int, list[SampleDeal]] = {}
    cols = ["lineup", "group", "seating", "seed", "dealer", "match", "match_round",
            *seat_names(AGENT, players), *seat_names(PENALTY, players)]
    for p in reader.parts(layout.ROUNDS):
        names = set(pq.read_schema(p).names)
        t = next(reader.tables(columns=[c for c in cols if c in names], paths=[p]))
        if not t.num_rows:
            continue
        lus = sorted(set(t.column("lineup").to_pylist()))
        for lu in lus:
            sub = t.filter(pc.equal(t.column("lineup"), lu)) if len(lus) > 1 else t
            cand = best.get(lu, []) + _part_candidates(sub, players, labels, lu, per_lineup)
            best[lu] = sorted(cand, key=lambda d: (-d.spread, d.group))[:per_lineup]
        del t
    chosen = sorted(best.values(), key=lambda ds: -ds[0].spread)[:lineups]
    return sorted((d for ds in chosen for d in ds), key=lambda d: (d.lineup, -d.spread))


def _replay_rows(data: RunStats, deal: SampleDeal) -> list[tuple[str, dict]]:
    """Play the deal's two seatings again from their seeds with the run's agents; returns
    (heading, replay document) per seating."""
    # lazy: the agents, the core and the play layer only when replays are drawn
    from kc_sim.play.agents.registry import load_agents
    from kc_sim.play.seeing import replay_doc
    from kc_sim.tournament.game_records import row_record

    config = data.manifest.config
    by_label = dict(zip(config.labels, load_agents(list(config.agents))))
    out = []
    for row in deal.rows:
        # a first round of a match too is recorded as a single round (match 0, round = its deal)
        rec, labels, seat_map = row_record(row, by_label, data.rules, data.players, as_match=False)
        ran = [row[f"{PENALTY}{s}"] for s in seat_map]
        seat = next(s for s in seat_map if labels[s] == deal.agent)
        head = (f"deal {deal.group}, seating {row['seating']}: {deal.agent} in seat {seat_map.index(seat)} "
                f"takes penalty {row[f'{PENALTY}{seat}']}; penalties by seat {' '.join(map(str, ran))}")
        if rec["result"]["penalties"] != ran:
            head += (f" (this replay gives {' '.join(map(str, rec['result']['penalties']))}: "
                     "an agent did not play the same way again)")
        out.append((head, replay_doc(rec, title=f"deal {deal.group}, seating {row['seating']}")))
    return out


def replays_html(data: RunStats, per_lineup: int = 1, lineups: int = REPLAY_LINEUPS,
                 run_agents: bool = False) -> list[str]:
    """The report's Sample rounds section: replays of the deals of :func:`sample_deals`,
    played again with the run's agents. A run folder is data: agents it names by a file or
    module are code, loaded only with ``run_agents`` (the person vouches for the run)."""
    from kc_sim.play.agents.registry import names_code
    from kc_sim.picture.replay_page import page_assets, replay_block
    from kc_sim.records.untrusted import display_names

    parts = ["<h2>Sample rounds</h2>"]
    code = [n for n in data.manifest.config.agents if names_code(n)]
    if code and not run_agents:
        return parts + [f'<p class="note">No sample rounds: the run names agents that are code '
                        f'({esc(", ".join(display_names(code)))}), and kc-sim report runs code named by a run folder '
                        "only when asked: kc-sim report RUN_DIR --run-agents, for a run you trust.</p>"]
    try:
        deals = sample_deals(data.path, data.players, data.labels, per_lineup, lineups)
    except (OSError, ValueError, KeyError) as e:
        return parts + [f'<p class="note">No sample rounds: cannot read the rounds ({esc(e)}).</p>']
    if not deals:
        return parts + ['<p class="note">No sample rounds: no deal had different results in different '
                        "seatings.</p>"]
    n_lu = len(data.lineups) or len({d.lineup for d in deals})
    parts.append('<p class="note">For each line-up, the deal whose results differ most between its seatings '
                 "(the sum over the agents of the range of each one's penalty across the seatings), replayed "
                 "in the seating where the agent with the widest range did best and in the one where it did "
                 "worst. The rounds are played again from their seeds with the run's agents. Step with the "
                 "buttons or the arrow keys (after clicking a replay); H shows or hides the hands"
                 + (f"; {len({d.lineup for d in deals})} of {n_lu} line-ups are shown, those with the widest "
                    "ranges" if n_lu > len({d.lineup for d in deals}) else "") + ".</p>")
    try:
        for d in deals:
            lus = data.lineups
            names = (" / ".join(data.labels[i] for i in lus[d.lineup]) if d.lineup < len(lus) else
                     " / ".join(str(d.rows[0][f"{AGENT}{s}"]) for s in range(data.players)))
            parts.append(f"<h3>Line-up {d.lineup}: {esc(names)}: deal {d.group} (ranges sum to {d.spread})</h3>")
            for i, (head, doc) in enumerate(_replay_rows(data, d)):
                parts.append(replay_block(doc, f"replay-{d.lineup}-{d.group}-{i}", heading=head))
    except UserError as e:
        return parts[:1] + [f'<p class="note">No sample rounds: the run\'s agents cannot be loaded here ({esc(e)}).</p>']
    parts.append(page_assets())
    return parts


# --- the report ----------------------------------------------------------------------

def _config_rows(data: RunStats) -> list[list]:
    man = data.manifest
    sched = man.schedule
    return [
        ["command", man.command or "-"],
        ["agents", ", ".join(data.labels)],
        ["players (seats per table)", data.players],
        ["rules", f"{data.rules_label}   ({data.rules})"],
        ["mode", man.config.mode],
        ["rounds", f"{data.n:,}" + (f" in {data.n_matches:,} matches" if data.n_matches is not None else "")],
        ["deals", f"{data.deals:,}"],
        ["seatings per deal", f"{(len(sched.seatings) if sched else 0) or data.players} "
                              f"({sched.seating if sched else 'rotations'})"],
        ["line-ups", "; ".join(" / ".join(data.labels[i] for i in lu) for lu in (sched.lineups if sched else ()))],
        ["seed", data.seed],
        ["created / updated", f"{man.created or '-'} / {man.updated or '-'}"],
        ["versions", ", ".join(f"{k} {v}" for k, v in man.versions.items())],
    ]


def _figure_html(name: str, path: Path, base: Path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    try:
        rel = Path(path).resolve().relative_to(base.resolve())
    except ValueError:
        rel = Path(path)
    doc = {
        "head_to_head": "How often the row agent finishes a round with a lower penalty than the column agent "
                        "(ties count half); in 2-player rounds that end with a player out this is the win rate.",
        "penalties": "Share of each agent's rounds ending with each penalty (log scale); kings cost 10 under "
                     "kings10 scoring, so the second hump is rounds ending with a king in hand.",
        "seats": "Win rate by position in turn order: position 1 plays first (left of the dealer).",
        "round_length": "Turns per round (all players' turns), stacked by how the round ended.",
        "end_reasons": "Rounds that end with a player out of cards vs rounds that end blocked.",
    }.get(name, "")
    return (f'<figure id="fig-{esc(name)}"><img alt="{esc(name)}" src="data:image/png;base64,{data}">'
            f'<figcaption>{esc(doc)} File: <a href="{esc(rel.as_posix())}">{esc(rel.as_posix())}</a>'
            f"</figcaption></figure>")


def build_html(data: RunStats, figures: dict[str, Path], base: Path, res: Research | None = None,
               replays: list[str] | None = None, judged: list[str] | None = None) -> str:
    """The report's HTML: run, agents, head-to-head, seats, round length, matches, the
    research sections of ``res`` (:func:`research`; None: none), the decision analysis
    (``judged``: :func:`kc_sim.analysis.judged.judged_html`; None: none), figures, the sample
    rounds (``replays``: :func:`replays_html`; None: none) and method."""
    res = res if res is not None else Research()
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>kc-sim report: {esc(data.path.name)}</title>", f"<style>{CSS}</style></head><body>",
        f"<h1>kc-sim report: {esc(data.path.name)}</h1>",
        f'<p class="note">{esc(data.caption())}. Written {esc(_dt.datetime.now().strftime("%Y-%m-%d %H:%M"))}.</p>',
        "<h2>Run</h2>", table_html(["setting", "value"], _config_rows(data), left=2),
        "<h2>Agents</h2>", table_html(*agents_table(data)),
    ]
    h, rows = head_to_head_table(data)
    if rows:
        parts += ["<h2>Head-to-head</h2>",
                  '<p class="note">Over the rounds where both agents had a seat. "Finishes ahead": the agent\'s '
                  "penalty is lower than the opponent's (ties count half). Penalty diff: negative means the "
                  "agent keeps fewer penalty points than the opponent in the same round.</p>"]
        if _rotated(data):
            parts.append(f'<p class="note"><b>{esc(schedule_note(data.manifest, data.players))}</b></p>')
        parts.append(table_html(h, rows, left=2))
    parts += ["<h2>Win rate by seat</h2>",
              '<p class="note">By position in turn order (the dealer is drawn for every deal, so the seat '
              "number alone says little). Position 1 plays first.</p>",
              table_html(*positions_table(data)),
              "<h2>Round length and end reasons</h2>", table_html(*length_table(data), left=0)]
    if data.n_matches is not None:
        h, rows, length = matches_table(data)
        parts += ["<h2>Matches</h2>", f'<p class="note">Rounds per match: {esc(fmt_num(*length))}. '
                  "A shared win counts for every sharer.</p>", table_html(h, rows)]
    parts += research_html(data, res)
    parts += judged or []
    parts += luck_html(data.path, data.manifest)        # runs played with --luck only
    parts += ["<h2>Figures</h2>"] + [_figure_html(n, p, base) for n, p in figures.items()]
    parts += replays or []
    parts += method_html(data, res) + ["</body></html>"]
    return "\n".join(parts)


def write_report(run_dir, out=None, *, bootstrap: int | None = None, replays: int = 1,
                 run_agents: bool = False, judged: dict | None = None) -> Path:
    """Draw every figure (into ``RUN_DIR/figures/``) and write the HTML report with the
    figures embedded and the research sections (:func:`research`; ``bootstrap`` resamples
    for the ratings' intervals, default the leaderboard's); returns the path of the HTML
    file (default ``RUN_DIR/report.html``). ``run_dir`` may be a scanned :class:`RunStats`.
    ``replays``: sample deals per line-up shown as browser replays (0: no Sample rounds section);
    ``run_agents``: load agents the run names by a file or module to replay them (code);
    ``judged``: a sampled decision analysis of the run (:func:`kc_sim.analysis.judged.analyse_run`)
    shown as the Decision analysis section (None: no section)."""
    data = load_stats(run_dir)
    out = Path(out) if out is not None else data.path / REPORT_FILE
    if out.exists() and out.is_dir():
        out = out / REPORT_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    figures = plot_all(data)
    assert set(figures) <= set(FIGURES)
    samples = replays_html(data, per_lineup=replays, run_agents=run_agents) if replays > 0 else None
    section = judged_html(judged) if judged is not None else None
    text = build_html(data, figures, out.parent, research(data, bootstrap=bootstrap), samples, section)
    return write_text_atomic(out, text)
