"""The statistics of one run, as every figure, report table and finding needs them.

A :class:`RunStats` is filled by :func:`kc_sim.analysis.scan.scan_run`, one line-up's
rows of one part at a time (:meth:`RunStats.add_rounds`, :meth:`RunStats.add_matches`),
into per-batch :class:`~kc_sim.stats.sums.Sums` and histograms; nothing per round is
kept. Its methods give the rows the figures and tables show, every figure with its 95%
interval clustered by deal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kc_sim.analysis.hist import grow_hist, median_from_hist, merge_intervals, percentile_from_hist
from kc_sim.analysis.text import rules_label
from kc_sim.stats import mean_from_sums
from kc_sim.stats.intervals import largest_mean
from kc_sim.stats.sums import Deals, Sums, deal_index

ROUND_VALUES = ("turns", "actions", "out", "blocked", "first", "edge", "first_last", "penalty")


@dataclass
class RunStats:
    """Everything the figures, the report tables and the experiment findings need, built by
    :func:`scan_run` from one pass over the parts of a run folder.

    Sums (see :class:`Sums`; keys in brackets): ``agent`` [agent code] win, penalty;
    ``h2h`` [a * n_agents + b, over the rounds both sat] score (a finished with a lower
    penalty than b, ties half), win (a won), diff (a's penalty - b's); ``pos_all``
    [position in turn order] win (over the seats dealt in); ``pos_agent`` [a * players +
    position] win; ``rounds_`` [0] the per-round values of :data:`ROUND_VALUES`;
    ``lineup`` [line-up] out, blocked; ``twice`` (2 players) [a * n_agents + b, per deal of
    the line-up played from both seats] won (a won it from both seats); ``match_agent``
    [agent] win, total and ``match_`` [0] rounds (matches only). Histograms:
    ``pen_hist[a, v]`` rounds in which agent a took penalty v, ``turns_hist[0 | 1, t]``
    rounds of t turns that ended out | blocked."""

    path: Path
    manifest: dict
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
    agent: Sums | None = None
    h2h: Sums | None = None
    pos_all: Sums | None = None
    pos_agent: Sums | None = None
    rounds_: Sums | None = None
    lineup: Sums | None = None
    twice: Sums | None = None
    match_agent: Sums | None = None
    match_: Sums | None = None
    pen_hist: np.ndarray | None = None
    turns_hist: np.ndarray | None = None
    _intervals: list = field(default_factory=list, repr=False)

    # --- building ---------------------------------------------------------------------
    def _init_sums(self) -> None:
        na, k = len(self.labels), self.players
        nb = -(-max(self.n_deals, 1) // self.width)
        track = self.width > 1
        n_lineups = max(1, len((self.manifest.get("schedule") or {}).get("lineups") or [1]))
        self.agent = Sums(na, ("win", "penalty"), nb, track)
        self.h2h = Sums(na * na, ("score", "win", "diff"), nb, track)
        self.pos_all = Sums(k, ("win",), nb, track)
        self.pos_agent = Sums(na * k, ("win",), nb, track)
        self.rounds_ = Sums(1, ROUND_VALUES, nb, track)
        self.lineup = Sums(n_lineups, ("out", "blocked"), nb, track)
        self.twice = Sums(na * na, ("won",), nb, track) if k == 2 else None
        self.pen_hist = np.zeros((na, 1), np.int64)
        self.turns_hist = np.zeros((2, 1), np.int64)

    def _all_sums(self):
        return [s for s in (self.agent, self.h2h, self.pos_all, self.pos_agent, self.rounds_, self.lineup,
                            self.twice, self.match_agent, self.match_) if s is not None]

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
        blocked, G = cols["blocked"], cols["group"]
        n, K = P.shape
        if n == 0:
            return
        na = len(self.labels)
        deals = deal_index(G, self.width)
        self._prepare(deals, lu + 1)
        self._note_deals(deals)
        lg = deals.lg
        self.n += n
        dealt_p = P >= 0
        dealt = dealt_p & (A >= 0)
        present = np.flatnonzero(np.bincount(A[A >= 0], minlength=na) > 0)
        kp = len(present)
        remap = np.full(na + 1, -1, np.int64)
        remap[present] = np.arange(kp)
        LA = remap[A]                                  # A = -1 maps to the last entry: -1
        wpos = np.where(W >= 0, (W - F) % K, -1)

        # per agent and per agent x position: one observation per seat dealt in
        r, s = np.nonzero(dealt)
        key = LA[r, s]
        won = W[r] == s
        pen = P[r, s]
        self.agent.add(key, deals, lg[r], {"win": won, "penalty": pen}, present)
        pos = (s - F[r]) % K
        self.pos_agent.add(key * K + pos, deals, lg[r], {"win": won},
                           (present[:, None] * K + np.arange(K)[None, :]).ravel())
        top = max(int(P.max()), 0) + 1
        h = np.bincount(A[r, s] * top + pen, minlength=na * top).reshape(na, top)
        self.pen_hist = grow_hist(self.pen_hist, h)

        # ordered pairs of seats both dealt in
        si, ti = (x.ravel() for x in np.nonzero(~np.eye(K, dtype=bool)))
        both = dealt[:, si] & dealt[:, ti] & (A[:, si] != A[:, ti])          # (n, K (K - 1))
        rb, j = np.nonzero(both)
        sa, sb = si[j], ti[j]
        pa, pb = P[rb, sa], P[rb, sb]
        pair_keys = (present[:, None] * na + present[None, :]).ravel()
        self.h2h.add(LA[rb, sa] * kp + LA[rb, sb], deals, lg[rb],
                     {"score": (pa < pb) + 0.5 * (pa == pb), "win": W[rb] == sa, "diff": pa - pb}, pair_keys)

        # positions in turn order over all agents: the seat at each position, when dealt in
        seat_at = (F[:, None] + np.arange(K)[None, :]) % K
        r2, p2 = np.nonzero(np.take_along_axis(dealt_p, seat_at, axis=1))
        self.pos_all.add(p2, deals, lg[r2], {"win": wpos[r2] == p2}, np.arange(K))

        # per round
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

        # 2 players: deals of this line-up played from both seats, won twice by one agent
        if self.twice is not None and K == 2:
            ok = np.flatnonzero(dealt[:, 0] & dealt[:, 1] & (A[:, 0] != A[:, 1]))
            if len(ok):
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
                self.twice.add(np.concatenate([plo * kp + phi, phi * kp + plo]), deals, np.concatenate([dg, dg]),
                               {"won": np.concatenate([win_lo[full] == 2, win_hi[full] == 2])}, pair_keys)

    def add_matches(self, cols: dict, lu: int) -> None:
        """Add the matches of one line-up (arrays as :func:`kc_sim.analysis.scan.match_arrays`
        gives them)."""
        G = cols["group"]
        n = len(G)
        if n == 0:
            return
        deals = deal_index(G, self.width)
        if self.match_ is None:
            na, nb = len(self.labels), self.agent.n_batches
            self.match_agent = Sums(na, ("win", "total"), nb, self.width > 1)
            self.match_ = Sums(1, ("rounds",), nb, self.width > 1)
            self.n_matches = 0
        self._prepare(deals)
        self.n_matches += n
        A, total, winners = cols["agent"], cols["total"], cols["winners"]
        r, s = np.nonzero(A >= 0)
        na = len(self.labels)
        self.match_agent.add(A[r, s], deals, deals.lg[r], {"win": (winners[r] >> s) & 1, "total": total[r, s]},
                             np.arange(na))
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
    def rules_label(self) -> str:
        return rules_label(self.rules)

    def agents_seen(self) -> list[int]:
        """Agent codes that played at least one round, in label order."""
        return [a for a in range(self.n_agents) if self.agent.count(a) > 0]

    def caption(self) -> str:
        size = f"{self.n:,} rounds ({self.deals:,} deals)"
        if self.n_matches is not None:
            size = f"{self.n_matches:,} matches, " + size
        agents = ", ".join(self.labels)
        return (f"rules: {self.rules_label} | {self.players} players | {size} | agents: {agents} | "
                f"seed {self.seed} | intervals: 95%, clustered by deal")

    def agent_rows(self) -> list[dict]:
        """Per agent: rounds, win rate and mean penalty with intervals."""
        return [{"agent": self.labels[a], "a": a, "rounds": self.agent.count(a),
                 "win": self.agent.rate("win", a), "penalty": self.agent.mean("penalty", a)}
                for a in self.agents_seen()]

    def _pair(self, a: int, b: int) -> int:
        return a * self.n_agents + b

    def _pen_diff(self, a: int, b: int) -> tuple[float, float, float]:
        """a's mean penalty minus b's over their rounds together, paired within the deal; a
        difference the same in every deal is bounded by the larger per-deal mean penalty of
        the two (:func:`~kc_sim.stats.intervals.mean_from_sums`)."""
        k, ag = self._pair(a, b), self.agent
        spread = max(largest_mean(ag.S["penalty"][a], ag.N[a]), largest_mean(ag.S["penalty"][b], ag.N[b]))
        return mean_from_sums(self.h2h.S["diff"][k], self.h2h.N[k], paired=True, spread=spread)

    def head_to_head(self) -> list[dict]:
        """One row per ordered pair of agents that met: rounds together, ``score`` (the row
        agent finished with a lower penalty; ties half), ``win`` (the row agent won),
        ``diff`` (mean penalty, row agent minus opponent), each with its interval."""
        rows = []
        seen = self.agents_seen()
        for a in seen:
            for b in seen:
                if a == b:
                    continue
                k = self._pair(a, b)
                n = self.h2h.count(k)
                if n == 0:
                    continue
                rows.append({"agent": self.labels[a], "opponent": self.labels[b], "a": a, "b": b, "rounds": n,
                             "score": self.h2h.rate("score", k, paired=True), "win": self.h2h.rate("win", k),
                             "diff": self._pen_diff(a, b)})
        return rows

    def pair(self, a: int, b: int) -> dict | None:
        """Head-to-head figures of agents a and b over the rounds where both sat: both win
        rates, their difference, how often a finishes ahead, the mean penalty difference,
        and (2 players) the deals one agent won from both seats ``(a's, b's, deals)``."""
        k, kb = self._pair(a, b), self._pair(b, a)
        n = self.h2h.count(k)
        if n == 0:
            return None
        h = self.h2h
        twice = None
        if self.twice is not None:
            twice = (self.twice.rate("won", k), self.twice.rate("won", kb), self.twice.count(k))
        return {
            "rounds": n, "win_a": h.rate("win", k), "win_b": h.rate("win", kb),
            "win_diff": mean_from_sums(h.S["win"][k] - h.S["win"][kb], h.N[k], paired=True, spread=1.0),
            "ahead": h.rate("score", k, paired=True), "pen_diff": self._pen_diff(a, b), "twice": twice,
        }

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

    @property
    def lineups(self) -> list:
        return (self.manifest.get("schedule") or {}).get("lineups") or self.manifest["config"].get("lineups", [])

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
        every sharer) and mean penalty total, clustered by deal (match seed group)."""
        if self.match_agent is None:
            return []
        m = self.match_agent
        return [{"agent": self.labels[a], "matches": m.count(a), "win": m.rate("win", a),
                 "total": m.mean("total", a)} for a in self.agents_seen() if m.count(a) > 0]

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
