"""A rating for every agent across the rounds of one or more run folders: ``kc-sim leaderboard``.

The numbers are :mod:`kc_sim.stats`' (the model and its intervals: :mod:`kc_sim.stats.bradley_terry`,
:mod:`kc_sim.stats.bootstrap`, :mod:`kc_sim.stats.ratings`; the meta-game:
:mod:`kc_sim.stats.metagame`). This module reads the run folders into
:class:`~kc_sim.stats.bradley_terry.Comparisons` (:func:`load_comparisons`), rates them
(:func:`leaderboard`), and prints, saves and plots the result.

* **Comparisons**: every pair of seats of a round in which both were dealt in, won by the
  lower penalty (ties half), summed per unit and pair of agents.
* **The unit is the deal, across runs**: a deal is played in every seating and by every
  line-up of a run, and by every run made with the same ``--seed`` (runs with one seed played
  the same deals, so their rounds of a deal are resampled together; runs with different seeds
  are independent). The rounds are read one part at a time and summed per deal; past 16,384
  deals a family of runs' deals are pooled into that many batches of consecutive deals, which
  resamples the same independent deals in blocks (same variance), so memory stays flat.
* **intervals** (95%) come from a bootstrap over deals, or with ``bootstrap=0`` from the
  sandwich covariance clustered by deal and Student's quantile on the deals minus one.

Agents are matched across run folders by their label (``greedy``, ``planner``,
``greedy#2`` for a second copy in self-play, ...).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from kc_sim.analysis.text import digits_for_width
from kc_sim.errors import UserError
from kc_sim.support.atomic import atomic_file
from kc_sim.runs import RunReader
from kc_sim.runs.parts import write_parquet
from kc_sim.runs.schema import AGENT, PENALTY, seat_arrays, seat_names, seats_of
from kc_sim.stats.bootstrap import bootstrap_interval, resample, widen
from kc_sim.stats.bradley_terry import ELO, Comparisons, fit_bt, sandwich_cov, totals
from kc_sim.stats.bradley_terry import add_part as _add_part
from kc_sim.stats.ratings import (
    DEFAULT_BOOTSTRAP,
    FIT_LEVEL,
    Metagame,
    rate_comparisons,
)
from kc_sim.stats.sums import batch_width

__all__ = ["CYCLES_FILE", "DEFAULT_BOOTSTRAP", "ELO", "FIGURE_FILE", "FIT_KEY", "FIT_LEVEL", "LEADERBOARD_FILE",
           "PAIRS_FILE", "Comparisons", "Metagame", "bootstrap_interval", "fit_bt", "format_fit", "format_leaderboard",
           "format_metagame", "leaderboard", "load_comparisons", "plot_leaderboard", "rate_comparisons", "read_fit",
           "resample", "sandwich_cov", "save_leaderboard", "totals", "widen"]

LEADERBOARD_FILE = "leaderboard.parquet"
FIGURE_FILE = "leaderboard.png"
PAIRS_FILE = "leaderboard_pairs.parquet"
CYCLES_FILE = "leaderboard_cycles.parquet"
#: key of the Bradley-Terry fit test (JSON) in the metadata of leaderboard.parquet
FIT_KEY = "kc_sim.bt_fit"


def _run_parts(reader: RunReader) -> list[tuple[Path, list[str]]]:
    """The round parts of a run folder, each with the columns the comparisons read (checked
    before any is read, so a bad folder fails at once)."""
    run_dir = reader.path
    if not run_dir.is_dir() or not (reader.has_manifest or reader.parts()):
        RunReader.open(run_dir)      # raises the "not a run folder" line every reader of a run gives
    parts = reader.parts()
    if not parts:
        raise UserError(f"{run_dir} has no round results yet: no chunk of its run is done (rerun the command that "
                        "made it to play them)")
    out = []
    for p in parts:
        try:
            schema = pq.read_schema(p)
        except Exception as e:  # noqa: BLE001 - any unreadable part is a user error
            raise UserError(f"cannot read {p}: {e}") from None
        k = seats_of(schema.names)
        cols = ["lineup", "group"] + seat_names(AGENT, k) + seat_names(PENALTY, k)
        missing = [c for c in cols if c not in schema.names]
        if missing or k < 2:
            what = ", ".join(missing) or "agent columns"
            raise UserError(f"cannot read {p}: not a kc-sim round part (missing {what})")
        out.append((p, cols))
    return out


def _deals_and_family(reader: RunReader, index: int) -> tuple[int, tuple]:
    """Deals per line-up of a run (:meth:`kc_sim.runs.RunReader.n_deals`) and its *family*:
    the runs of one family played the same deals (group ``g`` of each is the deal of seed
    ``derive(seed, g)``), so ``("seed", s)`` from the manifest; a folder without one is a
    family of its own."""
    try:
        family = ("seed", reader.manifest.config.seed)
    except (OSError, UserError):
        family = ("run", index)
    return reader.n_deals(), family


def _add_played(column, names: dict) -> None:
    """Add to ``names`` (name -> agent index) the agents that played in an ``agent_<s>``
    column (a part's dictionary lists every agent of its run, not only those that played)."""
    d = column.combine_chunks()
    if hasattr(d, "dictionary"):
        used = np.unique(d.indices.drop_null().to_numpy().astype(np.int64))
        played = [d.dictionary[int(i)].as_py() for i in used]
    else:  # plain strings
        played = sorted(set(d.drop_null().to_pylist()))
    for name in played:
        names.setdefault(str(name), len(names))


def load_comparisons(run_dirs) -> Comparisons:
    """Every pairwise comparison in the rounds of ``run_dirs``, summed per (unit, pair), read
    one part at a time.

    **The unit is the deal, across runs.** Runs made with the same ``--seed`` played the same
    deals (group ``g`` of each is the same deal seed), so their rounds of deal ``g`` are
    correlated: they are summed into one unit, which the bootstrap resamples as a whole.
    Runs with different seeds played independent deals and have units of their own. To keep
    memory flat at any number of rounds, the deals of a family of runs are pooled into at
    most :data:`kc_sim.stats.sums.MAX_BATCHES` batches of consecutive deals
    (``batch = group // width``, as the clustered intervals of figures and reports pool
    them); deals are independent, so resampling batches estimates the same variance. Up to
    that many deals, a unit is one deal: exactly the per-deal bootstrap."""
    if isinstance(run_dirs, (str, Path)):
        run_dirs = [run_dirs]
    run_dirs = [Path(d) for d in run_dirs]
    if not run_dirs:
        raise UserError("give at least one run folder")
    seen: dict[Path, Path] = {}
    for d in run_dirs:
        key = d.resolve()
        if key in seen:
            raise UserError(f"run folder {str(d)!r} is given twice (as {str(seen[key])!r}): give each run once")
        seen[key] = d

    runs = []                                       # (run, parts, family)
    family_deals: dict[tuple, int] = {}
    for i, run in enumerate(run_dirs):
        reader = RunReader(run)
        parts = _run_parts(reader)
        deals, family = _deals_and_family(reader, i)
        family_deals[family] = max(family_deals.get(family, 0), deals)
        runs.append((reader, parts, family))
    width = {f: batch_width(d) for f, d in family_deals.items()}
    offset, units = {}, 0
    for f, d in family_deals.items():             # in order of first appearance
        offset[f] = units
        units += max(1, math.ceil(d / width[f]))

    names: dict[str, int] = {}
    sums: dict[tuple[int, int], np.ndarray] = {}    # (a, b) -> (2, units): score of a, count
    rounds_by_agent: dict[int, int] = {}
    n_rounds = 0
    for _, parts, family in runs:
        for p, cols in parts:                       # (verified by the reader in _run_parts)
            t = pq.read_table(p, columns=cols)
            k = (len(cols) - 2) // 2
            n = t.num_rows
            if n == 0:
                continue
            n_rounds += n
            unit = offset[family] + t.column("group").to_numpy().astype(np.int64) // width[family]
            if unit.max() >= offset[family] + math.ceil(family_deals[family] / width[family]):
                raise UserError(f"cannot read {p}: deal numbers beyond the {family_deals[family]:,} deals "
                                "its run folder's manifest schedules")
            for s in range(k):
                _add_played(t.column(f"{AGENT}{s}"), names)
            codes, pen = seat_arrays(t, k, PENALTY, names)
            _add_part(sums, rounds_by_agent, codes, pen, unit, len(names), units)
    agents = sorted(names, key=names.get)
    if len(agents) < 2 or not sums:
        raise UserError(f"a leaderboard needs rounds between at least 2 agents; found {len(agents)} "
                        f"({', '.join(agents) or 'none'}) in {', '.join(map(str, run_dirs))}")
    pair_u, pair_a, pair_b, pair_s, pair_c = [], [], [], [], []
    for (x, y), acc in sorted(sums.items()):
        acc = np.pad(acc, ((0, 0), (0, units - acc.shape[1])))
        met = np.flatnonzero(acc[1] > 0)
        pair_u.append(met)
        pair_a.append(np.full(len(met), x, np.int64))
        pair_b.append(np.full(len(met), y, np.int64))
        pair_s.append(acc[0, met])
        pair_c.append(acc[1, met])
    unit = np.concatenate(pair_u)
    used, dense = np.unique(unit, return_inverse=True)     # units where some pair met, in order
    order = np.lexsort((np.concatenate(pair_b), np.concatenate(pair_a), dense))
    rounds = np.array([rounds_by_agent.get(i, 0) for i in range(len(agents))], np.int64)
    return Comparisons(agents, dense[order], np.concatenate(pair_a)[order], np.concatenate(pair_b)[order],
                       np.concatenate(pair_s)[order], np.concatenate(pair_c)[order], rounds, len(used), n_rounds,
                       len(family_deals), sum(family_deals.values()))



def leaderboard(run_dirs, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0, level: float = 0.95):
    """The leaderboard of every agent in ``run_dirs`` as a DataFrame, best first: the
    comparisons of :func:`load_comparisons` rated by
    :func:`~kc_sim.stats.ratings.rate_comparisons` (its doc has the columns and ``attrs``)."""
    if bootstrap < 0:
        raise UserError(f"bad bootstrap count {bootstrap}: expected 0 or more")
    return rate_comparisons(load_comparisons(run_dirs), bootstrap, seed, level)


def format_leaderboard(df) -> str:
    """The leaderboard as a plain text table, followed (when ``df.attrs`` holds the
    :class:`Metagame`) by the pairwise matrix, the cycles, Bradley-Terry's fit and the Nash
    mixture (:func:`format_metagame`)."""
    how = df["interval"].iloc[0] if len(df) else ""
    lines = [f"{'#':>2s} {'agent':18s} {'rating [95% CI]':26s} {'beats next':>10s} {'score':>7s} "
             f"{'rounds':>10s}"]
    for _, r in df.iterrows():
        nxt = "" if math.isnan(r["p_vs_next"]) else f"{100 * r['p_vs_next']:9.1f}%"
        lines.append(f"{int(r['rank']):>2d} {str(r['agent']):18s} "
                     f"{r['rating']:+7.1f} [{r['rating_lo']:+7.1f}, {r['rating_hi']:+7.1f}]  "
                     f"{nxt:>10s} {100 * r['score_rate']:6.1f}% {int(r['rounds']):>10,d}")
    lines.append(f"rating: Bradley-Terry on who has the lower penalty in each pair of seats of a round, "
                 f"Elo scale, mean agent 0; intervals: {how}"
                 + (" over deals" if how == "bootstrap" else "") + "; beats next: chance to beat the next agent down")
    meta = df.attrs.get("metagame")
    if isinstance(meta, Metagame):
        lines += ["", format_metagame(df, meta)]
    return "\n".join(lines)


#: cycles printed in full (the rest are counted; all are in leaderboard_cycles.parquet)
SHOW_CYCLES = 8


def excludes_half(lo: float, hi: float) -> bool:
    """Whether a share's 95% interval excludes 50% (the ``*`` of the pairwise matrix, here
    and in the report's)."""
    return lo > 0.5 or hi < 0.5


def _pct(x: float, signed: bool = False, digits: int = 1) -> str:
    return "n/a" if x is None or math.isnan(x) else (f"{100 * x:+.{digits}f}" if signed else f"{100 * x:.{digits}f}")


def _digits_apart(x: float, y: float, most: int = 3) -> int:
    """The fewest decimals (1 to ``most``) at which two percentages print differently, so a
    line comparing them does not show two equal numbers for values that differ."""
    for d in range(1, most + 1):
        if _pct(x, digits=d) != _pct(y, digits=d):
            return d
    return most


def untold_lines(df, meta: Metagame) -> list[str]:
    """For each agent in the Nash mixture's support, one line naming the agents outside it
    that it is not told apart from (their share's 95% interval includes 50%): the mixture
    breaks those ties by this run's noise, so another seed may move the weight (exact copies,
    the same share in every deal, are split equally instead)."""
    weight = dict(zip(df["agent"].astype(str), df["nash_weight"]))
    untold: dict[str, list[str]] = {}
    for r in meta.pairs.itertuples(index=False):
        a, b = str(r.agent), str(r.opponent)
        wa, wb = weight.get(a, math.nan), weight.get(b, math.nan)
        if not (wa > 0 >= wb) or excludes_half(r.share_lo, r.share_hi):
            continue
        d = max(_digits_apart(r.share_lo, r.share_hi), *(_digits_apart(x, 0.5) for x in (r.share, r.share_lo, r.share_hi)))
        untold.setdefault(a, []).append(f"{b} ({_pct(r.share, digits=d)}% [{_pct(r.share_lo, digits=d)}, "
                                        f"{_pct(r.share_hi, digits=d)}])")
    return [f"{a} is not told apart from {', '.join(others)} ({a}'s share against each, 95% interval around 50%): "
            "the mixture's weight goes to it by this run's noise, and another seed may move it"
            for a, others in untold.items()]


def format_metagame(df, meta: Metagame) -> str:
    """The text after the Bradley-Terry table: the pairwise matrix (row agent's share
    against the column agent, ``*`` where the 95% interval excludes 50%), the intransitive
    cycles (or "no intransitive cycles"), the fit line ("BT fits: ..." or "BT does not fit:
    worst pair ...") and the Nash mixture with each agent's Nash rating."""
    agents = df["agent"].astype(str).tolist()
    n = len(agents)
    cell = {(r.agent, r.opponent): r for r in meta.pairs.itertuples(index=False)}
    width = max(18, max(len(a) for a in agents))
    lines = ["pairwise: % of comparisons the row agent finishes ahead of the column agent "
             "(* : 95% interval excludes 50%; . : never met)",
             f"{'#':>2s} {'agent':{width}s} " + " ".join(f"{j:>6d}" for j in range(1, n + 1))]
    for i, a in enumerate(agents, start=1):
        cells = []
        for b in agents:
            r = cell.get((a, b))
            if a == b:
                cells.append(f"{'-':>6s}")
            elif r is None:
                cells.append(f"{'.':>6s}")
            else:
                mark = "*" if excludes_half(r.share_lo, r.share_hi) else " "
                cells.append(f"{_pct(r.share):>5s}{mark}")
        lines.append(f"{i:>2d} {a:{width}s} " + " ".join(cells))
    cycles = meta.cycles
    if len(cycles) == 0:
        lines.append("no intransitive cycles (no agents beat each other in a ring)")
    else:
        sig = int(cycles["significant"].sum())
        lines.append(f"intransitive cycles: {len(cycles)} ({sig} significant: every step's 95% interval "
                     "above 50%); each agent beats the next")
        for r in cycles.head(SHOW_CYCLES).itertuples(index=False):
            steps = ", ".join(f"{_pct(s)}% [{_pct(lo)}]" for s, lo in zip(r.shares, r.share_lo))
            support = "" if math.isnan(r.support) else f", bootstrap support {100 * r.support:.0f}%"
            lines.append(f"  {r.cycle}: {steps} (share [lower end])"
                         f"{'  SIGNIFICANT' if r.significant else '  not significant'}{support}")
        if len(cycles) > SHOW_CYCLES:
            lines.append(f"  ... {len(cycles) - SHOW_CYCLES} more in {CYCLES_FILE}")
    lines.append(format_fit(meta.fit))
    lines.append("Nash averaging: maximum-entropy Nash mixture of the meta-game (payoff = share - 50%); "
                 "Nash rating = payoff against the mixture, pp (0 in the support)")
    lines.append(f"{'#':>2s} {'agent':{width}s} {'weight':>7s}  {'Nash rating [95% CI]':24s} {'in support':>10s}")
    k = digits_for_width(df["nash_rating_lo"], df["nash_rating_hi"])
    for r in df.itertuples(index=False):
        weight = "n/a" if math.isnan(r.nash_weight) else f"{100 * r.nash_weight:.1f}%"
        support = getattr(r, "nash_support", math.nan)
        cell = _pct(r.nash_rating, True, k)
        # no interval, or in the support of every resample (see its column): the rating alone
        if not (math.isnan(r.nash_rating_lo) or r.nash_rating_lo == r.nash_rating_hi == 0.0):
            cell += f" [{_pct(r.nash_rating_lo, True, k)}, {_pct(r.nash_rating_hi, True, k)}]"
        share = "" if math.isnan(support) else f"{100 * support:9.0f}%"
        lines.append(f"{int(r.rank):>2d} {str(r.agent):{width}s} {weight:>7s}  {cell:24s} {share:>10s}")
    if "nash_support" in df and df["nash_support"].notna().any():
        lines.append("in support: share of the bootstrap resamples in which the agent is in the mixture's support "
                     "(its Nash rating is 0 there)")
    lines += untold_lines(df, meta)
    return "\n".join(lines)


def format_fit(fit: dict) -> str:
    """One line: "BT fits: ..." or "BT does not fit: worst pair ...", with the Wald
    statistic, its degrees of freedom and p-value; then a line naming the pairs whose share
    was the same in every deal (left out of the test), e.g. two agents that play identically."""
    level = fit.get("level_pairs") or []
    note = ""
    if level:
        what = "; ".join(f"{a} and {b}: {_pct(sh)}% in every deal" + (" (they played identically)" if sh == 0.5
                                                                          else "")
                         for a, b, sh in level)
        note = f"\nthe same share in every deal, left out of the fit test: {what}"
    if fit.get("df", 0) == 0:
        return "BT fits: no test (no degrees of freedom left: every pair's share is fitted exactly)" + note
    stat = f"chi2 {fit['chi2']:.2f} on {fit['df']} df, p = {fit['p_value']:.3g}"
    worst = ""
    if "worst_agent" in fit:
        d = _digits_apart(fit["worst_share"], fit["worst_bt_share"])
        worst = (f"{fit['worst_agent']} vs {fit['worst_opponent']}: observed {_pct(fit['worst_share'], digits=d)}%, "
                 f"BT {_pct(fit['worst_bt_share'], digits=d)}% (z = {fit['worst_z']:+.1f})")
    if fit["fits"]:
        return f"BT fits: {stat}" + (f"; largest residual {worst}" if worst else "") + note
    return (f"BT does not fit: worst pair {worst}; {stat}" if worst else f"BT does not fit: {stat}") + note


def save_leaderboard(df, out_dir) -> dict:
    """Write ``leaderboard.parquet`` (with Bradley-Terry's fit test as JSON under
    :data:`FIT_KEY` in its metadata), ``leaderboard_pairs.parquet``,
    ``leaderboard_cycles.parquet`` and ``leaderboard.png`` into ``out_dir``; returns the
    paths. The pairs and cycles files are written only when ``df.attrs`` holds the
    :class:`Metagame`."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot write to {out_dir}: {e.strerror or e}") from None
    meta = df.attrs.get("metagame")
    plain = pd.DataFrame(df)
    plain.attrs = {}
    table = pa.Table.from_pandas(plain, preserve_index=False)
    fit = {FIT_KEY: json.dumps(meta.fit)} if isinstance(meta, Metagame) else None
    files = {"leaderboard": write_parquet(table, out_dir / LEADERBOARD_FILE, fit)}
    if isinstance(meta, Metagame):
        files["pairs"] = write_parquet(pa.Table.from_pandas(meta.pairs, preserve_index=False), out_dir / PAIRS_FILE)
        files["cycles"] = write_parquet(_cycles_table(meta.cycles), out_dir / CYCLES_FILE)
    files["figure"] = plot_leaderboard(df, out_dir / FIGURE_FILE)
    return files


def _cycles_table(cycles: pd.DataFrame) -> pa.Table:
    """The cycles with an explicit schema (an empty table keeps its list columns)."""
    schema = pa.schema([("cycle", pa.string()), ("length", pa.int64()), ("agents", pa.list_(pa.string())),
                        ("shares", pa.list_(pa.float64())), ("share_lo", pa.list_(pa.float64())),
                        ("min_share", pa.float64()), ("min_lo", pa.float64()), ("significant", pa.bool_()),
                        ("support", pa.float64())])
    return pa.Table.from_pydict({f.name: cycles[f.name].tolist() for f in schema}, schema=schema)


def read_fit(path) -> dict:
    """Bradley-Terry's fit test stored in a ``leaderboard.parquet`` (empty if absent)."""
    meta = pq.read_schema(path).metadata or {}
    key = FIT_KEY.encode()
    return json.loads(meta[key]) if key in meta else {}


def plot_leaderboard(df, path) -> Path:
    """A horizontal interval plot of the ratings, best on top (drawn on the Agg canvas
    through matplotlib's object interface, so a notebook's backend is left alone)."""
    path = Path(path)
    n = len(df)
    fig = Figure(figsize=(7, 1.2 + 0.45 * n))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    y = np.arange(n)[::-1]
    r = df["rating"].to_numpy()
    ax.errorbar(r, y, xerr=[r - df["rating_lo"].to_numpy(), df["rating_hi"].to_numpy() - r],
                fmt="o", color="tab:blue", ecolor="tab:gray", capsize=4)
    ax.set_yticks(y)
    ax.set_yticklabels(df["agent"].astype(str).tolist())
    ax.axvline(0, color="lightgray", lw=1, zorder=0)
    ax.set_xlabel("rating (Elo scale, mean agent 0), 95% interval")
    ax.set_title("kc-sim leaderboard (Bradley-Terry on lower penalty)")
    fig.tight_layout()
    with atomic_file(path, "wb") as f:
        fig.savefig(f, format="png", dpi=110)
    return path
