"""The coverage study's synthetic tournament, whose truth is known, and kc-sim's figures of it.

**The synthetic tournament** (:class:`Model`) has the structure of a real one: ``A`` agents,
``k`` seats, every line-up of ``k`` agents, every one of the ``k!`` seatings, and every deal
played by all of them, so the rounds of a deal are correlated exactly as kc-sim's are. A deal
``d`` draws a level ``c_d`` (how costly the deal is for everyone), a hand quality ``h_ds``
for each seat and the first player; in a round the seat ``s`` held by agent ``a`` scores
``X = h_ds + mu[position] + theta_a + e`` (``e`` a fresh normal per round for stochastic
agents; for *identical* deterministic agents the same for every seating of the deal, so
swapping two of them changes nothing). The highest ``X`` goes out (penalty 0) unless every
``X`` is below a threshold that rises with ``c_d`` (blocked, about 3% of rounds); the others take the integer penalty
``max(1, floor(exp(1 + 0.4 c_d - 0.6 X)))``. Matches add up three rounds on three deals of
the match's group (lowest total wins, ties shared).

**kc-sim's figures** of a simulated run (:func:`intervals`) come from kc-sim's own code: the
workers' :class:`~kc_sim.stats.Tally` and its summary, the scan's
:class:`~kc_sim.stats.run_stats.RunStats`, the leaderboard's comparisons and ratings.

**The truth** of every figure (:func:`truth`) is its expectation under the model, computed
once by Monte Carlo over many more deals (``truth_deals``; its error is a few percent of the
narrowest interval studied), and exactly where symmetry gives it (self-play). Ratings are
judged against the Bradley-Terry fit of the truth's comparisons. :mod:`kc_sim.analysis.coverage`
runs the study.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from kc_sim.stats import Tally
from kc_sim.stats.bradley_terry import (
    Comparisons,
    fit_bt,
    pair_sums,
    sandwich_cov,
    totals,
)
from kc_sim.stats.intervals import mean_from_sums, rate_from_sums, t_of
from kc_sim.stats.pairs import ahead_of
from kc_sim.stats.ratings import rate_comparisons
from kc_sim.stats.run_stats import RunStats

#: the interval kinds, in the order of the table: (key, what it is, where it is printed)
KINDS = (
    ("agent_win", "win rate of an agent", "summary"),
    ("agent_penalty", "mean penalty of an agent", "summary"),
    ("summary_position_win", "an agent's win rate by position in turn order", "summary, summary.parquet"),
    ("pair_win", "win rate of an agent over the rounds with another", "summary, bench-agent"),
    ("pair_penalty", "mean penalty of an agent over the rounds with another", "summary.parquet"),
    ("beat", "share of rounds with a lower penalty than another", "summary.parquet"),
    ("diff", "mean penalty difference (paired within the deal)", "summary, bench-agent"),
    ("ahead", "finishes ahead (paired within the deal)", "summary, report"),
    ("match_win", "match win rate (shared wins count)", "summary"),
    ("match_total", "mean penalty total of a match", "summary"),
    ("position_win", "win rate by position in turn order", "report, figures, findings"),
    ("position_agent_win", "an agent's win rate by position", "report, figures"),
    ("blocked", "share of blocked rounds", "report, findings"),
    ("turns", "mean turns per round", "report, findings"),
    ("share", "leaderboard pairwise share (bootstrap over deals)", "leaderboard"),
    ("rating", "leaderboard rating (bootstrap over deals)", "leaderboard"),
    ("rating_clustered", "leaderboard rating, --bootstrap 0 (sandwich)", "leaderboard --bootstrap 0"),
    ("share_clustered", "leaderboard pairwise share, --bootstrap 0", "leaderboard --bootstrap 0"),
)
SCENARIOS = ("self-play", "difference", "identical")
#: agents per player count (every line-up of k of them plays)
AGENTS = {2: 3, 3: 4, 4: 4}
#: skills of the "difference" scenario
THETA = (0.25, 0.0, -0.1, -0.3)
POSITION = (0.3, 0.1, 0.0, -0.1)
#: how steeply a seat's penalty falls with its score: per-deal mean penalties then have the
#: skewness of the real game's (1.7 at 2 players, 1.7-2.0 at 3-4: greedy, pile-merger, random)
SLOPE = {2: 0.4, 3: 0.6, 4: 0.6}
#: a round is blocked when every seat's score is below this (plus 0.6 x the deal's level):
#: about 3% of rounds, as in kc-sim's classic rules
BLOCK = {2: -1.35, 3: -0.75, 4: -0.3}



@dataclass
class Model:
    """The synthetic tournament of the module doc: ``players`` seats, ``agents`` agents
    with skills ``theta``; ``identical``: deterministic play (equal agents swap exactly)."""

    players: int
    theta: tuple
    identical: bool = False
    lineups: tuple = field(init=False)
    seatings: tuple = field(init=False)

    def __post_init__(self):
        k = self.players
        self.lineups = tuple(itertools.combinations(range(len(self.theta)), k))
        self.seatings = tuple(itertools.permutations(range(k)))

    @classmethod
    def scenario(cls, name: str, players: int) -> Model:
        n = AGENTS[players]
        if name == "difference":
            return cls(players, THETA[:n])
        return cls(players, (0.0,) * n, identical=name == "identical")

    @property
    def n_agents(self) -> int:
        return len(self.theta)

    @property
    def rounds_per_deal(self) -> int:
        return len(self.lineups) * len(self.seatings)

    def _deals(self, rng, n: int):
        k = self.players
        return {"level": rng.normal(0.0, 0.5, n), "hand": rng.normal(0.0, 1.0, (n, k)),
                "first": rng.integers(0, k, n), "luck": rng.normal(0.0, 1.0, (n, k))}

    def _play(self, rng, deal, lineup, seating):
        """Every deal once for a line-up in a seating: (agent, penalty, winner, blocked, turns)."""
        k, n = self.players, len(deal["level"])
        agent = np.array([lineup[q] for q in seating])
        pos = (np.arange(k)[None, :] - deal["first"][:, None]) % k
        e = deal["luck"] if self.identical else rng.normal(0.0, 1.0, (n, k))
        X = deal["hand"] + np.asarray(POSITION)[pos] + np.asarray(self.theta)[agent][None, :] + e
        blocked = X.max(axis=1) < BLOCK[k] + 0.6 * deal["level"]
        winner = np.where(blocked, -1, X.argmax(axis=1))
        pen = np.maximum(1, np.floor(np.exp(1.0 + 0.4 * deal["level"][:, None] - SLOPE[k] * X))).astype(np.int64)
        pen = np.minimum(pen, 60)
        pen[np.arange(n), np.maximum(winner, 0)] = np.where(blocked, pen[np.arange(n), np.maximum(winner, 0)], 0)
        turns = np.maximum(1, np.round(18 + 4 * deal["level"] + (0 if self.identical else rng.normal(0, 2, n))))
        return np.tile(agent, (n, 1)), pen, winner, blocked, turns.astype(np.int64)

    def rounds(self, rng, n_deals: int, first_group: int = 0) -> dict:
        """The rounds of ``n_deals`` deals (groups ``first_group ..``), every line-up in every
        seating: arrays as the scan reads them (plus ``lineup``)."""
        deal = self._deals(rng, n_deals)
        group = np.arange(first_group, first_group + n_deals)
        cols = {c: [] for c in ("lineup", "group", "first", "agent", "penalty", "winner", "blocked", "turns")}
        for li, lu in enumerate(self.lineups):
            for seating in self.seatings:
                agent, pen, winner, blocked, turns = self._play(rng, deal, lu, seating)
                for c, v in (("lineup", np.full(n_deals, li)), ("group", group), ("first", deal["first"]),
                             ("agent", agent), ("penalty", pen), ("winner", winner), ("blocked", blocked),
                             ("turns", turns)):
                    cols[c].append(v)
        out = {c: np.concatenate(v) for c, v in cols.items()}
        out["actions"] = out["turns"]
        return out

    def matches(self, rng, n_deals: int, length: int = 3) -> dict:
        """Matches of ``length`` rounds, one per group, line-up and seating: (group, agent, total, winners)."""
        deals = [self._deals(rng, n_deals) for _ in range(length)]
        group = np.arange(n_deals)
        G, A, T, W = [], [], [], []
        for lu in self.lineups:
            for seating in self.seatings:
                total = 0
                for d in deals:
                    agent, pen, _, _, _ = self._play(rng, d, lu, seating)
                    total = total + pen
                low = total.min(axis=1, keepdims=True)
                W.append(((total == low) * (1 << np.arange(self.players))[None, :]).sum(axis=1))
                G.append(group)
                A.append(agent)
                T.append(total)
        return {"group": np.concatenate(G), "agent": np.concatenate(A), "total": np.concatenate(T),
                "winners": np.concatenate(W)}


# --- summarising a simulated run with kc-sim's own code ---------------------------------------

def labels(model: Model) -> list[str]:
    return [f"a{i}" for i in range(model.n_agents)]


def tally_of(model: Model, r: dict, m: dict | None = None) -> Tally:
    """The tournament's tally of the rounds (and matches), as the workers fill it."""
    t = Tally.for_deals(model.n_agents, model.players, int(r["group"].max()) + 1)
    t.add_rounds(r["group"], r["agent"], r["penalty"], r["winner"], r["first"], count_deals=False)
    t.deals = len(np.unique(r["group"]))
    if m is not None:
        t.add_matches(m["group"], m["agent"], m["total"], m["winners"], count_deals=False)
        t.match_deals = len(np.unique(m["group"]))
    return t


