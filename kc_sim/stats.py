"""Win rates, intervals and the summary tables of a tournament.

A :class:`Tally` holds sufficient statistics (counts, sums, sums of squares) and is
filled part by part, so a summary of any number of rounds needs memory for one part
only. :func:`summarize` builds the same tables from a rounds dataframe in memory.

Intervals are 95% by default: Wilson score intervals for rates, normal intervals
(mean +- z * sd / sqrt(n)) for mean penalties and penalty differences. They treat
rounds as independent; duplicate deals make agents' results within a rotation group
negatively correlated, which makes the intervals of a difference conservative.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

# pandas is imported by the functions that build tables: workers fill a Tally per chunk
# and must start without it.

Z95 = 1.959963984540054


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
        self.matches = np.zeros(A, np.int64)
        self.match_wins = np.zeros(A, np.int64)          # shared wins count for every sharer
        self.total_sum = np.zeros(A, np.float64)
        self.total_sq = np.zeros(A, np.float64)

    _FIELDS = ("seat_rounds", "seat_wins", "pen_sum", "pen_sq", "pair_rounds", "pair_wins", "pair_beats",
               "pair_ties", "pair_pen_sum", "pair_pen_sq", "diff_sum", "diff_sq", "matches", "match_wins",
               "total_sum", "total_sq")

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
        import pandas as pd

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
        (agent minus opponent) with its interval."""
        import pandas as pd

        names = list(names)
        rows = []
        for a, b in itertools.permutations(range(self.n_agents), 2):
            n = self.pair_rounds[a, b]
            if n == 0:
                continue
            rows.append((names[a], names[b], n, self.pair_wins[a, b], self.pair_pen_sum[a, b],
                         self.pair_pen_sq[a, b], self.pair_beats[a, b], self.pair_ties[a, b],
                         self.diff_sum[a, b], self.diff_sq[a, b]))
        cols = ["agent", "opponent", "rounds", "wins", "pen_sum", "pen_sq", "beats", "ties", "d_sum", "d_sq"]
        t = pd.DataFrame(rows, columns=cols).astype({"rounds": np.int64, "wins": np.int64,
                                                      "beats": np.int64, "ties": np.int64})
        lo, hi = wilson(t["wins"], t["rounds"])
        mean, mlo, mhi = mean_ci(t["pen_sum"], t["pen_sq"], t["rounds"])
        blo, bhi = wilson(t["beats"], t["rounds"])
        dmean, dlo, dhi = mean_ci(t["d_sum"], t["d_sq"], t["rounds"])
        return pd.DataFrame({
            "agent": t["agent"], "opponent": t["opponent"], "rounds": t["rounds"], "wins": t["wins"],
            "win_rate": t["wins"] / t["rounds"], "win_lo": lo, "win_hi": hi,
            "mean_penalty": mean, "penalty_lo": mlo, "penalty_hi": mhi,
            "beats": t["beats"], "ties": t["ties"], "beat_rate": t["beats"] / t["rounds"],
            "beat_lo": blo, "beat_hi": bhi,
            "penalty_diff": dmean, "diff_lo": dlo, "diff_hi": dhi,
        })

    def summary(self, names, head_to_head: bool | None = None) -> pd.DataFrame:
        """The ``summary.parquet`` table: agent rows (``opponent`` null), then head-to-head
        rows when there are more than two agents (or when asked)."""
        import pandas as pd

        agents = self.agent_table(names)
        agents.insert(1, "opponent", pd.Series([None] * len(agents), dtype="string"))
        if head_to_head is None:
            head_to_head = self.n_agents > 2
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
    return tally.add_rounds(codes, pen, winner)


def tally_matches(df: pd.DataFrame, names, tally: Tally) -> Tally:
    """Add a matches dataframe (``agent_<s>``, ``total_<s>``, ``winners``) to a tally."""
    codes = agent_codes(df, names)
    total = df[seat_columns(df, "total_")].to_numpy(dtype=np.int64)
    return tally.add_matches(codes, total, df["winners"].to_numpy(dtype=np.int64))


def summarize(rounds: pd.DataFrame, matches: pd.DataFrame | None = None, names=None,
              head_to_head: bool | None = None) -> pd.DataFrame:
    """The summary table of rounds (and matches) held in memory; ``names`` defaults to
    the agents seen, in order of first appearance."""
    import pandas as pd

    if names is None:
        seen = pd.concat([rounds[c].astype("string") for c in seat_columns(rounds, "agent_")])
        names = list(dict.fromkeys(seen.dropna()))
    tally = tally_rounds(rounds, names)
    if matches is not None and len(matches):
        tally_matches(matches, names, tally)
    return tally.summary(names, head_to_head)
