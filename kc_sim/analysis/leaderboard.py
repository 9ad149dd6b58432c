"""A rating for every agent across the rounds of one or more run folders.

The model (Bradley-Terry on the pairs of each round; see docs/agents.md, Stronger agents):

* every round is split into its pairs of seats: in a pair, the agent with the **lower
  penalty** beats the other, equal penalties are a tie (half a win each). In a
  two-player round that went out, the winner beats the loser; a blocked round still
  ranks the two hands. With K seats a round gives K(K-1)/2 pairs (Plackett-Luce would
  weigh them slightly differently; the pairwise likelihood gives the same ratings when
  strengths are close and handles ties).
* agent i has a strength theta_i, and P(i beats j) = 1 / (1 + exp(theta_j - theta_i)).
  The strengths are fitted by maximum likelihood (Newton's method, sum of theta = 0),
  with one virtual tied comparison added for every pair of agents that met, so that an
  agent that always wins still gets a finite rating.
* the **rating** is theta on the Elo scale (400 / ln 10 per unit of theta), centred on the
  mean agent: a 100-point gap means the stronger agent beats the weaker one 64% of the
  time (in pairs that are not tied).
* **intervals** (95%) come from a bootstrap over deals: the unit resampled is a rotation
  group (one deal played in every seat rotation and by every line-up of a run), so the
  correlation that duplicate deals create between the rounds of a group is kept. The
  rounds are read one part at a time and summed per deal; past 16,384 deals a run's deals
  are pooled into that many batches of consecutive deals, which resamples the same
  independent deals in blocks (same variance), so memory stays flat. With
  ``bootstrap=0`` they come from the curvature of the likelihood instead (which treats
  pairs as independent and is too narrow under duplicate deals).

Agents are matched across run folders by their label (``greedy``, ``planner``,
``greedy#2`` for a second copy in self-play, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numba as nb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from kc_sim.analysis import scan
from kc_sim.errors import UserError
from kc_sim.stats import Z95, z_of
from kc_sim.tournament import results
from kc_sim.tournament.results import agent_codes, seats_of
from kc_sim.tournament.schema import AGENT, PENALTY, seat_names

ELO = 400.0 / math.log(10.0)
LEADERBOARD_FILE = "leaderboard.parquet"
FIGURE_FILE = "leaderboard.png"
DEFAULT_BOOTSTRAP = 200


@dataclass
class Comparisons:
    """Pairwise results aggregated per (unit, pair): ``unit`` (batch of deals, across runs),
    ``a`` < ``b`` agent indices, ``score`` (wins of a over b, ties count 1/2), ``count``."""

    agents: list[str]
    unit: np.ndarray
    a: np.ndarray
    b: np.ndarray
    score: np.ndarray
    count: np.ndarray
    rounds: np.ndarray          # rounds played, by agent
    n_units: int
    n_rounds: int


def _run_parts(run_dir: Path) -> list[tuple[Path, list[str]]]:
    """The round parts of a run folder, each with the columns the comparisons read (checked
    before any is read, so a bad folder fails at once)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UserError(f"bad run folder {str(run_dir)!r}: no such folder (give a folder written by kc-sim tournament)")
    parts = results.parts(run_dir)
    if not parts:
        raise UserError(f"bad run folder {str(run_dir)!r}: no round results in {run_dir / results.ROUNDS_DIR} "
                        "(give a folder written by kc-sim tournament)")
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


def _deals(run_dir: Path, parts) -> int:
    """Deals per line-up of a run (:func:`kc_sim.analysis.scan.n_deals`; a folder without a manifest
    counts them from its parts)."""
    try:
        manifest = results.read_manifest(run_dir)
    except (OSError, ValueError):
        manifest = {}
    return scan.n_deals(manifest, parts)


def _seat_codes(column, names: dict) -> np.ndarray:
    """An ``agent_<s>`` column as agent indices (-1: no agent), first adding to ``names``
    the agents that played in it (a part's dictionary lists every agent of its run)."""
    d = column.combine_chunks()
    if hasattr(d, "dictionary"):
        used = np.unique(d.indices.drop_null().to_numpy().astype(np.int64))
        played = [d.dictionary[int(i)].as_py() for i in used]
    else:  # plain strings
        played = sorted(set(d.drop_null().to_pylist()))
    for name in played:
        names.setdefault(str(name), len(names))
    return agent_codes(column, names)