def _run_stats(model: Model, n_deals: int) -> RunStats:
    """An empty :class:`RunStats` of the model's runs (one deal per batch)."""
    return RunStats(path=None, lineups=[list(x) for x in model.lineups],
                    labels=labels(model), players=model.players, rules="classic", mode="rounds", seed=0,
                    width=1, n_deals=n_deals)


def _add_lineups(st: RunStats, r: dict) -> None:
    """Add rounds of the model to ``st`` line-up by line-up, as from a run folder."""
    for li in range(len(st.lineups)):
        here = r["lineup"] == li
        st.add_rounds({c: v[here] for c, v in r.items()}, li)


def scan_of(model: Model, r: dict) -> RunStats:
    """The scan's statistics of the rounds, line-up by line-up as from a run folder."""
    st = _run_stats(model, int(r["group"].max()) + 1)
    _add_lineups(st, r)
    st.finish()
    return st


def comparisons_of(model: Model, r: dict) -> Comparisons:
    """The leaderboard's comparisons of the rounds, summed per (deal, pair)
    (:func:`~kc_sim.stats.bradley_terry.pair_sums`, the leaderboard's own sums)."""
    A, n_deals = model.n_agents, int(r["group"].max()) + 1
    won, count = pair_sums(r["agent"], r["penalty"], r["group"], A, n_deals)
    won, count = won.reshape(A * A, n_deals).T, count.reshape(A * A, n_deals).T     # (deal, pair)
    u, p = np.nonzero(count)
    a, b = np.divmod(p, A)
    du, dense = np.unique(u, return_inverse=True)
    rounds = np.bincount(r["agent"].ravel(), minlength=A)
    return Comparisons(labels(model), dense, a, b, won[u, p], count[u, p], rounds, len(du), len(r["group"]))


