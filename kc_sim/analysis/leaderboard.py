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
* **intervals** (95%) come from a bootstrap over deals: the unit resampled is a deal (one
  deal played in every seating and by every line-up of a run, and by every run made with
  the same ``--seed``: runs with one seed played the same deals, so their rounds of a deal
  are resampled together; runs with different seeds are independent), so the correlation
  that duplicate deals create between the rounds of a deal is kept. The rounds are read
  one part at a time and summed per deal; past 16,384 deals a family of runs' deals are
  pooled into that many batches of consecutive deals, which resamples the same
  independent deals in blocks (same variance), so memory stays flat. With
  ``bootstrap=0`` they come from the sandwich covariance clustered by deal
  (:func:`sandwich_cov`) and Student's quantile on the deals minus one. The bootstrap's
  intervals of the ratings and pairwise shares are the estimate plus or minus Student's
  quantile on the deals minus one times the resamples' standard deviation, scaled by
  ``sqrt(g/(g-1))`` (:func:`bootstrap_interval`): 200 resamples estimate a standard deviation
  well, but not the 2.5% and 97.5% points a percentile interval reads (those came out short,
  92.8-95.2% coverage). The Nash ratings, bounded above by 0, keep percentile intervals
  (median-unbiased quantiles, widened for few deals by :func:`widen`).
* **agents that did not all meet** cannot be rated against each other: the leaderboard
  says so. In a bootstrap resample that leaves some agents apart (a few deals, sparse
  line-ups) the resample is drawn again, and after 100 draws each group is fitted on its
  own, centred on the mean agent (:func:`fit_bt`), the same on every linear-algebra library.

Beside the ratings, the leaderboard reports the pairwise meta-game they summarise
(:mod:`kc_sim.analysis.metagame`): the share of comparisons each agent finishes ahead of
each other one, with 95% intervals from the same bootstrap over deals; the intransitive
cycles among them (a > b > c > a), flagged significant when every step's interval lies
above 1/2; a goodness-of-fit test of Bradley-Terry's predicted shares; and Nash averaging,
the maximum-entropy Nash mixture of the meta-game with each agent's payoff against it.
A single rating cannot show a cycle; these say when the rating hides one.

