"""Figures of a run folder (``kc-sim plot RUN_DIR``): PNG files in ``RUN_DIR/figures/``.

One function per figure, each taking a run folder (or its :class:`~kc_sim.analysis.scan.RunStats`)
and returning the path of the PNG it wrote:

=====================  ============================  ===================================
function               file                          what it shows
=====================  ============================  ===================================
plot_head_to_head      head_to_head.png              how often the row agent finishes a
                                                     round ahead of the column agent
plot_penalties         penalties.png                 penalty per round, by agent
plot_seats             seats.png                     win rate by position in turn order
plot_round_length      round_length.png              turns per round, by end reason
plot_end_reasons       end_reasons.png               rounds ending out / blocked
=====================  ============================  ===================================

Every figure has a title, labelled axes and a caption line with the rule set, the
number of rounds (and deals), the agents and the seed. Figures are drawn on the Agg
canvas through matplotlib's object interface (no pyplot, no global backend switch), so
importing this module never changes the backend of a notebook.

**Intervals.** A tournament plays every deal several times (once per seating,
and again in every line-up), so rounds on the same deal are not
independent: in self-play of a deterministic agent the seatings even replay the same
game. All intervals here are 95% intervals clustered by deal, from
the one engine of :mod:`kc_sim.stats.intervals` (cluster-robust standard error, Student's
quantile on the deals minus one, Hall's skewness correction; docs/analysis.md, "What the
intervals are"), the same as ``summary.parquet``'s. The figures are computed from one streaming pass over the parquet parts
(:mod:`kc_sim.analysis.scan`: per-deal sums, pooled into at most ``MAX_BATCHES`` batches of
consecutive deals on large runs), so memory does not grow with the number of rounds.

**Seats.** The dealer is drawn from each deal's seed, so a seat number says little on
its own; what matters is the position in turn order: position 1 plays first (the seat
left of the dealer), position K last.

This module only draws: the numbers come from :mod:`kc_sim.analysis.scan` (reading) and
:mod:`kc_sim.analysis.run_stats`, the interval formulas from :mod:`kc_sim.stats`, the
labels of numbers from :mod:`kc_sim.analysis.text`.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from kc_sim.analysis.run_stats import RunStats
from kc_sim.analysis.scan import load_stats
from kc_sim.analysis.text import fmt_num, fmt_pct
from kc_sim.play.agents.names import base_label
from kc_sim.support.atomic import atomic_file

FIGURES_DIR = "figures"
DPI = 110
#: figure name -> (file name, title), in the order the report shows them
FIGURES = {
    "head_to_head": "head_to_head.png",
    "penalties": "penalties.png",
    "seats": "seats.png",
    "round_length": "round_length.png",
    "end_reasons": "end_reasons.png",
}


# --- drawing -----------------------------------------------------------------------

def _figure(width: float = 8.0, height: float = 5.2):
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _finish(fig, data: RunStats, title: str, name: str, out_dir) -> Path:
    fig.suptitle(title, fontsize=13, fontweight="bold")
    cap = textwrap.fill(data.caption(), 150)
    lines = cap.count("\n") + 1
    fig.tight_layout(rect=(0, 0.035 * lines + 0.02, 1, 0.95))
    fig.text(0.01, 0.012, cap, fontsize=7.5, color="#444444", ha="left", va="bottom")
    out_dir = Path(out_dir) if out_dir is not None else data.path / FIGURES_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FIGURES[name]
    with atomic_file(path, "wb") as f:
        fig.savefig(f, format="png", dpi=DPI)
    return path


def _err(values) -> np.ndarray:
    """Asymmetric error bars from (v, lo, hi) triples, in percent."""
    v = np.array([x[0] for x in values])
    lo = np.array([x[1] for x in values])
    hi = np.array([x[2] for x in values])
    return np.maximum(np.nan_to_num(np.vstack([v - lo, hi - v]) * 100), 0.0)


def plot_head_to_head(run_dir, out_dir=None) -> Path:
    """Matrix: how often the row agent finishes a round ahead of the column agent (a
    lower penalty; ties count half), with 95% intervals. In 2-player rounds that are not
    blocked this is the row agent's win rate against the column agent."""
    data = load_stats(run_dir)
    rows = data.head_to_head()
    seen = data.agents_seen()
    names = [data.labels[a] for a in seen]
    k = len(seen)
    pos = {a: i for i, a in enumerate(seen)}
    mat = np.full((k, k), np.nan)
    for r in rows:
        mat[pos[r["a"]], pos[r["b"]]] = r["score"][0]
    size = max(5.5, 1.6 * k + 3)
    fig = _figure(size, max(4.6, 1.2 * k + 2.4))
    ax = fig.add_subplot(1, 1, 1)
    dev = np.nanmax(np.abs(mat - 0.5)) if np.isfinite(mat).any() else 0.05
    dev = max(float(dev), 0.02)
    im = ax.imshow(mat, cmap="RdBu", vmin=0.5 - dev, vmax=0.5 + dev)
    for r in rows:
        i, j = pos[r["a"]], pos[r["b"]]
        v, lo, hi = r["score"]
        colour = "white" if abs(v - 0.5) > 0.6 * dev else "black"
        ax.text(j, i, f"{100 * v:.1f}%\n[{100 * lo:.1f}, {100 * hi:.1f}]\n{r['rounds']:,} rounds",
                ha="center", va="center", fontsize=8, color=colour)
    for i in range(k):
        ax.text(i, i, "-", ha="center", va="center", color="#888888")
    ax.set_xticks(range(k), names, rotation=20, ha="right")
    ax.set_yticks(range(k), names)
    ax.set_xlabel("opponent (column)")
    ax.set_ylabel("agent (row)")
    cb = fig.colorbar(im, ax=ax, shrink=0.85)
    cb.set_label("row agent ahead of column agent (share of rounds)")
    return _finish(fig, data, "Head-to-head: row agent finishes ahead of column agent", "head_to_head", out_dir)