def intervals(model: Model, r: dict, m: dict | None = None, bootstrap: int = 0, seed: int = 0) -> dict:
    """Every interval of a simulated run by kind: ``{kind: {key: (value, lo, hi)}}``: the
    tally's (as :meth:`~kc_sim.stats.Tally.agent_table` and
    :meth:`~kc_sim.stats.Tally.head_to_head` compute them), the scan's, and the leaderboard's
    (with ``bootstrap`` resamples: the whole :func:`~kc_sim.stats.ratings.rate_comparisons`)."""
    A, k = model.n_agents, model.players
    t = tally_of(model, r, m)
    out: dict = {kind: {} for kind, _, _ in KINDS}
    for a in range(A):
        out["agent_win"][a] = t.rate("agent", "win", a)
        out["agent_penalty"][a] = t.mean("agent", "penalty", a)
        for s in range(k):
            out["summary_position_win"][(a, s)] = t.rate("position", "win", a * k + s)
        if m is not None:
            out["match_win"][a] = t.rate("match", "win", a)
            out["match_total"][a] = t.mean("match", "total", a)
        for b in range(A):
            key = a * A + b
            if a == b or t.count("pair", key) == 0:
                continue
            N, win, diff, ahead = t.pair_sums(a, b)
            out["pair_win"][(a, b)] = rate_from_sums(win, N, t.deals)
            out["pair_penalty"][(a, b)] = mean_from_sums(t.pair.S["penalty"][key], N)
            out["beat"][(a, b)] = t.beat(a, b)
            out["diff"][(a, b)] = mean_from_sums(diff, N, paired=True, spread=t.pair_spread(a, b))
            out["ahead"][(a, b)] = rate_from_sums(ahead, N, t.deals, paired=True)
    st = scan_of(model, r)
    for row in st.position_rows():
        out["position_win"][row["position"]] = row["win"]
    for a in range(A):
        for row in st.position_rows(a):
            out["position_agent_win"][(a, row["position"])] = row["win"]
    ends = st.end_rows()
    out["blocked"][0], out["turns"][0] = ends["blocked"], ends["turns"]
    c = comparisons_of(model, r)
    W, N = totals(c)
    theta, cov = fit_bt(W, N)
    se = np.sqrt(np.maximum(np.diag(sandwich_cov(c, theta, cov)), 0.0))
    q = t_of(0.95, c.n_units - 1)
    for a in range(A):
        out["rating_clustered"][a] = (theta[a], theta[a] - q * se[a], theta[a] + q * se[a])
    key = c.a * A + c.b
    for pk in np.unique(key):
        here = key == pk
        a, b = divmod(int(pk), A)
        sh = rate_from_sums(c.score[here], c.count[here], paired=True)
        out["share_clustered"][(a, b)] = sh
        out["share_clustered"][(b, a)] = (1 - sh[0], 1 - sh[2], 1 - sh[1])
    if bootstrap:
        names = labels(model)
        board = rate_comparisons(c, bootstrap=bootstrap, seed=seed)
        for row in board.itertuples(index=False):
            out["rating"][names.index(row.agent)] = (row.theta, row.theta_lo, row.theta_hi)
        for row in board.attrs["metagame"].pairs.itertuples(index=False):
            out["share"][(names.index(row.agent), names.index(row.opponent))] = (
                row.share, row.share_lo, row.share_hi)
    return {kind: v for kind, v in out.items() if v}