Agents are matched across run folders by their label (``greedy``, ``planner``,
``greedy#2`` for a second copy in self-play, ...).
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numba as nb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from kc_sim.analysis import metagame
from kc_sim.analysis.text import digits_for_width
from kc_sim.errors import UserError
from kc_sim.records.atomic import atomic_file
from kc_sim.runs import RunReader, layout
from kc_sim.runs.parts import write_parquet
from kc_sim.runs.schema import AGENT, PENALTY, agent_codes, seat_names, seats_of
from kc_sim.stats import rate_from_sums, t_of, z_of
from kc_sim.stats.sums import batch_width

ELO = 400.0 / math.log(10.0)
LEADERBOARD_FILE = "leaderboard.parquet"
FIGURE_FILE = "leaderboard.png"
PAIRS_FILE = "leaderboard_pairs.parquet"
CYCLES_FILE = "leaderboard_cycles.parquet"
#: key of the Bradley-Terry fit test (JSON) in the metadata of leaderboard.parquet
FIT_KEY = "kc_sim.bt_fit"
DEFAULT_BOOTSTRAP = 200
#: the p-value below which Bradley-Terry "does not fit"
FIT_LEVEL = 0.05


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
    families: int = 1           # sets of runs on their own deals (runs with one seed share theirs)
    n_deals: int = 0            # deals behind the units (a unit is a batch of deals past 16,384 deals)


def _run_parts(reader: RunReader) -> list[tuple[Path, list[str]]]:
    """The round parts of a run folder, each with the columns the comparisons read (checked
    before any is read, so a bad folder fails at once)."""
    run_dir = reader.path
    if not run_dir.is_dir():
        raise UserError(f"bad run folder {str(run_dir)!r}: no such folder (give a folder written by kc-sim tournament)")
    parts = reader.parts()
    if not parts:
        raise UserError(f"bad run folder {str(run_dir)!r}: no round results in {run_dir / layout.ROUNDS} "
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
            codes = np.stack([_seat_codes(t.column(f"{AGENT}{s}"), names) for s in range(k)], axis=1)
            pen = np.stack([t.column(f"{PENALTY}{s}").fill_null(-1).to_numpy().astype(np.int64)
                            for s in range(k)], axis=1)
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
    that met. Returns (theta with sum 0, covariance of theta from the observed information).

    **Agents that did not all meet.** The strengths of groups of agents with no comparison
    between them are not identified by the data; each connected group (:func:`_components`)
    is fitted on its own, by Newton's method with its strengths summing to zero, so an agent
    with no comparison at all stays at the mean (0) and a group is centred on it. Every
    linear system solved is that of one connected group, which is non-singular, so the fit
    is the same whatever the linear-algebra library (no singular matrix is ever handed to
    it, and no fallback path depends on how it reports one)."""
    n = W.shape[0]
    met = N > 0
    W = W + 0.5 * prior * met
    N = N + prior * met
    theta = np.zeros(n)
    for comp in _components(n, met):
        if len(comp) > 1:
            idx = np.asarray(comp)
            theta[idx] = _fit_component(W[np.ix_(idx, idx)], N[np.ix_(idx, idx)], tol, max_iter)
    theta -= theta.mean()
    d = theta[:, None] - theta[None, :]
    p = 1.0 / (1.0 + np.exp(-d))
    v = N * p * (1.0 - p)
    info = np.diag(v.sum(axis=1)) - v
    np.fill_diagonal(info, v.sum(axis=1) - np.diag(v))
    cov = np.linalg.pinv(info)
    return theta, cov


def _fit_component(W: np.ndarray, N: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """Newton's method for the strengths of one connected group of agents (sum 0)."""
    n = W.shape[0]
    theta = np.zeros(n)
    for _ in range(max_iter):
        d = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = (W - N * p).sum(axis=1)
        v = N * p * (1.0 - p)
        H = -v
        np.fill_diagonal(H, v.sum(axis=1) - np.diag(v))
        # the sum-to-zero constraint: H is singular along the all-ones direction only
        step = np.linalg.solve(H + np.ones((n, n)) / n, grad)
        big = np.max(np.abs(step))
        if big > 2.0:               # damp the first steps on lopsided data
            step *= 2.0 / big
        theta = theta + step
        theta -= theta.mean()
        if np.max(np.abs(step)) < tol:
            break
    return theta


def sandwich_cov(c: Comparisons, theta: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """The covariance of theta clustered by deal (the sandwich ``I^+ J I^+``): ``I^+`` the
    inverse information of :func:`fit_bt` (``cov``), ``J = g / (g - 1) sum_u s_u s_u'`` with
    ``s_u`` the score (gradient of the log-likelihood) of unit ``u``'s comparisons at theta,
    over the ``g`` units. The information alone treats every comparison as independent, which
    the comparisons of one deal (every seating, every pair of seats, every line-up) are not."""
    n = len(theta)
    p = 1.0 / (1.0 + np.exp(theta[c.b] - theta[c.a]))
    r = c.score - c.count * p                     # d loglik / d theta_a of each (unit, pair)
    g = int(c.n_units)
    scores = np.zeros((g, n))
    np.add.at(scores, (c.unit, c.a), r)
    np.add.at(scores, (c.unit, c.b), -r)
    J = scores.T @ scores * (g / (g - 1) if g > 1 else math.nan)
    return cov @ J @ cov


def _totals(c: Comparisons, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    n = len(c.agents)
    w = 1.0 if weights is None else weights[c.unit]
    idx = c.a * n + c.b
    S = np.bincount(idx, weights=c.score * w, minlength=n * n).reshape(n, n)
    C = np.bincount(idx, weights=c.count * w, minlength=n * n).reshape(n, n)
    W = S + (C - S).T
    N = C + C.T
    return W, N


@dataclass(eq=False)
class Metagame:
    """The pairwise meta-game behind a leaderboard (``df.attrs["metagame"]``): ``pairs`` (one
    row per ordered pair of agents that met), ``cycles`` (one row per intransitive cycle) and
    ``fit`` (Bradley-Terry's goodness of fit). Compared by identity, so pandas can copy and
    concatenate a leaderboard's attrs."""

    pairs: pd.DataFrame
    cycles: pd.DataFrame
    fit: dict


def leaderboard(run_dirs, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0, level: float = 0.95):
    """The leaderboard of every agent in ``run_dirs`` as a DataFrame, best first (see the
    module doc for the model). Columns: ``rank``, ``agent``, ``rating``, ``rating_lo``,
    ``rating_hi`` (Elo scale, mean agent 0), ``theta`` (+ ``theta_lo``, ``theta_hi``),
    ``p_vs_mean`` (chance to beat an agent of rating 0), ``p_vs_next`` (chance to beat the
    next agent down), ``score_rate`` (share of its pairwise comparisons won, ties 1/2),
    ``comparisons``, ``rounds``, ``interval`` (``bootstrap`` over deals, or ``clustered``: the
    sandwich covariance clustered by deal with ``bootstrap=0``), ``nash_weight`` (its
    weight in the maximum-entropy Nash mixture of the meta-game), ``nash_rating`` (its
    payoff, share - 1/2, against that mixture: 0 in the support, negative off it) with
    ``nash_rating_lo``, ``nash_rating_hi`` (bootstrap; NaN with ``bootstrap=0``) and
    ``nash_support`` (the share of bootstrap resamples in which the agent is in the support).

    ``df.attrs``: ``units`` (deals or batches of deals), ``rounds``, and ``metagame``
    (:class:`Metagame`: the pairwise shares, the cycles and Bradley-Terry's fit)."""
    if bootstrap < 0:
        raise UserError(f"bad bootstrap count {bootstrap}: expected 0 or more")
    return rate_comparisons(load_comparisons(run_dirs), bootstrap, seed, level)


def rate_comparisons(c: Comparisons, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0, level: float = 0.95):
    """The leaderboard of :func:`leaderboard` from comparisons already summed per (unit,
    pair) (tests build them directly)."""
    if bootstrap < 0:
        raise UserError(f"bad bootstrap count {bootstrap}: expected 0 or more")
    n = len(c.agents)
    W, N = _totals(c)
    comps = _components(n, N > 0)
    if len(comps) > 1:
        groups = "; ".join(", ".join(c.agents[i] for i in comp) for comp in comps)
        raise UserError(f"these agents never met across the groups {groups}: a rating cannot compare them; "
                        "add a run where the groups play each other")
    theta, cov = fit_bt(W, N)
    boot_shares = None
    if bootstrap > 0:
        boot, boot_shares = resample(c, bootstrap, seed)
        lo, hi = bootstrap_interval(theta, boot, c.n_units, level)
        how = "bootstrap"
    else:
        se = np.sqrt(np.maximum(np.diag(sandwich_cov(c, theta, cov)), 0.0))
        q = t_of(level, max(c.n_units - 1, 1))
        lo, hi = theta - q * se, theta + q * se
        how = "clustered"
    comparisons = N.sum(axis=1)
    score = W.sum(axis=1)
    # best first; agents whose ratings differ only by rounding (a tie) keep their given order, so
    # the rows do not depend on the last bits of the linear-algebra library's arithmetic
    order = np.lexsort((np.arange(n), -np.round(theta, 9)))
    meta, nash = _metagame(c, W, N, theta, order, boot_shares, level)
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
            "nash_weight": nash["weight"][i], "nash_rating": nash["rating"][i],
            "nash_rating_lo": nash["lo"][i], "nash_rating_hi": nash["hi"][i], "nash_support": nash["support"][i],
        })
    df = pd.DataFrame(rows)
    df.attrs["units"] = c.n_units
    df.attrs["families"] = c.families
    df.attrs["deals"] = c.n_deals or c.n_units
    df.attrs["rounds"] = c.n_rounds
    df.attrs["metagame"] = meta
    return df


def resample(c: Comparisons, bootstrap: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``bootstrap`` Poisson resamples of the units (deals) of ``c``, seeded by ``seed``:
    (strengths ``(bootstrap, agents)``, shares ``(bootstrap, agents, agents)``, NaN for pairs
    that did not meet). A resample in which some agents never meet rates nothing: it is
    drawn again, and after 100 draws each group is fitted on its own (:func:`fit_bt`)."""
    n = len(c.agents)
    rng = np.random.default_rng(seed)
    boot = np.empty((bootstrap, n))
    boot_shares = np.empty((bootstrap, n, n))
    for r in range(bootstrap):
        for _ in range(100):
            wts = rng.poisson(1.0, size=c.n_units).astype(np.float64)
            Wb, Nb = _totals(c, wts)
            if len(_components(n, Nb > 0)) == 1:
                break
        boot[r], _ = fit_bt(Wb, Nb)
        boot_shares[r] = metagame.shares(Wb, Nb)
    return boot, boot_shares


def _few_deals_factor(units: int, level: float) -> float:
    """``t_{units-1} / z * sqrt(units / (units - 1))``: how much wider than the bootstrap's
    normal-theory spread an interval over ``units`` deals must be (1.10 at 20 deals, 1.03 at
    100, 1.00 past a few thousand; 1 below 2 units). The two ways a bootstrap over ``units``
    deals is too narrow: the bootstrap variance of a mean is ``(units - 1) / units`` of the
    unbiased (clustered) one, and the bootstrap knows no Student quantile (Hesterberg 2015,
    "What teachers should know about the bootstrap", The American Statistician 69(4), the
    expanded percentile interval)."""
    if units < 2:
        return 1.0
    return t_of(level, units - 1) / z_of(level) * math.sqrt(units / (units - 1))


def bootstrap_interval(est, boot, units: int, level: float = 0.95):
    """The interval of ``est`` from its bootstrap resamples ``boot`` (first axis; NaN, a
    resample where the figure is undefined, left out): ``est -+ z * sd * f``, ``sd`` the
    resamples' standard deviation and ``f`` :func:`_few_deals_factor`, i.e. Student's quantile
    on ``units - 1`` times ``sqrt(units / (units - 1))`` times ``sd``: the clustered t interval
    with the bootstrap's standard error in place of the sandwich's.

    **Why not the percentile interval.** A standard error is estimated well from 200
    resamples, the 2.5% and 97.5% points of their distribution are not (Efron and Tibshirani
    1993, An Introduction to the Bootstrap: 25-200 resamples for a standard error, section 6.4;
    about 1,000 or more for percentile intervals). With 200 resamples a percentile bound is
    the 5th-6th of 200 order statistics: numpy's default (linear) quantile put it 1.4-2.2%
    nearer the estimate than the resamples' ``z * sd`` on average (0.4% or less with 1,000
    resamples), and it varied by 8-10% of that distance from one bootstrap seed to another
    (the standard deviation of 200 resamples by about 5%): a noisy bound covers less than a
    steady one of the same average width. On the coverage study's "difference" model
    (``experiments/bootstrap_intervals.py``: 400 simulated runs per cell, the same runs and
    resamples for every method) the widened percentile intervals of the ratings covered
    94.1-94.8% at 2 and 4 players on 20 and 500 deals, the same with 1,000 resamples
    94.8-95.8%, and this interval 94.8-96.2% with 200 (results/README.md, section 10). The
    resamples' spread itself is not short: times ``sqrt(units / (units - 1))`` it is 1.00 of
    the sandwich standard error at 500 deals and 1.03-1.04 at 20.

    Symmetric, as the clustered intervals of the summary's paired shares are; the caller
    clips shares to [0, 1]. Returns ``(lo, hi)`` arrays of ``est``'s shape; NaN where fewer
    than two resamples are defined."""
    est = np.asarray(est, np.float64)
    boot = np.asarray(boot, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sd = np.nanstd(boot, axis=0, ddof=1)
    half = z_of(level) * _few_deals_factor(units, level) * sd
    return est - half, est + half


def widen(est, lo, hi, units: int, level: float = 0.95):
    """Bootstrap percentile bounds ``lo``, ``hi`` of ``est`` widened for few deals: each side's
    distance from the estimate times :func:`_few_deals_factor` (Hesterberg's expanded
    percentile interval). Used for the Nash ratings, whose resamples pile up at their bound 0
    (a normal-theory interval would not respect it); the ratings and shares take
    :func:`bootstrap_interval`."""
    if units < 2:
        return lo, hi
    f = _few_deals_factor(units, level)
    est = np.asarray(est, np.float64)
    return est - f * (est - np.asarray(lo)), est + f * (np.asarray(hi) - est)


def _quantiles(x: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over the first axis, ignoring NaN; NaN where every resample is NaN.
    The median-unbiased quantile (Hyndman and Fan 1996, "Sample quantiles in statistical
    packages", definition 8): numpy's default (linear, definition 7) put the 2.5% and 97.5%
    points of 200 resamples of the coverage study's ratings 1.4-2.2% nearer the estimate than
    ``z`` resample standard deviations, the median-unbiased one 0.6-1.5% further."""
    alpha = (1.0 - level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (np.nanquantile(x, alpha, axis=0, method="median_unbiased"),
                np.nanquantile(x, 1 - alpha, axis=0, method="median_unbiased"))


def _nash(S: np.ndarray, boot_shares, level: float, units: int) -> dict:
    """Nash averaging of the shares ``S`` (:func:`kc_sim.analysis.metagame.nash_average`),
    with percentile intervals of the Nash ratings over the bootstrap resamples (widened for
    few deals, :func:`widen`) and each agent's ``support``: the share of resamples in which it
    is in the support of the mixture (its rating there is 0 by definition, so an interval of the rating says little
    about an agent in the support: the support share does). NaN for more agents than
    :data:`~kc_sim.analysis.metagame.MAX_NASH_AGENTS`, and for the intervals and support
    without a bootstrap."""
    n = len(S)
    nan = np.full(n, np.nan)
    if n > metagame.MAX_NASH_AGENTS:
        return {"weight": nan, "rating": nan, "lo": nan, "hi": nan, "support": nan}
    weight, rating = metagame.nash_average(metagame.payoff(S))
    lo = hi = support = nan
    if boot_shares is not None:
        res = [metagame.nash_average(metagame.payoff(b)) for b in boot_shares]
        boot = np.array([r for _, r in res])
        lo, hi = widen(rating, *_quantiles(boot, level), units, level)
        hi = np.minimum(hi, 0.0)                                   # a Nash rating is never above 0
        support = np.mean([w > metagame.TOL for w, _ in res], axis=0)
    return {"weight": weight, "rating": rating, "lo": lo, "hi": hi, "support": support}


def _metagame(c: Comparisons, W, N, theta, order, boot_shares, level: float):
    """The pairwise shares with their intervals (the bootstrap's standard error,
    :func:`bootstrap_interval`, or clustered by deal with ``bootstrap=0``), the cycles,
    Bradley-Terry's fit test and Nash averaging (:mod:`kc_sim.analysis.metagame`). Returns
    (:class:`Metagame`, nash dict)."""
    n = len(c.agents)
    S = metagame.shares(W, N)
    key = c.a * n + c.b                                     # the comparisons' pairs, a < b
    pair_keys = np.unique(key)
    pairs = np.stack(np.divmod(pair_keys, n), axis=1)
    pid = np.searchsorted(pair_keys, key)
    share, count, cov = metagame.clustered_share_cov(c.unit, pid, c.score, c.count, c.n_units, len(pairs))
    LO, HI = np.full((n, n), np.nan), np.full((n, n), np.nan)
    if boot_shares is not None:
        lo, hi = bootstrap_interval(share, boot_shares[:, pairs[:, 0], pairs[:, 1]], c.n_units, level)
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        how = "bootstrap"
    else:
        lo, hi = np.empty(len(pairs)), np.empty(len(pairs))
        for k in range(len(pairs)):
            here = pid == k
            _, lo[k], hi[k] = rate_from_sums(c.score[here], c.count[here], level=level, paired=True)
        how = "clustered"
    LO[pairs[:, 0], pairs[:, 1]], HI[pairs[:, 0], pairs[:, 1]] = lo, hi
    LO[pairs[:, 1], pairs[:, 0]], HI[pairs[:, 1], pairs[:, 0]] = 1.0 - hi, 1.0 - lo
    level_pairs = np.diag(cov) <= 0.0                       # the same share in every deal: nothing to test
    test = metagame.bt_fit_test(theta, pairs, share, count, cov, drop=level_pairs)
    Z = np.full((n, n), np.nan)
    Z[pairs[:, 0], pairs[:, 1]], Z[pairs[:, 1], pairs[:, 0]] = test["z"], -test["z"]
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    rows = []
    for i in order:
        for j in order:
            if i != j and N[i, j] > 0:
                rows.append({"agent": c.agents[i], "opponent": c.agents[j], "share": S[i, j],
                             "share_lo": LO[i, j], "share_hi": HI[i, j], "comparisons": int(round(N[i, j])),
                             "bt_share": 1.0 / (1.0 + math.exp(theta[j] - theta[i])), "z": Z[i, j],
                             "interval": how})
    pairs_df = pd.DataFrame(rows, columns=["agent", "opponent", "share", "share_lo", "share_hi", "comparisons",
                                           "bt_share", "z", "interval"])
    cycles = metagame.find_cycles(S, LO, boot_shares, rank)
    cycles_df = pd.DataFrame(
        [{"cycle": " > ".join(c.agents[m] for m in cy["members"] + cy["members"][:1]), "length": cy["length"],
          "agents": [c.agents[m] for m in cy["members"]], "shares": cy["shares"], "share_lo": cy["lo"],
          "min_share": min(cy["shares"]), "min_lo": min(cy["lo"]), "significant": cy["significant"],
          "support": cy["support"]} for cy in cycles],
        columns=["cycle", "length", "agents", "shares", "share_lo", "min_share", "min_lo", "significant",
                 "support"])
    fit = {"test": "wald, clustered by deal", "chi2": test["chi2"], "df": test["df"],
           "p_value": test["p_value"], "fits": bool(test["df"] == 0 or test["p_value"] >= FIT_LEVEL)}
    if level_pairs.any():
        fit["level_pairs"] = [[c.agents[int(a)], c.agents[int(b)], float(share[k])]
                              for k, (a, b) in enumerate(pairs) if level_pairs[k]]
    if test["worst"] >= 0:
        a, b = (int(x) for x in pairs[test["worst"]])
        if Z[a, b] < 0:
            a, b = b, a
        fit.update({"worst_agent": c.agents[a], "worst_opponent": c.agents[b], "worst_share": float(S[a, b]),
                    "worst_bt_share": 1.0 / (1.0 + math.exp(theta[b] - theta[a])), "worst_z": float(Z[a, b])})
    return Metagame(pairs_df, cycles_df, fit), _nash(S, boot_shares, level, c.n_units)


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


def _pct(x: float, signed: bool = False, digits: int = 1) -> str:
    return "n/a" if x is None or math.isnan(x) else (f"{100 * x:+.{digits}f}" if signed else f"{100 * x:.{digits}f}")


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
                mark = "*" if (r.share_lo > 0.5 or r.share_hi < 0.5) else " "
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
        worst = (f"{fit['worst_agent']} vs {fit['worst_opponent']}: observed {_pct(fit['worst_share'])}%, "
                 f"BT {_pct(fit['worst_bt_share'])}% (z = {fit['worst_z']:+.1f})")
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
