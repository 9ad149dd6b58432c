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
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
from pathlib import Path

from kc_sim.analysis.plots import FIGURES, plot_all
from kc_sim.analysis.run_stats import RunStats
from kc_sim.analysis.scan import load_stats
from kc_sim.analysis.text import fmt_num, fmt_pct
from kc_sim.play.names import base_label

REPORT_FILE = "report.html"

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
code { background: #f5f5f5; padding: 0 0.25em; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #e3e3e3; }
figcaption { font-size: 0.88em; color: #555; }
.note { color: #555; font-size: 0.9em; }
"""


def _esc(x) -> str:
    return html.escape(str(x))


def table_html(header: list[str], rows: list[list], left: int = 1) -> str:
    """An HTML table; the first ``left`` columns are left-aligned (names)."""
    def cell(tag, i, v):
        cls = ' class="l"' if i < left else ""
        return f"<{tag}{cls}>{_esc(v)}</{tag}>"
    out = ["<table>", "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(header)) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def position_name(p: int, k: int) -> str:
    return f"{p + 1}" + (" (first)" if p == 0 else " (last)" if p == k - 1 else "")


# --- tables (plain lists: the report and the experiments share them) --------------------

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


# --- the report ----------------------------------------------------------------------

def _config_rows(data: RunStats) -> list[list]:
    man = data.manifest
    cfg = man.get("config", {})
    sched = man.get("schedule", {})
    versions = man.get("versions", {})
    return [
        ["command", man.get("command") or "-"],
        ["agents", ", ".join(data.labels)],
        ["players (seats per table)", data.players],
        ["rules", f"{data.rules_label}   ({data.rules})"],
        ["mode", cfg.get("mode", "rounds")],
        ["rounds", f"{data.n:,}" + (f" in {data.n_matches:,} matches" if data.n_matches is not None else "")],
        ["deals (rotation groups)", f"{data.deals:,}"],
        ["line-ups", "; ".join(" / ".join(data.labels[i] for i in lu) for lu in sched.get("lineups", []))],
        ["seed", data.seed],
        ["created / updated", f"{man.get('created', '-')} / {man.get('updated', '-')}"],
        ["versions", ", ".join(f"{k} {v}" for k, v in versions.items())],
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
    return (f'<figure id="fig-{_esc(name)}"><img alt="{_esc(name)}" src="data:image/png;base64,{data}">'
            f'<figcaption>{_esc(doc)} File: <a href="{_esc(rel.as_posix())}">{_esc(rel.as_posix())}</a>'
            f"</figcaption></figure>")


def build_html(data: RunStats, figures: dict[str, Path], base: Path) -> str:
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>kc-sim report: {_esc(data.path.name)}</title>", f"<style>{_CSS}</style></head><body>",
        f"<h1>kc-sim report: {_esc(data.path.name)}</h1>",
        f'<p class="note">{_esc(data.caption())}. Written {_esc(_dt.datetime.now().strftime("%Y-%m-%d %H:%M"))}.</p>',
        "<h2>Run</h2>", table_html(["setting", "value"], _config_rows(data), left=2),
        "<h2>Agents</h2>", table_html(*agents_table(data)),
    ]
    h, rows = head_to_head_table(data)
    if rows:
        parts += ["<h2>Head-to-head</h2>",
                  '<p class="note">Over the rounds where both agents had a seat. "Finishes ahead": the agent\'s '
                  "penalty is lower than the opponent's (ties count half). Penalty diff: negative means the "
                  "agent keeps fewer penalty points than the opponent in the same round. With more than two "
                  "players a line-up keeps its clockwise order in every rotation, so these pairwise figures "
                  "also reflect who sits before whom.</p>",
                  table_html(h, rows, left=2)]
    parts += ["<h2>Win rate by seat</h2>",
              '<p class="note">By position in turn order (the dealer is drawn for every deal, so the seat '
              "number alone says little). Position 1 plays first.</p>",
              table_html(*positions_table(data)),
              "<h2>Round length and end reasons</h2>", table_html(*length_table(data), left=0)]
    if data.n_matches is not None:
        h, rows, length = matches_table(data)
        parts += ["<h2>Matches</h2>", f'<p class="note">Rounds per match: {_esc(fmt_num(*length))}. '
                  "A shared win counts for every sharer.</p>", table_html(h, rows)]
    parts += ["<h2>Figures</h2>"] + [_figure_html(n, p, base) for n, p in figures.items()]
    parts += ["<h2>Method</h2>",
              '<p class="note">Every deal is played once per seating rotation (and again in every line-up), '
              "so rounds on the same deal are not independent; in self-play of a deterministic agent the "
              "rotations replay the same game. Intervals are 95% and clustered by deal: cluster-robust normal "
              "intervals for means, Wilson intervals on the effective sample size for rates. "
              "<code>summary.parquet</code> holds the tournament's own table (independent-round Wilson "
              "intervals).</p>",
              "</body></html>"]
    return "\n".join(parts)


def write_report(run_dir, out=None) -> Path:
    """Draw every figure (into ``RUN_DIR/figures/``) and write the HTML report with the
    figures embedded; returns the path of the HTML file (default ``RUN_DIR/report.html``)."""
    data = load_stats(run_dir)
    out = Path(out) if out is not None else data.path / REPORT_FILE
    if out.exists() and out.is_dir():
        out = out / REPORT_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    figures = plot_all(data)
    assert set(figures) <= set(FIGURES)
    text = build_html(data, figures, out.parent)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out