def load_comparisons(run_dirs) -> Comparisons:
    """Every pairwise comparison in the rounds of ``run_dirs``, summed per (batch of
    deals, pair), read one part at a time.

    The unit the bootstrap resamples is the deal. To keep memory flat at any number of
    rounds, the deals of a run are pooled into at most ``scan.MAX_BATCHES`` batches of
    consecutive deals (``batch = group // width``, as :mod:`kc_sim.analysis.scan` pools them for
    the clustered intervals of figures and reports); deals are independent, so resampling
    batches estimates the same variance. A run of at most ``scan.MAX_BATCHES`` deals has one
    deal per batch: exactly the per-deal bootstrap."""
    if isinstance(run_dirs, (str, Path)):
        run_dirs = [run_dirs]
    run_dirs = [Path(d) for d in run_dirs]
    if not run_dirs:
        raise UserError("give at least one run folder")

    names: dict[str, int] = {}
    sums: dict[tuple[int, int], np.ndarray] = {}    # (a, b) -> (2, units): score of a, count
    rounds_by_agent: dict[int, int] = {}
    offset, n_rounds, units = 0, 0, 0
    for run in run_dirs:
        parts = _run_parts(run)
        deals = _deals(run, [p for p, _ in parts])
        width = scan.batch_width(deals)
        units = offset + math.ceil(deals / width)
        for p, cols in parts:
            t = pq.read_table(p, columns=cols)
            k = (len(cols) - 2) // 2
            n = t.num_rows
            if n == 0:
                continue
            n_rounds += n
            unit = offset + t.column("group").to_numpy().astype(np.int64) // width
            units = max(units, int(unit.max()) + 1)     # groups beyond the manifest's count
            codes = np.stack([_seat_codes(t.column(f"{AGENT}{s}"), names) for s in range(k)], axis=1)
            pen = np.stack([t.column(f"{PENALTY}{s}").fill_null(-1).to_numpy().astype(np.int64)
                            for s in range(k)], axis=1)
            _add_part(sums, rounds_by_agent, codes, pen, unit, len(names), units)
        offset = units
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
                       np.concatenate(pair_s)[order], np.concatenate(pair_c)[order], rounds, len(used), n_rounds)


def _add_part(sums: dict, rounds_by_agent: dict, codes, pen, unit, n: int, units: int) -> None:
    """Add one part's rounds to the per-(agent pair, unit) sums. A part holds consecutive
    deals, so its units span a short range: the compiled :func:`_pair_sums` fills dense
    (pair, unit in that range) arrays, which are then added to the pairs that met."""
    k = codes.shape[1]
    for s in range(k):
        ok = pen[:, s] >= 0
        for i, c in enumerate(np.bincount(codes[ok, s], minlength=n)):
            if c:
                rounds_by_agent[i] = rounds_by_agent.get(i, 0) + int(c)
    first = int(unit.min())
    span = int(unit.max()) - first + 1
    won = np.zeros(n * n * span)
    count = np.zeros(n * n * span)
    _pair_sums(codes, pen, unit - first, n, span, won, count)
    won, count = won.reshape(n * n, span), count.reshape(n * n, span)
    for pair in np.flatnonzero(count.any(axis=1)):
        x, y = divmod(int(pair), n)
        acc = sums.setdefault((x, y), np.zeros((2, units)))
        if acc.shape[1] < units:            # a later run (or group) widened the units
            acc = sums[(x, y)] = np.pad(acc, ((0, 0), (0, units - acc.shape[1])))
        acc[0, first:first + span] += won[pair]
        acc[1, first:first + span] += count[pair]


@nb.njit(cache=True)
def _pair_sums(codes, pen, unit, n, span, won, count):
    """The comparisons of every round: each pair of seats both dealt in, held by different
    agents a < b, adds 1 to ``count`` and a's score (1 for the lower penalty, 1/2 for a
    tie) to ``won``, at index ``(a * n + b) * span + unit``."""
    rows, k = codes.shape
    for i in range(rows):
        for s in range(k):
            ps = pen[i, s]
            if ps < 0:
                continue
            for t in range(s + 1, k):
                pt = pen[i, t]
                a, b = codes[i, s], codes[i, t]
                if pt < 0 or a == b:
                    continue
                score = 1.0 if ps < pt else 0.5 if ps == pt else 0.0
                if a > b:
                    a, b, score = b, a, 1.0 - score
                key = (a * n + b) * span + unit[i]
                won[key] += score
                count[key] += 1.0


def _components(n: int, met: np.ndarray) -> list[list[int]]:
    seen, comps = set(), []
    for start in range(n):
        if start in seen:
            continue
        stack, comp = [start], []
        seen.add(start)
        while stack:
            i = stack.pop()
            comp.append(i)
            for j in np.flatnonzero(met[i]):
                if int(j) not in seen:
                    seen.add(int(j))
                    stack.append(int(j))
        comps.append(sorted(comp))
    return comps


