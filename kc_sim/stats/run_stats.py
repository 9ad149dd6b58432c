"""The statistics of one run, as every figure, report table and finding needs them.

A :class:`RunStats` is filled one line-up's rows of one part at a time
(:meth:`RunStats.add_rounds`, :meth:`RunStats.add_matches`; :func:`kc_sim.analysis.scan.scan_run`
reads a run folder into it); nothing per round is kept. Its agent, head-to-head and match
figures are those of the run's :class:`~kc_sim.stats.tally.Tally`, the very sums and code
behind ``summary.parquet`` and the table ``kc-sim tournament`` prints (given, or filled here
from the same rows as the workers fill it), so a figure of the report and the same figure
of the summary are one number. What a tally does not hold is summed here, per batch of
deals (:class:`~kc_sim.stats.sums.Sums`) and in histograms: win rates by position in turn
order, round lengths and end reasons (over the run and per line-up), the penalty and turn
histograms, and at 2 players the deals one agent won from both seats. Every figure comes
with its 95% interval clustered by deal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kc_sim.stats.hist import (
    grow_hist,
    median_from_hist,
    merge_intervals,
    percentile_from_hist,
)
from kc_sim.stats.pairs import seat_pairs, turn_positions
from kc_sim.stats.sums import Deals, Sums, batch_count, deal_index
from kc_sim.stats.tally import Tally

ROUND_VALUES = ("turns", "actions", "out", "blocked", "first", "edge", "first_last", "penalty")


@dataclass
class RunStats:
    """Everything the figures, the report tables and the experiment findings need, from one
    pass over the rows of a run.

    ``tally``: the run's :class:`Tally` (agents, seats, pairs of agents, matches); None:
    one is filled here from the rows given (line-up 0's deals counted, as the workers count
    them). Sums (see :class:`Sums`; keys in brackets): ``pos_all`` [position in turn order]
    win (over the seats dealt in); ``pos_agent`` [a * players + position] win; ``rounds_``
    [0] the per-round values of :data:`ROUND_VALUES`; ``lineup`` [line-up] out, blocked;
    ``twice`` (2 players) [a * n_agents + b, per deal of the line-up played from both seats]
    won (a won it from both seats); ``match_`` [0] rounds (matches only). Histograms:
    ``pen_hist[a, v]`` rounds in which agent a took penalty v, ``turns_hist[0 | 1, t]``
    rounds of t turns that ended out | blocked."""

    path: Path | None
    lineups: list                    # agent indices by line-up position, by line-up
    labels: list[str]
    players: int
    rules: str
    mode: str
    seed: int
    width: int                       # deals per batch
    n_deals: int                     # deals per line-up (the schedule's)
    n: int = 0                       # rounds
    deals: int = 0                   # distinct deals in the rounds
    n_matches: int | None = None     # matches (None: single rounds)
    parts_read: int = 0
    tally: Tally | None = None
    pos_all: Sums | None = None
    pos_agent: Sums | None = None
    rounds_: Sums | None = None
    lineup: Sums | None = None
    twice: Sums | None = None
    match_: Sums | None = None
    pen_hist: np.ndarray | None = None
    turns_hist: np.ndarray | None = None
    _intervals: list = field(default_factory=list, repr=False)
    _fill_tally: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self._init_sums()

    # --- building ---------------------------------------------------------------------
    def _init_sums(self) -> None:
        """The empty sums (once: a second call changes nothing)."""
        if self.rounds_ is not None:
            return
        na, k = len(self.labels), self.players
        nb = batch_count(self.n_deals, self.width)
        track = self.width > 1
        if self.tally is None:
            self.tally, self._fill_tally = Tally(na, k, self.width), True
        self.pos_all = Sums(k, ("win",), nb, track)
        self.pos_agent = Sums(na * k, ("win",), nb, track)
        self.rounds_ = Sums(1, ROUND_VALUES, nb, track)
        self.lineup = Sums(max(1, len(self.lineups)), ("out", "blocked"), nb, track)
        self.twice = Sums(na * na, ("won",), nb, track) if k == 2 else None
        self.pen_hist = np.zeros((na, 1), np.int64)
        self.turns_hist = np.zeros((2, 1), np.int64)

    def _all_sums(self):
        return [s for s in (self.pos_all, self.pos_agent, self.rounds_, self.lineup, self.twice, self.match_)
                if s is not None]

    def _prepare(self, deals: Deals, n_lineups: int = 0) -> None:
        need = int(deals.ub.max()) + 1
        for s in self._all_sums():
            s.grow(n_lineups if s is self.lineup else s.n_keys, need)

    def _note_deals(self, deals: Deals) -> None:
        d = deals.deals
        if len(d) == 0:
            return
        cut = np.flatnonzero(np.diff(d) != 1) + 1
        starts, stops = d[np.r_[0, cut]], d[np.r_[cut - 1, len(d) - 1]] + 1
        self._intervals.extend(zip(starts.tolist(), stops.tolist()))
        if len(self._intervals) > 4096:
            self._intervals = merge_intervals(self._intervals)

    def add_rounds(self, cols: dict, lu: int) -> None:
        """Add the rounds of one line-up (arrays as :func:`kc_sim.analysis.scan.round_arrays` gives them)."""
        A, P, W, F = cols["agent"], cols["penalty"], cols["winner"], cols["first"]
        G = cols["group"]
        n, K = P.shape
        if n == 0:
            return
        na = len(self.labels)
        deals = deal_index(G, self.width)
        self._prepare(deals, lu + 1)
        self._note_deals(deals)
        if self._fill_tally:
            self.tally.add_rounds(G, A, P, W, F, count_deals=lu == 0, deals=deals)
        lg = deals.lg
        self.n += n
        dealt_p = P >= 0
        dealt = dealt_p & (A >= 0)
        present = np.flatnonzero(np.bincount(A[A >= 0], minlength=na) > 0)
        kp = len(present)
        remap = np.full(na + 1, -1, np.int64)
        remap[present] = np.arange(kp)
        LA = remap[A]                                  # A = -1 maps to the last entry: -1
        wpos = np.where(W >= 0, turn_positions(F, W, K), -1)

        # per agent x position, and the penalty histogram: one observation per seat dealt in
        r, s = np.nonzero(dealt)
        pos = turn_positions(F[r], s, K)
        self.pos_agent.add(LA[r, s] * K + pos, deals, lg[r], {"win": W[r] == s},
                           (present[:, None] * K + np.arange(K)[None, :]).ravel())
        pen = P[r, s]
        top = max(int(P.max()), 0) + 1
        h = np.bincount(A[r, s] * top + pen, minlength=na * top).reshape(na, top)
        self.pen_hist = grow_hist(self.pen_hist, h)

        # positions in turn order over all agents: the seat at each position, when dealt in
        seat_at = (F[:, None] + np.arange(K)[None, :]) % K
        r2, p2 = np.nonzero(np.take_along_axis(dealt_p, seat_at, axis=1))
        self.pos_all.add(p2, deals, lg[r2], {"win": wpos[r2] == p2}, np.arange(K))
        self._add_round_values(cols, deals, lu, wpos, dealt_p)
        if self.twice is not None and K == 2:
            self._add_twice(W, A, dealt, LA, present, deals)

    def _add_round_values(self, cols: dict, deals: Deals, lu: int, wpos, dealt_p) -> None:
        """Per round: length, how it ended, who played first won, the mean penalty; the
        turns histogram."""
        P, blocked, K = cols["penalty"], cols["blocked"], cols["penalty"].shape[1]
        n, lg = len(P), deals.lg
        out = ~blocked
        first = (wpos == 0).astype(np.float64)
        nd = dealt_p.sum(axis=1)
        self.rounds_.add(np.zeros(n, np.int64), deals, lg, {
            "turns": cols["turns"], "actions": cols["actions"], "out": out, "blocked": blocked, "first": first,
            "edge": first - out / K, "first_last": first - (wpos == K - 1),
            "penalty": np.where(dealt_p, P, 0).sum(axis=1) / np.maximum(nd, 1)}, [0])
        self.lineup.add(np.zeros(n, np.int64), deals, lg, {"out": out, "blocked": blocked}, [lu])
        T = cols["turns"]
        top = int(T.max()) + 1
        self.turns_hist = grow_hist(self.turns_hist, np.stack([np.bincount(T[out], minlength=top),
                                                                np.bincount(T[blocked], minlength=top)]))

    def _add_twice(self, W, A, dealt, LA, present, deals: Deals) -> None:
        """2 players: the deals of this line-up played from both seats, won twice by one agent."""
        _, _, ok = next(seat_pairs(A, dealt, ordered=False))         # the one pair of seats
        if not len(ok):
            return
        kp, lg = len(present), deals.lg
        l0, l1 = LA[ok, 0], LA[ok, 1]
        lo, hi = np.minimum(l0, l1), np.maximum(l0, l1)
        idx = (lo * kp + hi) * deals.ng + lg[ok]
        lo_seat = np.where(l0 == lo, 0, 1)
        size = np.bincount(idx)
        win_lo = np.bincount(idx, weights=W[ok] == lo_seat)
        win_hi = np.bincount(idx, weights=W[ok] == 1 - lo_seat)
        full = np.flatnonzero(size == 2)
        pk, dg = np.divmod(full, deals.ng)
        plo, phi = np.divmod(pk, kp)
        na = len(self.labels)
        self.twice.add(np.concatenate([plo * kp + phi, phi * kp + plo]), deals, np.concatenate([dg, dg]),
                       {"won": np.concatenate([win_lo[full] == 2, win_hi[full] == 2])},
                       (present[:, None] * na + present[None, :]).ravel())

    def add_matches(self, cols: dict, lu: int) -> None:
        """Add the matches of one line-up (arrays as :func:`kc_sim.analysis.scan.match_arrays`
        gives them)."""
        G = cols["group"]
        n = len(G)
        if n == 0:
            return
        deals = deal_index(G, self.width)
        if self.match_ is None:
            self.match_ = Sums(1, ("rounds",), self.rounds_.n_batches, self.width > 1)
            self.n_matches = 0
        self._prepare(deals)
        self.n_matches += n
        if self._fill_tally:
            self.tally.add_matches(G, cols["agent"], cols["total"], cols["winners"], count_deals=lu == 0, deals=deals)
        self.match_.add(np.zeros(n, np.int64), deals, deals.lg, {"rounds": cols["rounds"]}, [0])

    def finish(self) -> None:
        for s in self._all_sums():
            s.finish()
        self._intervals = merge_intervals(self._intervals)
        self.deals = sum(b - a for a, b in self._intervals)

    # --- what the figures and tables show -----------------------------------------------
    @property
    def n_agents(self) -> int:
        return len(self.labels)

    @property
    def agent(self) -> Sums:
        """The per-agent sums (win, penalty) of the run's tally."""
        return self.tally.agent

    def agents_seen(self) -> list[int]:
        """Agent codes that played at least one round, in label order."""
        return [a for a in range(self.n_agents) if self.tally.count("agent", a) > 0]

    def agent_rows(self) -> list[dict]:
        """Per agent: rounds, win rate and mean penalty with intervals (the tally's)."""
        t = self.tally
        return [{"agent": self.labels[a], "a": a, "rounds": t.count("agent", a),
                 "win": t.rate("agent", "win", a), "penalty": t.mean("agent", "penalty", a)}
                for a in self.agents_seen()]

    def head_to_head(self) -> list[dict]:
        """One row per ordered pair of agents that met: rounds together, ``score`` (the row
        agent finished ahead: a lower penalty, ties half), ``win`` (the row agent won),
        ``diff`` (mean penalty, row agent minus opponent), each with its interval (the
        tally's :meth:`~kc_sim.stats.tally.Tally.pair_figures`)."""
        rows = []
        seen = self.agents_seen()
        for a in seen:
            for b in seen:
                if a == b or self.tally.count("pair", a * self.n_agents + b) == 0:
                    continue
                f = self.tally.pair_figures(a, b)
                rows.append({"agent": self.labels[a], "opponent": self.labels[b], "a": a, "b": b,
                             "rounds": f["rounds"], "score": f["ahead"], "win": f["win"], "diff": f["diff"]})
        return rows

    def pair(self, a: int, b: int) -> dict | None:
        """Head-to-head figures of agents a and b over the rounds where both sat: both win
        rates, their difference, how often a finishes ahead, the mean penalty difference,
        and (2 players) the deals one agent won from both seats ``(a's, b's, deals)``."""
        t, k = self.tally, self.n_agents
        if t.count("pair", a * k + b) == 0:
            return None
        f = t.pair_figures(a, b)
        twice = None
        if self.twice is not None:
            twice = (self.twice.rate("won", a * k + b), self.twice.rate("won", b * k + a), self.twice.count(a * k + b))
        return {"rounds": f["rounds"], "win_a": f["win"], "win_b": t.pair_figures(b, a)["win"],
                "win_diff": t.win_diff(a, b), "ahead": f["ahead"], "pen_diff": f["diff"], "twice": twice}

    def position_rows(self, agent: int | None = None) -> list[dict]:
        """Win rate by position in turn order (0 plays first), over all agents or one agent."""
        out = []
        for p in range(self.players):
            if agent is None:
                s, key = self.pos_all, p
            else:
                s, key = self.pos_agent, agent * self.players + p
            out.append({"position": p, "rounds": s.count(key), "win": s.rate("win", key)})
        return out

    def end_rows(self) -> dict:
        """Round length and end reasons, with intervals."""
        r = self.rounds_
        return {"rounds": self.n, "deals": self.deals, "turns": r.mean("turns"), "actions": r.mean("actions"),
                "turns_median": median_from_hist(self.turns_hist.sum(axis=0)),
                "out": r.rate("out"), "blocked": r.rate("blocked")}

    def round_mean(self, value: str) -> tuple[float, float, float]:
        """Clustered mean of a per-round value of :data:`ROUND_VALUES` over every round."""
        return self.rounds_.mean(value)

    def round_rate(self, value: str) -> tuple[float, float, float]:
        return self.rounds_.rate(value)

    def round_sums(self, value: str) -> tuple[np.ndarray, np.ndarray]:
        """Per-batch (S, N) of a per-round value (for differences paired by deal)."""
        return self.rounds_.S[value][0], self.rounds_.N[0]

    def end_reasons(self) -> list[dict]:
        """Out and blocked rates (and counts) over all rounds, then per line-up when there
        are several."""
        r = self.rounds_
        rows = [{"name": "all rounds", "rounds": self.n, "out": r.rate("out"), "blocked": r.rate("blocked"),
                 "n_out": int(round(r.total("out"))), "n_blocked": int(round(r.total("blocked")))}]
        if len(self.lineups) > 1:
            L = self.lineup
            for li, lu in enumerate(self.lineups):
                rows.append({"name": " vs ".join(self.labels[i] for i in lu), "rounds": L.count(li),
                             "out": L.rate("out", li), "blocked": L.rate("blocked", li),
                             "n_out": int(round(L.total("out", li))), "n_blocked": int(round(L.total("blocked", li)))})
        return rows

    @property
    def blocked_share(self) -> float:
        return self.rounds_.total("blocked") / self.n if self.n else math.nan

    def penalty_top(self, q: float = 99.5) -> int:
        """The q-th percentile of every penalty taken (int, at least 5): the last point of the
        penalty figure."""
        v = percentile_from_hist(self.pen_hist.sum(axis=0), q)
        return max(int(v) if not math.isnan(v) else 1, 5)

    def penalty_shares(self, a: int, top: int) -> np.ndarray:
        """Share of agent a's rounds at each penalty 0..top (the last: top or more)."""
        h = np.zeros(top + 1)
        row = self.pen_hist[a]
        m = min(len(row), top)
        h[:m] = row[:m]
        h[top] += row[top:].sum()
        return h / max(row.sum(), 1)

    def turn_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Rounds by number of turns (0..max): ending out, ending blocked."""
        top = int(np.flatnonzero(self.turns_hist.sum(axis=0)).max()) if self.n else 0
        return self.turns_hist[0, :top + 1], self.turns_hist[1, :top + 1]

    def match_rows(self) -> list[dict]:
        """Per agent, when the run played matches: match win rate (a shared win counts for
        every sharer) and mean penalty total, clustered by deal (match seed group): the tally's."""
        if self.n_matches is None:
            return []
        t = self.tally
        return [{"agent": self.labels[a], "matches": t.count("match", a), "win": t.rate("match", "win", a),
                 "total": t.mean("match", "total", a)} for a in self.agents_seen() if t.count("match", a) > 0]

    def match_length(self) -> tuple[float, float, float]:
        """Rounds per match, clustered by deal."""
        return self.match_.mean("rounds") if self.match_ is not None else (math.nan,) * 3

    # --- pandas -------------------------------------------------------------------------
    def frames(self) -> dict:
        """The tables as pandas DataFrames (one column per number, ``_lo`` / ``_hi`` for
        the interval): agents, head_to_head, positions (all agents and each agent), ends,
        penalties (share of each agent's rounds at each penalty), turns (rounds by turns
        and end reason), matches."""
        import pandas as pd  # lazy: only frames() needs pandas; kc-sim plot and report never call it

        def flat(row):
            out = {}
            for k, v in row.items():
                if isinstance(v, tuple) and len(v) == 3:
                    out[k], out[f"{k}_lo"], out[f"{k}_hi"] = v
                else:
                    out[k] = v
            return out

        positions = [flat({"agent": "all agents", **r}) for r in self.position_rows()]
        for a in self.agents_seen():
            positions += [flat({"agent": self.labels[a], **r}) for r in self.position_rows(a)]
        top = int(np.flatnonzero(self.pen_hist.sum(axis=0)).max()) if self.n else 0
        pens = [{"agent": self.labels[a], "penalty": v, "rounds": int(self.pen_hist[a, v]),
                 "share": self.pen_hist[a, v] / max(self.pen_hist[a].sum(), 1)}
                for a in self.agents_seen() for v in range(top + 1)]
        out_c, blk_c = self.turn_counts()
        turns = [{"turns": t, "end": e, "rounds": int(c[t])} for e, c in (("out", out_c), ("blocked", blk_c))
                 for t in range(len(c))]
        return {
            "agents": pd.DataFrame([flat(r) for r in self.agent_rows()]),
            "head_to_head": pd.DataFrame([flat(r) for r in self.head_to_head()]),
            "positions": pd.DataFrame(positions),
            "ends": pd.DataFrame([flat(r) for r in self.end_reasons()]),
            "penalties": pd.DataFrame(pens),
            "turns": pd.DataFrame(turns),
            "matches": pd.DataFrame([flat(r) for r in self.match_rows()]),
        }