def plot_penalties(run_dir, out_dir=None) -> Path:
    """Distribution of the penalty an agent takes per round (share of its rounds at each
    value), one line per agent; the legend gives each mean with its interval."""
    data = load_stats(run_dir)
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    top = data.penalty_top(99.5)
    for r in data.agent_rows():
        counts = data.penalty_shares(r["a"], top)
        m, lo, hi = r["penalty"]
        ax.step(np.arange(top + 1), 100 * counts, where="mid", marker="o", markersize=3, linewidth=1.3,
                label=f"{r['agent']}: mean {fmt_num(m, lo, hi)}")
    ax.set_yscale("log")
    ax.set_xlabel(f"penalty for the cards left in hand at the end of the round (last point: {top} or more)")
    ax.set_ylabel("share of the agent's rounds (%, log scale)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, title="agent: mean penalty [95% CI]", title_fontsize=8)
    return _finish(fig, data, "Penalty per round, by agent", "penalties", out_dir)


def plot_seats(run_dir, out_dir=None) -> Path:
    """Win rate by position in turn order (1 plays first, left of the dealer), over all
    agents and for each agent, with 95% intervals; the dashed line is an equal share of
    the rounds that were not blocked."""
    data = load_stats(run_dir)
    k = data.players
    series = [("all agents", data.position_rows())]
    seen = data.agents_seen()
    if len({base_label(data.labels[a]) for a in seen}) > 1:      # not self-play
        series += [(data.labels[a], data.position_rows(a)) for a in seen]
    fig = _figure(max(8.0, 1.4 * k + 4))
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(series)
    x = np.arange(k)
    for i, (name, rows) in enumerate(series):
        vals = [r["win"] for r in rows]
        ax.bar(x + (i - (len(series) - 1) / 2) * width, [100 * v[0] for v in vals], width,
               yerr=_err(vals), capsize=3, label=name, alpha=0.9 if i == 0 else 0.75,
               color="#333333" if i == 0 else None)
    fair = 100 * (1 - data.blocked_share) / k if data.n else 100 / k
    ax.axhline(fair, color="#aa3333", linestyle="--", linewidth=1, label=f"equal share ({fair:.1f}%)")
    ax.set_xticks(x, [f"{p + 1}" + (" (first)" if p == 0 else " (last)" if p == k - 1 else "") for p in range(k)])
    ax.set_xlabel("position in turn order (1 = plays first, left of the dealer)")
    ax.set_ylabel("win rate (% of rounds)")
    vals = [100 * r["win"][2] for _, rows in series for r in rows if not math.isnan(r["win"][2])]
    ax.set_ylim(0, max(vals + [fair]) * 1.15)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, data, "Win rate by seat (position in turn order)", "seats", out_dir)


def plot_round_length(run_dir, out_dir=None) -> Path:
    """Turns per round, stacked by how the round ended (out or blocked)."""
    data = load_stats(run_dir)
    e = data.end_rows()
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    out_counts, blk_counts = data.turn_counts()
    out_counts, blk_counts = out_counts / max(data.n, 1), blk_counts / max(data.n, 1)
    centres = np.arange(0, len(out_counts))
    ax.bar(centres, 100 * out_counts, width=0.9, label=f"out ({fmt_pct(*e['out'])})", color="#4477aa")
    ax.bar(centres, 100 * blk_counts, width=0.9, bottom=100 * out_counts,
           label=f"blocked ({fmt_pct(*e['blocked'], digits=2)})", color="#cc6677")
    m, lo, hi = e["turns"]
    ax.axvline(m, color="black", linestyle="--", linewidth=1, label=f"mean {fmt_num(m, lo, hi)} turns")
    ax.set_xlabel("turns in the round (turns started, all players)")
    ax.set_ylabel("share of rounds (%)")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, data, "Round length", "round_length", out_dir)


def plot_end_reasons(run_dir, out_dir=None) -> Path:
    """How rounds end: a player goes out, or the round is blocked; per line-up when
    there are several, with 95% intervals and counts."""
    data = load_stats(run_dir)
    groups = data.end_reasons()
    fig = _figure(max(8.0, 1.1 * len(groups) + 4))
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(groups))
    for j, (reason, colour) in enumerate([("out", "#4477aa"), ("blocked", "#cc6677")]):
        vals = [g[reason] for g in groups]
        bars = ax.bar(x + (j - 0.5) * 0.38, [100 * v[0] for v in vals], 0.38, yerr=_err(vals), capsize=3,
                      color=colour, label=reason)
        for b, g, v in zip(bars, groups, vals):
            ax.text(b.get_x() + b.get_width() / 2, b.get_height() + 2, f"{100 * v[0]:.2f}%\n({g['n_' + reason]:,})",
                    ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, [g["name"] for g in groups], rotation=15 if len(groups) > 3 else 0, ha="right" if len(groups) > 3 else "center")
    ax.set_ylim(0, 120)
    ax.set_xlabel("rounds" if len(groups) == 1 else "line-up")
    ax.set_ylabel("share of rounds (%)")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, data, "End reasons: out vs blocked", "end_reasons", out_dir)


PLOTTERS = {
    "head_to_head": plot_head_to_head,
    "penalties": plot_penalties,
    "seats": plot_seats,
    "round_length": plot_round_length,
    "end_reasons": plot_end_reasons,
}


def plot_all(run_dir, out_dir=None) -> dict[str, Path]:
    """Every figure of a run; returns ``{name: path}`` in report order."""
    data = load_stats(run_dir)
    return {name: fn(data, out_dir) for name, fn in PLOTTERS.items()}
