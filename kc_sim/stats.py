"""Interval statistics, and the win rates and summary tables of a tournament.

The one home of the interval formulas kc-sim uses (95% by default, :data:`Z95`):

* **independent rounds**: :func:`wilson` (rates, vectorised) and :func:`mean_ci` (normal
  interval mean +- z * sd / sqrt(n)), used by :class:`Tally` for ``summary.parquet`` and
  the table printed after a tournament;
* **clustered by deal**: :func:`mean_from_sums` and :func:`rate_from_sums` from per-cluster
  sums (what the streaming scan of :mod:`kc_sim.analysis.scan` keeps), and
  :func:`cluster_mean` / :func:`cluster_rate` for arrays in memory, which sum per cluster
  and call those two: one formula. The figures, the report and the findings use these.
  A cluster-robust interval needs only, per cluster ``c``, the sum ``S_c`` of the outcome
  and the number ``n_c`` of rounds: the mean is ``sum(S) / sum(n)`` (ratio estimator),
  its standard error comes from the residuals ``S_c - mean * n_c``; a rate is a Wilson
  interval (:func:`wilson_scalar`) on the effective sample size ``p (1 - p) / se**2``.

A :class:`Tally` holds sufficient statistics (counts, sums, sums of squares) and is
filled part by part, so a summary of any number of rounds needs memory for one part
only. :func:`summarize` builds the same tables from a rounds dataframe in memory. Its
intervals treat rounds as independent; duplicate deals make agents' results within a
deal negatively correlated, which makes the intervals of a difference
conservative.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

# pandas is imported by the functions that build tables: workers fill a Tally per chunk
# and must start without it.

Z95 = 1.959963984540054


def z_of(level: float) -> float:
    """The two-sided normal quantile of a confidence ``level`` (1.96 for 0.95), by bisection
    of the normal CDF (levels other than 95% are rare)."""
    target = 0.5 + level / 2
    lo, hi = 0.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def wilson(successes, n, z: float = Z95):
    """Wilson score interval ``(lo, hi)`` of a rate; NaN where ``n`` is 0. Works on arrays."""
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        den = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / den
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
        lo, hi = centre - half, centre + half
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def mean_ci(total, total_sq, n, z: float = Z95):
    """``(mean, lo, hi)`` from a sum, a sum of squares and a count (sample sd, n - 1).
    Bounds are NaN for fewer than two values. Works on arrays."""
    total = np.asarray(total, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total / n
        var = (np.asarray(total_sq, dtype=np.float64) - n * mean * mean) / (n - 1)
        half = z * np.sqrt(np.maximum(var, 0.0) / n)
        half = np.where(n >= 2, half, np.nan)
    return mean, mean - half, mean + half


def wilson_scalar(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval ``(lo, hi)`` of ``k`` successes in ``n`` (a float sample size
    allowed); exactly 0 (1) at the bound of a rate of 0 (1); NaNs when ``n`` is 0."""
    if n <= 0:
        return math.nan, math.nan
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / den
    lo = 0.0 if p <= 0 else max(0.0, centre - half)
    hi = 1.0 if p >= 1 else min(1.0, centre + half)
    return lo, hi


# --- clustered by deal ---------------------------------------------------------------