# --- the truth ---------------------------------------------------------------------------------

def truth(model: Model, deals: int = 200_000, seed: int = 12345, chunk: int = 20_000) -> dict:
    """The expectation of every figure under the model by Monte Carlo over ``deals`` deals (and
    the Bradley-Terry strengths of its comparisons), in the keys of :func:`intervals`: the
    figures of one :class:`RunStats` (and its tally) of all of them, as one cluster."""
    rng = np.random.default_rng(seed)
    A, k = model.n_agents, model.players
    st = _run_stats(model, 1)
    big = st.tally
    for start in range(0, deals, chunk):
        r = model.rounds(rng, min(chunk, deals - start))
        m = model.matches(rng, min(chunk, deals - start))
        r["group"] = r["group"] * 0               # one cluster: only the sums matter here
        m["group"] = m["group"] * 0
        _add_lineups(st, r)
        big.add_matches(m["group"], m["agent"], m["total"], m["winners"])
    st.finish()
    out = tally_truth(big)
    ma = big.match
    for a in range(A):
        out["match_win"][a] = ma.total("win", a) / ma.count(a)
        out["match_total"][a] = ma.total("total", a) / ma.count(a)
        for p in range(k):
            key = a * k + p
            out["position_agent_win"][(a, p)] = st.pos_agent.total("win", key) / st.pos_agent.count(key)
    for key, v in out["ahead"].items():
        out["share"][key] = out["share_clustered"][key] = v
    for p in range(k):
        out["position_win"][p] = st.pos_all.total("win", p) / st.pos_all.count(p)
    out["blocked"][0], out["turns"][0] = (st.rounds_.total(v) / st.n for v in ("blocked", "turns"))
    pr = big.pair
    W = ahead_of(pr.S["beat"], pr.S["tie"]).sum(axis=1).reshape(A, A)
    theta, _ = fit_bt(W, pr.N.sum(axis=1).reshape(A, A), prior=0.0)
    for a in range(A):
        out["rating"][a] = out["rating_clustered"][a] = theta[a]
    if all(x == model.theta[0] for x in model.theta):            # self-play: what symmetry says exactly
        for kind in ("diff",):
            out[kind] = {key: 0.0 for key in out[kind]}
        for kind in ("ahead", "share", "share_clustered"):
            out[kind] = {key: 0.5 for key in out[kind]}
        for kind in ("rating", "rating_clustered"):
            out[kind] = {key: 0.0 for key in out[kind]}
    return out


# --- the truth of a tally -----------------------------------------------------------------------

def tally_truth(tally: Tally) -> dict:
    """The figures of a (large) tally as point values in the keys of :func:`intervals`."""
    A, k = tally.n_agents, tally.players
    out: dict = {kind: {} for kind, _, _ in KINDS}
    ag, se, pr = tally.agent, tally.position, tally.pair
    for a in range(A):
        if ag.count(a) == 0:
            continue
        out["agent_win"][a] = ag.total("win", a) / ag.count(a)
        out["agent_penalty"][a] = ag.total("penalty", a) / ag.count(a)
        for s in range(k):
            out["summary_position_win"][(a, s)] = se.total("win", a * k + s) / se.count(a * k + s)
        for b in range(A):
            ab, ba = a * A + b, b * A + a
            if a == b or pr.count(ab) == 0:
                continue
            nn = pr.count(ab)
            out["pair_win"][(a, b)] = pr.total("win", ab) / nn
            out["pair_penalty"][(a, b)] = pr.total("penalty", ab) / nn
            out["beat"][(a, b)] = pr.total("beat", ab) / nn
            out["diff"][(a, b)] = (pr.total("penalty", ab) - pr.total("penalty", ba)) / nn
            out["ahead"][(a, b)] = ahead_of(pr.total("beat", ab), pr.total("tie", ab)) / nn
    return out