def fit_bt(W: np.ndarray, N: np.ndarray, prior: float = 1.0, tol: float = 1e-10,
           max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry strengths from ``W[i, j]`` (score of i against j) and ``N[i, j]``
    (comparisons of i and j, symmetric), with ``prior`` virtual tied comparisons per pair
    that met. Returns (theta with sum 0, covariance of theta from the observed information)."""
    n = W.shape[0]
    met = N > 0
    W = W + 0.5 * prior * met
    N = N + prior * met
    theta = np.zeros(n)
    for _ in range(max_iter):
        d = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = (W - N * p).sum(axis=1)
        v = N * p * (1.0 - p)
        H = v.copy()
        np.fill_diagonal(H, 0.0)
        H[np.diag_indices(n)] = -v.sum(axis=1) + np.diag(v)
        # solve with the sum-to-zero constraint (H is singular along the all-ones direction)
        A = -H + np.ones((n, n)) / n
        step = np.linalg.solve(A, grad)
        big = np.max(np.abs(step))
        if big > 2.0:               # damp the first steps on lopsided data
            step *= 2.0 / big
        theta = theta + step
        theta -= theta.mean()
        if np.max(np.abs(step)) < tol:
            break
    d = theta[:, None] - theta[None, :]
    p = 1.0 / (1.0 + np.exp(-d))
    v = N * p * (1.0 - p)
    info = np.diag(v.sum(axis=1)) - v
    np.fill_diagonal(info, v.sum(axis=1) - np.diag(v))
    cov = np.linalg.pinv(info)
    return theta, cov


def _totals(c: Comparisons, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    n = len(c.agents)
    w = 1.0 if weights is None else weights[c.unit]
    idx = c.a * n + c.b
    S = np.bincount(idx, weights=c.score * w, minlength=n * n).reshape(n, n)
    C = np.bincount(idx, weights=c.count * w, minlength=n * n).reshape(n, n)
    W = S + (C - S).T
    N = C + C.T
    return W, N


def leaderboard(run_dirs, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0, level: float = 0.95):
    """The leaderboard of every agent in ``run_dirs`` as a DataFrame, best first (see the
    module doc for the model). Columns: ``rank``, ``agent``, ``rating``, ``rating_lo``,
    ``rating_hi`` (Elo scale, mean agent 0), ``theta`` (+ ``theta_lo``, ``theta_hi``),
    ``p_vs_mean`` (chance to beat an agent of rating 0), ``p_vs_next`` (chance to beat the
    next agent down), ``score_rate`` (share of its pairwise comparisons won, ties 1/2),
    ``comparisons``, ``rounds``, ``interval`` (bootstrap or hessian)."""
    if bootstrap < 0:
        raise UserError(f"bad bootstrap count {bootstrap}: expected 0 or more")
    c = load_comparisons(run_dirs)
    n = len(c.agents)
    W, N = _totals(c)
    comps = _components(n, N > 0)
    if len(comps) > 1:
        groups = "; ".join(", ".join(c.agents[i] for i in comp) for comp in comps)
        raise UserError(f"these agents never met across the groups {groups}: a rating cannot compare them; "
                        "add a run where the groups play each other")
    theta, cov = fit_bt(W, N)
    z = Z95 if level == 0.95 else z_of(level)
    if bootstrap > 0:
        rng = np.random.default_rng(seed)
        boot = np.empty((bootstrap, n))
        for r in range(bootstrap):
            wts = rng.poisson(1.0, size=c.n_units).astype(np.float64)
            Wb, Nb = _totals(c, wts)
            boot[r], _ = fit_bt(Wb, Nb)
        alpha = (1.0 - level) / 2
        lo = np.quantile(boot, alpha, axis=0)
        hi = np.quantile(boot, 1 - alpha, axis=0)
        how = "bootstrap"
    else:
        se = np.sqrt(np.maximum(np.diag(cov), 0.0))
        lo, hi = theta - z * se, theta + z * se
        how = "hessian"
    comparisons = N.sum(axis=1)
    score = W.sum(axis=1)
    order = np.argsort(-theta, kind="stable")
    rows = []
    for rank, i in enumerate(order, start=1):
        nxt = order[rank] if rank < n else None
        rows.append({
            "rank": rank, "agent": c.agents[i],
            "rating": ELO * theta[i], "rating_lo": ELO * lo[i], "rating_hi": ELO * hi[i],
            "theta": theta[i], "theta_lo": lo[i], "theta_hi": hi[i],
            "p_vs_mean": 1.0 / (1.0 + math.exp(-theta[i])),
            "p_vs_next": (1.0 / (1.0 + math.exp(theta[nxt] - theta[i]))) if nxt is not None else float("nan"),
            "score_rate": score[i] / comparisons[i] if comparisons[i] else float("nan"),
            "comparisons": int(round(comparisons[i])), "rounds": int(c.rounds[i]), "interval": how,
        })
    df = pd.DataFrame(rows)
    df.attrs["units"] = c.n_units
    df.attrs["rounds"] = c.n_rounds
    return df


def format_leaderboard(df) -> str:
    """The leaderboard as a plain text table."""
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
    return "\n".join(lines)


def save_leaderboard(df, out_dir) -> dict:
    """Write ``leaderboard.parquet`` and ``leaderboard.png`` into ``out_dir``; returns the paths."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot write to {out_dir}: {e.strerror or e}") from None
    table = pa.Table.from_pandas(df, preserve_index=False)
    path = results.write_atomic(table, out_dir / LEADERBOARD_FILE)
    fig_path = plot_leaderboard(df, out_dir / FIGURE_FILE)
    return {"leaderboard": path, "figure": fig_path}


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
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.savefig(tmp, format="png", dpi=110)
    tmp.replace(path)
    return path