def mean_from_sums(S, N, z: float = Z95) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` from per-cluster sums ``S`` of the outcome and counts ``N``:
    the ratio estimator ``sum(S) / sum(N)`` with a cluster-robust normal interval (standard
    error from the residuals ``S - mean * N``, small-sample factor ``g / (g - 1)`` over the
    ``g`` clusters with ``N > 0``). NaNs when there is nothing to average; no interval with
    fewer than two clusters."""
    S = np.asarray(S, dtype=np.float64).ravel()
    N = np.asarray(N, dtype=np.float64).ravel()
    keep = N > 0
    if not keep.all():
        S, N = S[keep], N[keep]
    g = len(N)
    if g == 0:
        return math.nan, math.nan, math.nan
    total = N.sum()
    mean = S.sum() / total
    if g < 2:
        return float(mean), math.nan, math.nan
    r = S - mean * N
    se = math.sqrt(g / (g - 1) * float((r * r).sum())) / total
    return float(mean), float(mean - z * se), float(mean + z * se)


def rate_from_sums(S, N, n_clusters=None, z: float = Z95) -> tuple[float, float, float]:
    """``(rate, lo, hi)`` of a 0/1 outcome (or a score in [0, 1]) from per-cluster sums:
    a Wilson interval on the effective sample size ``p (1 - p) / se**2`` with the
    standard error of :func:`mean_from_sums`. With no variation at all (p 0 or 1, or a
    single cluster) the number of deals ``n_clusters`` is the sample size (default: the
    clusters with ``N > 0``; pass the number of deals when the clusters are batches)."""
    p, lo, hi = mean_from_sums(S, N, z)
    if math.isnan(p):
        return math.nan, math.nan, math.nan
    if n_clusters is None:
        n_clusters = int((np.asarray(N).ravel() > 0).sum())
    if math.isnan(lo):
        n_eff = float(n_clusters)
    else:
        se = (hi - lo) / (2 * z)
        if 0 < p < 1 and se > 0:
            n_eff = p * (1 - p) / (se * se)
        elif 0 < p < 1:
            n_eff = 1e15                                  # no variation between deals at all
        else:
            n_eff = float(n_clusters)
    lo, hi = wilson_scalar(p * n_eff, n_eff, z)
    return float(p), lo, hi


def _select(x, cluster, mask):
    """The outcomes and their deal ids as arrays, restricted to ``mask`` when given."""
    x = np.asarray(x, dtype=np.float64)
    cluster = np.asarray(cluster, dtype=np.int64)
    return (x[mask], cluster[mask]) if mask is not None else (x, cluster)


def cluster_sums(x: np.ndarray, cluster: np.ndarray):
    """Per-cluster sums of x and counts, over the clusters that occur."""
    lo, hi = (int(cluster.min()), int(cluster.max())) if len(cluster) else (0, 0)
    if lo >= 0 and hi < 4 * len(cluster) + 1024:          # deal numbers: dense, non-negative
        n = np.bincount(cluster, minlength=hi + 1)
        s = np.bincount(cluster, weights=x, minlength=hi + 1)
        keep = n > 0
        return s[keep], n[keep].astype(np.float64)
    _, inv = np.unique(cluster, return_inverse=True)
    return np.bincount(inv, weights=x), np.bincount(inv).astype(np.float64)


def cluster_mean(x, cluster, mask=None, z: float = Z95) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of ``x`` with a cluster-robust normal interval: the ratio
    estimator sum(x) / n over clusters (deals), standard error from the per-cluster
    residuals (:func:`mean_from_sums` on the per-cluster sums). NaNs when there is
    nothing to average."""
    x, cluster = _select(x, cluster, mask)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    s, n = cluster_sums(x, cluster)
    return mean_from_sums(s, n, z)


def cluster_rate(x, cluster, mask=None, z: float = Z95) -> tuple[float, float, float]:
    """``(rate, lo, hi)`` of a 0/1 outcome (or a score in [0, 1]): a Wilson interval on the
    effective sample size p (1 - p) / se**2, se clustered by deal (:func:`rate_from_sums`
    on the per-cluster sums). With no variation at all (p 0 or 1) the number of deals is
    the sample size."""
    x, cluster = _select(x, cluster, mask)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    s, n = cluster_sums(x, cluster)
    return rate_from_sums(s, n, len(n), z)


# --- the paired observation of a deal ------------------------------------------------

def pair_deal_scores(group, seat_agent, penalty, pairs):
    """Per deal and pair of agents, the share of the deal's rounds in which the first
    agent of the pair finished ahead of the second (lower penalty; equal counts half).

    This is the paired observation of kc-sim's early stopping, control variates and power:
    every deal is played in every seating, so seat and hand effects cancel inside it, and
    deals are independent draws. ``group`` (R,) deal numbers; ``seat_agent`` (R, k) agent
    index by seat; ``penalty`` (R, k), negative where the seat was not dealt in; ``pairs``
    (P, 2) agent index pairs ``(a, b)``. Returns ``(deals, score, n)``: the sorted deal
    numbers (D,), ``score`` (D, P) in [0, 1] (NaN where the pair did not meet in that deal)
    and ``n`` (D, P), the rounds in which both were dealt in."""
    group = np.asarray(group, dtype=np.int64)
    seat_agent = np.asarray(seat_agent, dtype=np.int64)
    penalty = np.asarray(penalty, dtype=np.int64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    deals, inv = np.unique(group, return_inverse=True)
    D, P = len(deals), len(pairs)
    score = np.full((D, P), np.nan)
    n = np.zeros((D, P), np.int64)
    dealt = penalty >= 0
    for p, (a, b) in enumerate(pairs):
        in_a, in_b = (seat_agent == a) & dealt, (seat_agent == b) & dealt
        both = in_a.any(axis=1) & in_b.any(axis=1)
        pen_a = np.where(in_a, penalty, 0).sum(axis=1)[both]
        pen_b = np.where(in_b, penalty, 0).sum(axis=1)[both]
        ahead = (pen_a < pen_b) + 0.5 * (pen_a == pen_b)
        n[:, p] = np.bincount(inv[both], minlength=D)
        total = np.bincount(inv[both], weights=ahead, minlength=D)
        met = n[:, p] > 0
        score[met, p] = total[met] / n[met, p]
    return deals, score, n


# --- the tally of a tournament ---------------------------------------------------------

class Tally:
    """Sufficient statistics of a run, by agent index (``a``), seat (``s``) and pair."""

    def __init__(self, n_agents: int, players: int):
        A, k = n_agents, players
        self.n_agents, self.players = A, k
        self.seat_rounds = np.zeros((A, k), np.int64)
        self.seat_wins = np.zeros((A, k), np.int64)
        self.pen_sum = np.zeros(A, np.float64)
        self.pen_sq = np.zeros(A, np.float64)
        # pair [a, b]: rounds where both a and b had a seat, seen from a
        self.pair_rounds = np.zeros((A, A), np.int64)
        self.pair_wins = np.zeros((A, A), np.int64)      # a won the round
        self.pair_beats = np.zeros((A, A), np.int64)     # a's penalty < b's
        self.pair_ties = np.zeros((A, A), np.int64)      # equal penalties
        self.pair_pen_sum = np.zeros((A, A), np.float64)
        self.pair_pen_sq = np.zeros((A, A), np.float64)
        self.diff_sum = np.zeros((A, A), np.float64)     # sum of (pen a - pen b)
        self.diff_sq = np.zeros((A, A), np.float64)
        # the paired score of a deal (pair_deal_scores), one observation per deal and line-up
        self.deal_n = np.zeros((A, A), np.int64)
        self.deal_sum = np.zeros((A, A), np.float64)
        self.deal_sq = np.zeros((A, A), np.float64)
        self.matches = np.zeros(A, np.int64)
        self.match_wins = np.zeros(A, np.int64)          # shared wins count for every sharer
        self.total_sum = np.zeros(A, np.float64)
        self.total_sq = np.zeros(A, np.float64)

    _FIELDS = ("seat_rounds", "seat_wins", "pen_sum", "pen_sq", "pair_rounds", "pair_wins", "pair_beats",
               "pair_ties", "pair_pen_sum", "pair_pen_sq", "diff_sum", "diff_sq", "deal_n", "deal_sum", "deal_sq",
               "matches", "match_wins", "total_sum", "total_sq")

    def merge(self, other: "Tally") -> "Tally":
        """Add another tally of the same agents and seats (e.g. one chunk's)."""
        for f in self._FIELDS:
            mine = getattr(self, f)
            mine += getattr(other, f)
        return self

    def to_json(self) -> str:
        """The tally as JSON (stored in each round part's metadata by the tournament)."""
        return json.dumps({"n_agents": self.n_agents, "players": self.players,
                           **{f: getattr(self, f).tolist() for f in self._FIELDS}})

    @classmethod
    def from_json(cls, text) -> "Tally":
        d = json.loads(text)
        t = cls(d["n_agents"], d["players"])
        for f in cls._FIELDS:
            if f in d:              # a tally written before a field existed keeps it at zero
                setattr(t, f, np.asarray(d[f], dtype=getattr(t, f).dtype).reshape(getattr(t, f).shape))
        return t

    def _count(self, idx, weights=None, size=None):
        size = size or self.n_agents
        return np.bincount(idx, weights=weights, minlength=size)

    def add_rounds(self, seat_agent, penalty, winner) -> "Tally":
        """Add rounds: ``seat_agent[i, s]`` agent index in seat s, ``penalty[i, s]`` (< 0:
        seat not in the round), ``winner[i]`` seat or < 0."""
        seat_agent = np.asarray(seat_agent, dtype=np.int64)
        penalty = np.asarray(penalty, dtype=np.int64)
        winner = np.asarray(winner, dtype=np.int64)
        A = self.n_agents
        for s in range(self.players):
            here = penalty[:, s] >= 0
            a, pen = seat_agent[here, s], penalty[here, s].astype(np.float64)
            self.seat_rounds[:, s] += self._count(a)
            self.seat_wins[:, s] += self._count(a, (winner[here] == s).astype(np.float64)).astype(np.int64)
            self.pen_sum += self._count(a, pen)
            self.pen_sq += self._count(a, pen * pen)
        for s, t in itertools.permutations(range(self.players), 2):
            both = (penalty[:, s] >= 0) & (penalty[:, t] >= 0)
            idx = seat_agent[both, s] * A + seat_agent[both, t]
            ps, pt = penalty[both, s].astype(np.float64), penalty[both, t].astype(np.float64)
            d = ps - pt

            def add(arr, w=None):
                arr += self._count(idx, w, A * A).reshape(A, A).astype(arr.dtype)

            add(self.pair_rounds)
            add(self.pair_wins, (winner[both] == s).astype(np.float64))
            add(self.pair_beats, (d < 0).astype(np.float64))
            add(self.pair_ties, (d == 0).astype(np.float64))
            add(self.pair_pen_sum, ps)
            add(self.pair_pen_sq, ps * ps)
            add(self.diff_sum, d)
            add(self.diff_sq, d * d)
        return self

    def add_deals(self, group, seat_agent, penalty) -> "Tally":
        """Add the paired score of every deal (:func:`pair_deal_scores`) of rounds of one
        line-up, for every ordered pair of its agents: the observations behind the
        "finishes ahead" interval, which is paired by deal."""
        seat_agent = np.asarray(seat_agent, dtype=np.int64)
        agents = np.unique(seat_agent[seat_agent >= 0])
        pairs = [(a, b) for a in agents for b in agents if a != b]
        if not pairs:
            return self
        _, score, n = pair_deal_scores(group, seat_agent, penalty, pairs)
        for p, (a, b) in enumerate(pairs):
            x = score[n[:, p] > 0, p]
            self.deal_n[a, b] += len(x)
            self.deal_sum[a, b] += x.sum()
            self.deal_sq[a, b] += (x * x).sum()
        return self

    def add_matches(self, seat_agent, total, winners) -> "Tally":
        """Add matches: ``total[i, s]`` penalty total by seat, ``winners[i]`` bit mask of
        the seats sharing the win."""
        seat_agent = np.asarray(seat_agent, dtype=np.int64)
        total = np.asarray(total, dtype=np.float64)
        winners = np.asarray(winners, dtype=np.int64)
        for s in range(self.players):
            a = seat_agent[:, s]
            self.matches += self._count(a)
            self.match_wins += self._count(a, ((winners >> s) & 1).astype(np.float64)).astype(np.int64)
            self.total_sum += self._count(a, total[:, s])
            self.total_sq += self._count(a, total[:, s] ** 2)
        return self

    # --- tables -----------------------------------------------------------------------

    def agent_table(self, names) -> pd.DataFrame:
        """One row per agent that played: rounds, wins, win rate and interval, mean penalty
        and interval, win rate by seat (and match figures when matches were added)."""
        import pandas as pd  # lazy: workers fill a Tally and must start without pandas

        n = self.seat_rounds.sum(axis=1)
        wins = self.seat_wins.sum(axis=1)
        lo, hi = wilson(wins, n)
        mean, mlo, mhi = mean_ci(self.pen_sum, self.pen_sq, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            df = pd.DataFrame({
                "agent": list(names), "rounds": n, "wins": wins, "win_rate": wins / n,
                "win_lo": lo, "win_hi": hi,
                "mean_penalty": mean, "penalty_lo": mlo, "penalty_hi": mhi,
            })
            for s in range(self.players):
                df[f"win_rate_seat_{s}"] = self.seat_wins[:, s] / self.seat_rounds[:, s]
        if self.matches.any():
            m = self.matches
            mlo_, mhi_ = wilson(self.match_wins, m)
            tmean, tlo, thi = mean_ci(self.total_sum, self.total_sq, m)
            with np.errstate(divide="ignore", invalid="ignore"):
                df["matches"] = m
                df["match_wins"] = self.match_wins
                df["match_win_rate"] = self.match_wins / m
            df["match_win_lo"], df["match_win_hi"] = mlo_, mhi_
            df["mean_total"], df["total_lo"], df["total_hi"] = tmean, tlo, thi
        return df[(n > 0) | (self.matches > 0)].reset_index(drop=True)

    def head_to_head(self, names) -> pd.DataFrame:
        """One row per ordered pair (agent, opponent) that met: over the rounds where both
        had a seat, the agent's wins, how often its penalty was lower than the opponent's
        (``beats``; equal penalties are ``ties``) and the mean penalty difference
        (agent minus opponent) with its interval; and ``ahead``: the share of rounds it finished
        ahead (ties half), its interval paired by deal (the spread of the per-deal scores, one
        per deal and line-up; NaN for tallies without them)."""
        import pandas as pd  # lazy: workers fill a Tally and must start without pandas

        names = list(names)
        rows = []
        for a, b in itertools.permutations(range(self.n_agents), 2):
            n = self.pair_rounds[a, b]
            if n == 0:
                continue
            rows.append((names[a], names[b], n, self.pair_wins[a, b], self.pair_pen_sum[a, b],
                         self.pair_pen_sq[a, b], self.pair_beats[a, b], self.pair_ties[a, b],
                         self.diff_sum[a, b], self.diff_sq[a, b], self.deal_n[a, b], self.deal_sum[a, b],
                         self.deal_sq[a, b]))
        cols = ["agent", "opponent", "rounds", "wins", "pen_sum", "pen_sq", "beats", "ties", "d_sum", "d_sq",
                "deals", "a_sum", "a_sq"]
        t = pd.DataFrame(rows, columns=cols).astype({"rounds": np.int64, "wins": np.int64,
                                                      "beats": np.int64, "ties": np.int64})
        lo, hi = wilson(t["wins"], t["rounds"])
        mean, mlo, mhi = mean_ci(t["pen_sum"], t["pen_sq"], t["rounds"])
        blo, bhi = wilson(t["beats"], t["rounds"])
        dmean, dlo, dhi = mean_ci(t["d_sum"], t["d_sq"], t["rounds"])
        ahead, alo, ahi = mean_ci(t["a_sum"], t["a_sq"], t["deals"])
        return pd.DataFrame({
            "agent": t["agent"], "opponent": t["opponent"], "rounds": t["rounds"], "wins": t["wins"],
            "win_rate": t["wins"] / t["rounds"], "win_lo": lo, "win_hi": hi,
            "mean_penalty": mean, "penalty_lo": mlo, "penalty_hi": mhi,
            "beats": t["beats"], "ties": t["ties"], "beat_rate": t["beats"] / t["rounds"],
            "beat_lo": blo, "beat_hi": bhi,
            "penalty_diff": dmean, "diff_lo": dlo, "diff_hi": dhi,
            "ahead": ahead, "ahead_lo": alo, "ahead_hi": ahi,
        })

    def summary(self, names, head_to_head: bool | None = None) -> pd.DataFrame:
        """The ``summary.parquet`` table: agent rows (``opponent`` null), then head-to-head
        rows when there are more than two agents (or when asked)."""
        import pandas as pd  # lazy: workers fill a Tally and must start without pandas

        agents = self.agent_table(names)
        agents.insert(1, "opponent", pd.Series([None] * len(agents), dtype="string"))
        if head_to_head is None:
            head_to_head = self.n_agents >= 2
        if not head_to_head:
            return _typed(agents)
        pairs = self.head_to_head(names)
        return _typed(pd.concat([agents, pairs], ignore_index=True))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """Stable column types: names as strings, counts as nullable integers."""
    df = df.copy()
    for c in ("agent", "opponent"):
        df[c] = df[c].astype("string")
    for c in ("rounds", "wins", "beats", "ties", "matches", "match_wins"):
        if c in df:
            df[c] = df[c].astype("Int64")
    return df


# --- from dataframes ----------------------------------------------------------------

def seat_columns(df: pd.DataFrame, prefix: str) -> list[str]:
    """``prefix0, prefix1, ...`` columns present in ``df``, in seat order."""
    cols, s = [], 0
    while f"{prefix}{s}" in df.columns:
        cols.append(f"{prefix}{s}")
        s += 1
    return cols


def agent_codes(df: pd.DataFrame, names) -> np.ndarray:
    """``agent_<seat>`` columns as agent indices into ``names`` (n rows x seats)."""
    index = {n: i for i, n in enumerate(names)}
    cols = seat_columns(df, "agent_")
    out = np.empty((len(df), len(cols)), dtype=np.int64)
    for s, c in enumerate(cols):
        out[:, s] = df[c].astype("string").map(index).to_numpy(dtype=np.int64)
    return out


def tally_rounds(df: pd.DataFrame, names, tally: Tally | None = None) -> Tally:
    """Add a rounds dataframe (``agent_<s>``, ``penalty_<s>``, ``winner``) to a tally."""
    codes = agent_codes(df, names)
    tally = tally or Tally(len(names), codes.shape[1])
    pen = df[seat_columns(df, "penalty_")].fillna(-1).to_numpy(dtype=np.int64)
    winner = df["winner"].fillna(-1).to_numpy(dtype=np.int64)
    tally.add_rounds(codes, pen, winner)
    if "group" in df.columns:
        keys = df["lineup"].to_numpy(dtype=np.int64) if "lineup" in df.columns else np.zeros(len(df), np.int64)
        for lu in np.unique(keys):
            here = keys == lu
            tally.add_deals(df["group"].to_numpy(dtype=np.int64)[here], codes[here], pen[here])
    return tally


def tally_matches(df: pd.DataFrame, names, tally: Tally) -> Tally:
    """Add a matches dataframe (``agent_<s>``, ``total_<s>``, ``winners``) to a tally."""
    codes = agent_codes(df, names)
    total = df[seat_columns(df, "total_")].to_numpy(dtype=np.int64)
    return tally.add_matches(codes, total, df["winners"].to_numpy(dtype=np.int64))


def summarize(rounds: pd.DataFrame, matches: pd.DataFrame | None = None, names=None,
              head_to_head: bool | None = None) -> pd.DataFrame:
    """The summary table of rounds (and matches) held in memory; ``names`` defaults to
    the agents seen, in order of first appearance."""
    import pandas as pd  # lazy: workers fill a Tally and must start without pandas

    if names is None:
        seen = pd.concat([rounds[c].astype("string") for c in seat_columns(rounds, "agent_")])
        names = list(dict.fromkeys(seen.dropna()))
    tally = tally_rounds(rounds, names)
    if matches is not None and len(matches):
        tally_matches(matches, names, tally)
    return tally.summary(names, head_to_head)
