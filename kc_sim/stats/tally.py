"""The tally of a tournament: per-deal sums filled chunk by chunk, and the summary tables.

A :class:`Tally` holds, per batch of deals (:mod:`kc_sim.stats.sums`; one deal per batch
up to :data:`~kc_sim.stats.sums.MAX_BATCHES` deals per line-up), the sums behind every
figure of ``summary.parquet`` and the table printed after a tournament. Each worker fills
the tally of its chunk (:func:`kc_sim.tournament.worker.chunk_tally`), the run folder keeps
it in the part's metadata (:meth:`Tally.to_json`) and the summary adds the chunks' tallies
up (:meth:`Tally.merge`): no round is read again, and the memory of a tally does not grow
with the number of rounds (keys x values x batches at most).

Sums (keys in brackets; ``A`` agents, ``k`` seats):

* ``agent`` [a]: ``n`` rounds dealt in, ``win``, ``penalty``;
* ``position`` [a * k + p]: ``n`` rounds a played at position p in turn order (0 plays
  first, the seat left of the dealer: :func:`~kc_sim.stats.pairs.turn_positions`), ``win``.
  The seat number itself says little, as the dealer is drawn for every deal;
* ``pair`` [a * A + b, over the rounds both a and b were dealt in]: ``n``, ``win`` (a won),
  ``penalty`` (a's), ``beat`` (a's penalty below b's), ``tie`` (equal penalties); b's
  penalty over the same rounds is ``penalty`` of [b * A + a], so the penalty difference
  and the finishes-ahead score (``beat + tie / 2``) are paired within the deal;
* ``match`` [a]: ``n`` matches, ``win`` (a shared win counts for every sharer), ``total``.

Every interval comes from the one engine of :mod:`kc_sim.stats.intervals`: clustered by
deal, Student's quantile on the number of deals (or batches) minus one.
:func:`summarize` builds the same tables from rounds held in memory.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING

import numpy as np

from kc_sim.stats.intervals import (
    beat_from_sums,
    largest_mean,
    mean_from_sums,
    rate_from_sums,
)
from kc_sim.stats.pairs import agent_index, ahead_of, seat_pairs, turn_positions
from kc_sim.stats.sums import Deals, Sums, batch_width, deal_index

if TYPE_CHECKING:
    import pandas as pd

# pandas is imported by the functions that build tables: workers fill a Tally per chunk
# and must start without it.

#: the format of the tally stored in a part's metadata (:meth:`Tally.to_json`)
TALLY_FORMAT = 3
VALUES = {"agent": ("win", "penalty"), "position": ("win",), "pair": ("win", "penalty", "beat", "tie"),
          "match": ("win", "total")}


class Tally:
    """Per-batch sums of a run (or of one chunk) by agent, position in turn order and pair (module doc).
    ``width`` deals per batch (:func:`~kc_sim.stats.sums.batch_width` of the deals per
    line-up); ``deals`` counts the deals played (once, from the rounds of line-up 0)."""

    def __init__(self, n_agents: int, players: int, width: int = 1):
        A, k = int(n_agents), int(players)
        self.n_agents, self.players, self.width = A, k, max(1, int(width))
        self.deals = 0
        self.match_deals = 0
        sizes = {"agent": A, "position": A * k, "pair": A * A, "match": A}
        self.sums = {name: Sums(sizes[name], VALUES[name], 0) for name in VALUES}

    @classmethod
    def for_deals(cls, n_agents: int, players: int, n_deals: int) -> Tally:
        """A tally batching ``n_deals`` deals per line-up (:func:`batch_width`)."""
        return cls(n_agents, players, batch_width(n_deals))

    @property
    def agent(self) -> Sums:
        return self.sums["agent"]

    @property
    def position(self) -> Sums:
        return self.sums["position"]

    @property
    def pair(self) -> Sums:
        return self.sums["pair"]

    @property
    def match(self) -> Sums:
        return self.sums["match"]

    # --- filling ------------------------------------------------------------------------
    def merge(self, other: Tally) -> Tally:
        """Add another tally of the same agents, seats and batches (e.g. one chunk's)."""
        if (other.n_agents, other.players, other.width) != (self.n_agents, self.players, self.width):
            raise ValueError(f"cannot add a tally of {other.n_agents} agents, {other.players} seats, "
                             f"{other.width} deals per batch to one of {self.n_agents}, {self.players}, {self.width}")
        for name, s in self.sums.items():
            s.merge(other.sums[name])
        self.deals += other.deals
        self.match_deals += other.match_deals
        return self

    def to_json(self) -> str:
        """The tally as JSON (stored in each round part's metadata by the tournament)."""
        return json.dumps({"format": TALLY_FORMAT, "n_agents": self.n_agents, "players": self.players,
                           "width": self.width, "deals": self.deals, "match_deals": self.match_deals,
                           "sums": {name: s.pack() for name, s in self.sums.items()}}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text) -> Tally:
        """The tally of :meth:`to_json`; raises ValueError for anything else (a tally of an
        older kc-sim, or a damaged one: the run folder then tallies the part's rows)."""
        try:
            d = json.loads(text)
            if not isinstance(d, dict) or d.get("format") != TALLY_FORMAT:
                raise ValueError("not a tally of this kc-sim")
            t = cls(int(d["n_agents"]), int(d["players"]), int(d["width"]))
            t.deals, t.match_deals = int(d["deals"]), int(d["match_deals"])
            for name, s in t.sums.items():
                t.sums[name] = Sums.unpack(d["sums"][name], s.n_keys, s.values)
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as e:
            raise ValueError(f"bad tally: {e}") from None
        if min(t.n_agents, t.players, t.deals, t.match_deals) < 0 or t.n_agents > 10_000 or t.players > 64:
            raise ValueError("bad tally sizes")
        return t

    def _deals(self, group, names, deals: Deals | None = None) -> Deals:
        if deals is None:
            deals = deal_index(np.asarray(group, dtype=np.int64), self.width)
        for name in names:
            s = self.sums[name]
            s.grow(s.n_keys, int(deals.ub.max()) + 1)
        return deals

    def add_rounds(self, group, seat_agent, penalty, winner, first, count_deals: bool = True,
                   deals: Deals | None = None) -> Tally:
        """Add rounds: ``group[i]`` deal number, ``seat_agent[i, s]`` agent index in seat s,
        ``penalty[i, s]`` (< 0: seat not in the round), ``winner[i]`` seat or < 0,
        ``first[i]`` the seat that played first (None: not known, no position sums).
        ``count_deals``: count the rounds' deals in :attr:`deals` (the worker counts them
        for the chunks of line-up 0 only, as every line-up plays the same deals); ``deals``:
        the rounds' :func:`~kc_sim.stats.sums.deal_index` at this tally's width, when the
        caller has it already."""
        group = np.asarray(group, dtype=np.int64)
        seat_agent = np.asarray(seat_agent, dtype=np.int64)
        P = np.asarray(penalty, dtype=np.int64)
        W = np.asarray(winner, dtype=np.int64)
        if len(group) == 0:
            return self
        A, k = self.n_agents, self.players
        deals = self._deals(group, ("agent", "position", "pair"), deals)
        lg = deals.lg
        if count_deals:
            self.deals += len(deals.deals)
        dealt = (P >= 0) & (seat_agent >= 0)
        r, s = np.nonzero(dealt)
        a, pen, won = seat_agent[r, s], P[r, s], W[r] == s
        self.agent.add(a, deals, lg[r], {"win": won, "penalty": pen}, np.arange(A))
        if first is not None:
            pos = turn_positions(np.asarray(first, dtype=np.int64)[r], s, k)
            self.position.add(a * k + pos, deals, lg[r], {"win": won}, np.arange(A * k))
        key, at, won, pa, pb = ([] for _ in range(5))
        for sa, sb, rb in seat_pairs(seat_agent, dealt):
            key.append(seat_agent[rb, sa] * A + seat_agent[rb, sb])
            at.append(lg[rb])
            won.append(W[rb] == sa)
            pa.append(P[rb, sa])
            pb.append(P[rb, sb])
        if key:
            pa, pb = np.concatenate(pa), np.concatenate(pb)
            self.pair.add(np.concatenate(key), deals, np.concatenate(at),
                          {"win": np.concatenate(won), "penalty": pa, "beat": pa < pb, "tie": pa == pb}, np.arange(A * A))
        return self

    def add_matches(self, group, seat_agent, total, winners, count_deals: bool = True,
                    deals: Deals | None = None) -> Tally:
        """Add matches: ``group[i]`` deal number of the match, ``total[i, s]`` penalty total
        by seat, ``winners[i]`` bit mask of the seats sharing the win (``count_deals``,
        ``deals``: as :meth:`add_rounds`)."""
        group = np.asarray(group, dtype=np.int64)
        seat_agent = np.asarray(seat_agent, dtype=np.int64)
        total = np.asarray(total, dtype=np.int64)
        winners = np.asarray(winners, dtype=np.int64)
        if len(group) == 0:
            return self
        deals = self._deals(group, ("match",), deals)
        if count_deals:
            self.match_deals += len(deals.deals)
        r, s = np.nonzero(seat_agent >= 0)
        self.match.add(seat_agent[r, s], deals, deals.lg[r], {"win": (winners[r] >> s) & 1, "total": total[r, s]},
                       np.arange(self.n_agents))
        return self

    # --- totals -------------------------------------------------------------------------
    def count(self, name: str, key: int) -> int:
        return self.sums[name].count(key) if key < self.sums[name].n_keys else 0

    def total(self, name: str, value: str, key: int) -> float:
        s = self.sums[name]
        return s.total(value, key) if key < s.n_keys else 0.0

    def _sn(self, name: str, value: str, key: int):
        s = self.sums[name]
        if key >= s.n_keys or s.n_batches == 0:
            return np.zeros(1), np.zeros(1)
        return s.S[value][key], s.N[key]

    def rate(self, name: str, value: str, key: int) -> tuple[float, float, float]:
        S, N = self._sn(name, value, key)
        return rate_from_sums(S, N, self.match_deals if name == "match" else self.deals)

    def mean(self, name: str, value: str, key: int) -> tuple[float, float, float]:
        return mean_from_sums(*self._sn(name, value, key))

    def pair_sums(self, a: int, b: int):
        """Per-batch sums of the pair (a, b) over the rounds both were dealt in: ``n``, a's
        wins, the penalty difference (a's - b's) and a's finishes-ahead score (beat + tie / 2)."""
        A = self.n_agents
        p = self.pair
        ab, ba = a * A + b, b * A + a
        return (p.N[ab], p.S["win"][ab], p.S["penalty"][ab] - p.S["penalty"][ba],
                ahead_of(p.S["beat"][ab], p.S["tie"][ab]))

    def beat(self, a: int, b: int) -> tuple[float, float, float]:
        """``(rate, lo, hi)``: the share of the rounds agents ``a`` and ``b`` shared in which
        ``a``'s penalty was lower (:func:`~kc_sim.stats.intervals.beat_from_sums`)."""
        ab = a * self.n_agents + b
        p = self.pair
        return beat_from_sums(p.S["beat"][ab], p.S["tie"][ab], p.N[ab], self.deals)

    # --- tables -------------------------------------------------------------------------
    def agent_table(self, names) -> pd.DataFrame:
        """One row per agent that played: rounds, wins, win rate and interval, mean penalty
        and interval, win rate by position in turn order with its interval
        (``win_rate_pos_1`` plays first; and match figures when matches were added): every
        interval clustered by deal."""
        import pandas as pd  # lazy: workers fill a Tally and must start without pandas

        rows = []
        for a, name in enumerate(names):
            n, m = self.count("agent", a), self.count("match", a)
            if n == 0 and m == 0:
                continue
            row = {"agent": name, "rounds": n, "wins": int(round(self.total("agent", "win", a))),
                   "deals": self.deals}
            row["win_rate"], row["win_lo"], row["win_hi"] = self.rate("agent", "win", a)
            row["mean_penalty"], row["penalty_lo"], row["penalty_hi"] = self.mean("agent", "penalty", a)
            for p in range(self.players if self.position.N.any() else 0):
                rate = self.rate("position", "win", a * self.players + p)
                row[f"win_rate_pos_{p + 1}"], row[f"win_lo_pos_{p + 1}"], row[f"win_hi_pos_{p + 1}"] = rate
            if self.match.N.any():
                row["matches"] = m
                row["match_wins"] = int(round(self.total("match", "win", a)))
                row["match_win_rate"], row["match_win_lo"], row["match_win_hi"] = self.rate("match", "win", a)
                row["mean_total"], row["total_lo"], row["total_hi"] = self.mean("match", "total", a)
            rows.append(row)
        return pd.DataFrame(rows)

    def pair_spread(self, a: int, b: int) -> float:
        """The larger per-deal mean penalty of agents ``a`` and ``b`` over the rounds they
        shared: how far one deal's penalty difference may lie from 0 (the bound of a
        difference that was the same in every deal, :func:`~kc_sim.stats.intervals.mean_from_sums`)."""
        A, p = self.n_agents, self.pair
        N = p.N[a * A + b]
        return max(largest_mean(p.S["penalty"][a * A + b], N), largest_mean(p.S["penalty"][b * A + a], N))

    def pair_figures(self, a: int, b: int) -> dict:
        """The head-to-head figures of agent ``a`` against ``b`` over the rounds both were
        dealt in (:meth:`head_to_head` has one row of them per ordered pair): ``rounds``,
        ``wins``, ``win`` (a's win rate), ``penalty`` (a's mean penalty), ``beats`` and
        ``ties`` (rounds with a lower, an equal penalty), ``beat`` (their share,
        :meth:`beat`), ``diff`` (mean penalty difference, a minus b, paired within the deal;
        a difference the same in every deal is bounded by :meth:`pair_spread`), ``ahead``
        (the finishes-ahead share, paired) and ``level`` (every deal level), each figure
        with its interval ``(value, lo, hi)``."""
        key = a * self.n_agents + b
        N, win, diff, ahead = self.pair_sums(a, b)
        return {"rounds": self.count("pair", key), "wins": int(round(self.total("pair", "win", key))),
                "win": rate_from_sums(win, N, self.deals),
                "penalty": mean_from_sums(self.pair.S["penalty"][key], N),
                "beats": int(round(self.total("pair", "beat", key))),
                "ties": int(round(self.total("pair", "tie", key))), "beat": self.beat(a, b),
                "diff": mean_from_sums(diff, N, paired=True, spread=self.pair_spread(a, b)),
                "ahead": rate_from_sums(ahead, N, self.deals, paired=True),
                "level": bool(not np.any(diff) and np.array_equal(2 * ahead, N))}

    def win_diff(self, a: int, b: int) -> tuple[float, float, float]:
        """a's win rate minus b's over the rounds both were dealt in, paired within the deal
        (a difference the same in every deal is bounded by 1, its per-deal range)."""
        p, A = self.pair, self.n_agents
        return mean_from_sums(p.S["win"][a * A + b] - p.S["win"][b * A + a], p.N[a * A + b], paired=True, spread=1.0)

    def head_to_head(self, names) -> pd.DataFrame:
        """One row per ordered pair (agent, opponent) that met, over the rounds where both
        were dealt in: the agent's wins and win rate, its mean penalty, how often its penalty
        was lower (``beats``; equal penalties are ``ties``), the mean penalty difference
        (agent minus opponent) and ``ahead``, the share of rounds it finished ahead (ties
        half); ``level`` is True when every deal (or batch of deals) was level: the difference
        summed to 0 and the agent finished ahead in exactly half (two agents that play
        identically). Every interval clustered by deal; the difference and ``ahead`` are
        paired within the deal."""
        import pandas as pd  # lazy: workers fill a Tally and must start without pandas

        names = list(names)
        rows = []
        for a, b in itertools.permutations(range(self.n_agents), 2):
            if self.count("pair", a * self.n_agents + b) == 0:
                continue
            f = self.pair_figures(a, b)
            row = {"agent": names[a], "opponent": names[b], "rounds": f["rounds"], "wins": f["wins"]}
            row["win_rate"], row["win_lo"], row["win_hi"] = f["win"]
            row["mean_penalty"], row["penalty_lo"], row["penalty_hi"] = f["penalty"]
            row["beats"], row["ties"] = f["beats"], f["ties"]
            row["beat_rate"], row["beat_lo"], row["beat_hi"] = f["beat"]
            row["penalty_diff"], row["diff_lo"], row["diff_hi"] = f["diff"]
            row["ahead"], row["ahead_lo"], row["ahead_hi"] = f["ahead"]
            row["level"] = f["level"]
            rows.append(row)
        cols = ["agent", "opponent", "rounds", "wins", "win_rate", "win_lo", "win_hi", "mean_penalty", "penalty_lo",
                "penalty_hi", "beats", "ties", "beat_rate", "beat_lo", "beat_hi", "penalty_diff", "diff_lo",
                "diff_hi", "ahead", "ahead_lo", "ahead_hi", "level"]
        return pd.DataFrame(rows, columns=cols)

    def summary(self, names, head_to_head: bool | None = None) -> pd.DataFrame:
        """The ``summary.parquet`` table: agent rows (``opponent`` null), then head-to-head
        rows (always, unless ``head_to_head`` is False)."""
        import pandas as pd  # lazy: workers fill a Tally and must start without pandas

        agents = self.agent_table(names)
        agents.insert(1, "opponent", pd.Series([None] * len(agents), dtype="string"))
        if head_to_head is False:
            return _typed(agents)
        pairs = self.head_to_head(names)
        return _typed(pd.concat([agents, pairs], ignore_index=True) if len(pairs) else agents)


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """Stable column types: names as strings, counts as nullable integers, ``level`` as a
    nullable boolean (null on agent rows)."""
    df = df.copy()
    for c in ("agent", "opponent"):
        df[c] = df[c].astype("string")
    for c in ("rounds", "wins", "deals", "beats", "ties", "matches", "match_wins"):
        if c in df:
            df[c] = df[c].astype("Int64")
    if "level" in df:
        df["level"] = df["level"].astype("boolean")
    return df


# --- from dataframes ----------------------------------------------------------------

def seat_columns(df: pd.DataFrame, prefix: str) -> list[str]:
    """``prefix0, prefix1, ...`` columns present in ``df``, in seat order."""
    cols, s = [], 0
    while f"{prefix}{s}" in df.columns:
        cols.append(f"{prefix}{s}")
        s += 1
    return cols


def _agent_codes(df: pd.DataFrame, names) -> np.ndarray:
    """``agent_<seat>`` columns as agent indices into ``names`` (n rows x seats)."""
    index = {n: i for i, n in enumerate(names)}
    cols = seat_columns(df, "agent_")
    out = np.empty((len(df), len(cols)), dtype=np.int64)
    for s, c in enumerate(cols):
        col = df[c].astype("category")
        lookup = agent_index([*col.cat.categories, None], index)
        out[:, s] = lookup[col.cat.codes.to_numpy()]         # a missing name has code -1: the None above
    return out


def _groups(df: pd.DataFrame) -> np.ndarray:
    """The ``group`` (deal number) column, or one deal per row when there is none."""
    if "group" in df.columns:
        return df["group"].to_numpy(dtype=np.int64)
    return np.arange(len(df), dtype=np.int64)


def tally_rounds(df: pd.DataFrame, names, tally: Tally | None = None) -> Tally:
    """Add a rounds dataframe (``group``, ``agent_<s>``, ``penalty_<s>``, ``winner``, and
    ``first`` for the figures by position in turn order) to a tally (a new one batching its
    deals, by default)."""
    codes = _agent_codes(df, names)
    group = _groups(df)
    if tally is None:
        n_deals = int(group.max()) + 1 if len(group) else 1
        tally = Tally.for_deals(len(names), codes.shape[1], n_deals)
    pen = df[seat_columns(df, "penalty_")].fillna(-1).to_numpy(dtype=np.int64)
    winner = df["winner"].fillna(-1).to_numpy(dtype=np.int64)
    first = df["first"].to_numpy(dtype=np.int64) if "first" in df.columns else None
    tally.add_rounds(group, codes, pen, winner, first, count_deals=False)
    tally.deals += len(np.unique(group))
    return tally


def tally_matches(df: pd.DataFrame, names, tally: Tally) -> Tally:
    """Add a matches dataframe (``group``, ``agent_<s>``, ``total_<s>``, ``winners``) to a tally."""
    codes = _agent_codes(df, names)
    total = df[seat_columns(df, "total_")].to_numpy(dtype=np.int64)
    group = _groups(df)
    tally.add_matches(group, codes, total, df["winners"].to_numpy(dtype=np.int64), count_deals=False)
    tally.match_deals += len(np.unique(group))
    return tally


def summarize(rounds: pd.DataFrame, matches: pd.DataFrame | None = None, names=None,
              head_to_head: bool | None = None) -> pd.DataFrame:
    """The summary table of rounds (and matches) held in memory; ``names`` defaults to
    the agents seen, in order of first appearance. Without a ``first`` column (the seat
    that played first) the table has no figures by position in turn order."""
    import pandas as pd  # lazy: workers fill a Tally and must start without pandas

    if names is None:
        seen = pd.concat([rounds[c].astype("string") for c in seat_columns(rounds, "agent_")])
        names = list(dict.fromkeys(seen.dropna()))
    tally = tally_rounds(rounds, names)
    if matches is not None and len(matches):
        tally_matches(matches, names, tally)
    return tally.summary(names, head_to_head)

