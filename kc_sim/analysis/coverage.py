"""The coverage study: do kc-sim's 95% intervals cover the truth 95% of the time?

Many tournaments are simulated whose truth is known, each is summarised by kc-sim's own code
(the workers' :class:`~kc_sim.stats.Tally` and its summary, the scan's
:class:`~kc_sim.stats.run_stats.RunStats`, the leaderboard), and for every kind of interval
kc-sim prints the share of intervals that contain the truth is counted. With ``runs``
simulated tournaments per cell the binomial standard error around 95% is
``sqrt(0.95 * 0.05 / runs)`` (0.49pp at 2,000 runs), so a kind is judged against the band
93.5-96.5% only with 2,000 runs or more.

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

**The truth** of every figure is its expectation under the model, computed once by Monte
Carlo over many more deals (``truth_deals``; its error is a few percent of the narrowest
interval studied), and exactly where symmetry gives it (self-play). Where a run's interval
depends on a few counts (identical agents, rare events on 20-50 deals), the runs' bounds sit
on a few values, and a truth that crosses one moves the whole cell: the published study
takes the truth on 1,000,000 deals (results/README.md section 10). Ratings are judged
against the Bradley-Terry fit of the truth's comparisons.

**Scenarios**: ``self-play`` (all agents equal, stochastic), ``difference`` (agents of known
unequal strength), ``identical`` (equal and deterministic: every pairwise figure is the same
in every deal, its interval has zero width at the exact truth; such intervals are counted
apart as ``exact``, not as covering). **Real agents** (:func:`real_cell`): tournaments played by
the workers' own code, against one large run on another seed; such a cell is also kept agent
by agent and pair by pair (:func:`key_tables`), with the share of deals in which each pair's
penalties differ: two agents that play alike in all but a few deals (greedy and king-first)
hold the truth in every run, and pooled with the other pairs they lift a paired kind by
0.6-0.8pp.

``experiments/interval_coverage.py`` runs the full study and writes its table;
``tests/analysis/test_coverage.py`` runs a small one.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from kc_sim.stats import Tally
from kc_sim.stats.bradley_terry import Comparisons, fit_bt, sandwich_cov, totals
from kc_sim.stats.intervals import mean_from_sums, no_variation, rate_from_sums, t_of
from kc_sim.stats.ratings import rate_comparisons
from kc_sim.stats.run_stats import RunStats
from kc_sim.stats.sums import MAX_BATCHES

#: the interval kinds, in the order of the table: (key, what it is, where it is printed)
KINDS = (
    ("agent_win", "win rate of an agent", "summary"),
    ("agent_penalty", "mean penalty of an agent", "summary"),
    ("seat_win", "win rate of an agent in a seat", "summary.parquet"),
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
    t.add_rounds(r["group"], r["agent"], r["penalty"], r["winner"], count_deals=False)
    t.deals = len(np.unique(r["group"]))
    if m is not None:
        t.add_matches(m["group"], m["agent"], m["total"], m["winners"], count_deals=False)
        t.match_deals = len(np.unique(m["group"]))
    return t


def scan_of(model: Model, r: dict) -> RunStats:
    """The scan's statistics of the rounds, line-up by line-up as from a run folder."""
    n_deals = int(r["group"].max()) + 1
    st = RunStats(path=None, manifest={"schedule": {"lineups": [list(x) for x in model.lineups]}},
                  labels=labels(model), players=model.players, rules="classic", mode="rounds", seed=0,
                  width=1, n_deals=n_deals)
    for li in range(len(model.lineups)):
        here = r["lineup"] == li
        st.add_rounds({c: v[here] for c, v in r.items()}, li)
    st.finish()
    return st


def comparisons_of(model: Model, r: dict) -> Comparisons:
    """The leaderboard's comparisons of the rounds, summed per (deal, pair)."""
    A, k = model.n_agents, model.players
    units, pairs, scores = [], [], []
    for s, t in itertools.combinations(range(k), 2):
        a, b = r["agent"][:, s], r["agent"][:, t]
        ps, pt = r["penalty"][:, s], r["penalty"][:, t]
        sc = np.where(ps < pt, 1.0, np.where(ps == pt, 0.5, 0.0))
        swap = a > b
        units.append(r["group"])
        pairs.append(np.where(swap, b * A + a, a * A + b))
        scores.append(np.where(swap, 1 - sc, sc))
    unit, pair, score = (np.concatenate(x) for x in (units, pairs, scores))
    key = unit * A * A + pair
    uk, inv = np.unique(key, return_inverse=True)
    S = np.bincount(inv, weights=score)
    N = np.bincount(inv).astype(np.float64)
    u, p = np.divmod(uk, A * A)
    a, b = np.divmod(p, A)
    du, dense = np.unique(u, return_inverse=True)
    rounds = np.bincount(r["agent"].ravel(), minlength=A) // 1
    return Comparisons(labels(model), dense, a, b, S, N, rounds, len(du), len(r["group"]))


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
            out["seat_win"][(a, s)] = t.rate("seat", "win", a * k + s)
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
    the Bradley-Terry strengths of its comparisons), in the keys of :func:`intervals`."""
    rng = np.random.default_rng(seed)
    A, k = model.n_agents, model.players
    big = Tally(A, k)
    W, N = np.zeros((A, A)), np.zeros((A, A))
    pos = np.zeros((2, k))
    pos_agent = np.zeros((2, A, k))
    blocked = turns = n = 0.0
    for start in range(0, deals, chunk):
        r = model.rounds(rng, min(chunk, deals - start))
        m = model.matches(rng, min(chunk, deals - start))
        r["group"] = r["group"] * 0               # one cluster: only the sums matter here
        m["group"] = m["group"] * 0
        big.add_rounds(r["group"], r["agent"], r["penalty"], r["winner"])
        big.add_matches(m["group"], m["agent"], m["total"], m["winners"])
        for s in range(k):
            p = (s - r["first"]) % k
            won = r["winner"] == s
            np.add.at(pos[0], p, won)
            np.add.at(pos[1], p, 1)
            np.add.at(pos_agent[0], (r["agent"][:, s], p), won)
            np.add.at(pos_agent[1], (r["agent"][:, s], p), 1)
        blocked += r["blocked"].sum()
        turns += r["turns"].sum()
        n += len(r["group"])
        for s, t in itertools.permutations(range(k), 2):
            ps, pt = r["penalty"][:, s], r["penalty"][:, t]
            np.add.at(W, (r["agent"][:, s], r["agent"][:, t]), np.where(ps < pt, 1.0, np.where(ps == pt, 0.5, 0.0)))
            np.add.at(N, (r["agent"][:, s], r["agent"][:, t]), 1.0)
    out = tally_truth(big)
    ma = big.match
    for a in range(A):
        out["match_win"][a] = ma.total("win", a) / ma.count(a)
        out["match_total"][a] = ma.total("total", a) / ma.count(a)
        for p in range(k):
            out["position_agent_win"][(a, p)] = pos_agent[0, a, p] / pos_agent[1, a, p]
    for key, v in out["ahead"].items():
        out["share"][key] = out["share_clustered"][key] = v
    for p in range(k):
        out["position_win"][p] = pos[0, p] / pos[1, p]
    out["blocked"][0], out["turns"][0] = blocked / n, turns / n
    theta, _ = fit_bt(W, N, prior=0.0)
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


# --- the study ---------------------------------------------------------------------------------

@dataclass
class Cell:
    """One cell of the study: a model, a number of deals, and the counts per kind."""

    scenario: str
    players: int
    deals: int
    runs: int = 0
    covered: dict = field(default_factory=dict)     # kind -> intervals containing the truth
    total: dict = field(default_factory=dict)       # kind -> intervals (zero-width exact ones left out)
    exact: dict = field(default_factory=dict)       # kind -> zero-width intervals at the exact truth
    width: dict = field(default_factory=dict)       # kind -> sum of widths
    by_key: dict = field(default_factory=dict)      # kind -> {str(key): [intervals, containing the truth]}
    differ: dict = field(default_factory=dict)      # str((a, b)) -> share of deals the pair's penalties differ

    def add(self, got: dict, true: dict) -> None:
        for kind, per_key in got.items():
            for key, ci in per_key.items():
                v, lo, hi = ci
                tv = true[kind][key]
                if math.isnan(lo):
                    continue
                if no_variation(ci) and abs(v - tv) < 1e-12:
                    self.exact[kind] = self.exact.get(kind, 0) + 1
                    continue
                hit = int(lo <= tv <= hi)
                self.total[kind] = self.total.get(kind, 0) + 1
                self.covered[kind] = self.covered.get(kind, 0) + hit
                self.width[kind] = self.width.get(kind, 0.0) + (hi - lo)
                counts = self.by_key.setdefault(kind, {}).setdefault(str(key), [0, 0])
                counts[0] += 1
                counts[1] += hit

    def coverage(self, kind: str) -> float:
        return self.covered.get(kind, 0) / self.total[kind] if self.total.get(kind) else math.nan


def run_cell(scenario: str, players: int, deals: int, runs: int, *, true: dict | None = None, bootstrap: int = 0,
             matches: bool = True, seed: int = 0, truth_deals: int = 200_000) -> Cell:
    """``runs`` simulated tournaments of ``deals`` deals, each summarised by kc-sim and checked
    against the truth."""
    model = Model.scenario(scenario, players)
    true = true if true is not None else truth(model, truth_deals)
    cell = Cell(scenario, players, deals)
    rng = np.random.default_rng([seed, players, deals, SCENARIOS.index(scenario)])
    for i in range(runs):
        r = model.rounds(rng, deals)
        m = model.matches(rng, deals) if matches else None
        cell.add(intervals(model, r, m, bootstrap=bootstrap, seed=i), true)
        cell.runs += 1
    return cell


def band(runs: int, level: float = 0.95, sigmas: float = 3.0) -> tuple[float, float]:
    """The coverage a correct 95% interval shows in ``runs`` runs, within ``sigmas`` binomial
    standard errors (one interval per run: pooling keys of one run only narrows it)."""
    se = math.sqrt(level * (1 - level) / runs)
    return level - sigmas * se, level + sigmas * se


def table(cells: list[Cell]) -> str:
    """The coverage table (markdown): one row per kind, one column per cell."""
    head = "| interval kind | printed by | " + " | ".join(
        f"{c.players}p {c.scenario} {c.deals} deals" for c in cells) + " |"
    lines = [head, "|---|---|" + "---|" * len(cells)]
    for kind, what, where in KINDS:
        cells_txt = []
        for c in cells:
            cov = c.coverage(kind)
            if math.isnan(cov):
                cells_txt.append("exact" if c.exact.get(kind) else "-")
            else:
                cells_txt.append(f"{100 * cov:.1f}%" + (" (+exact)" if c.exact.get(kind) else ""))
        if any(x != "-" for x in cells_txt):
            lines.append(f"| {what} | {where} | " + " | ".join(cells_txt) + " |")
    lines.append("| runs per cell | | " + " | ".join(f"{c.runs:,}" for c in cells) + " |")
    return "\n".join(lines)


# --- real agents -----------------------------------------------------------------------------

def real_tally(agents, players: int, deals: int, seed: int, rules: str = "classic", start: int = 0,
               width_deals: int | None = None) -> tuple[Tally, list[str]]:
    """The tally of a real tournament of ``agents`` on deals ``start .. start + deals`` of run
    seed ``seed``, made by the workers' own code (:func:`kc_sim.tournament.worker.run_chunk`,
    one chunk per line-up), without a run folder. Returns (tally, labels)."""
    from kc_sim.tournament.plan import make_plan
    from kc_sim.tournament.worker import ChunkTask, run_chunk

    plan = make_plan(list(agents), players=players, rounds=1, rules=rules, seed=seed, out="unused")
    sched = plan.schedule
    tally = Tally.for_deals(len(plan.labels), players, width_deals or (start + deals))
    for li, lineup in enumerate(sched.lineups):
        task = ChunkTask(li, li, tuple(plan.load_names[i] for i in lineup), start, start + deals,
                         width_deals or (start + deals), seed, plan.rules.spec(), "rounds", None, tuple(lineup),
                         len(plan.labels), sched.seatings)
        tally.merge(Tally.from_json(run_chunk(task)["tally"]))
    return tally, plan.labels


def tally_truth(tally: Tally) -> dict:
    """The figures of a (large) tally as point values in the keys of :func:`intervals`."""
    A, k = tally.n_agents, tally.players
    out: dict = {kind: {} for kind, _, _ in KINDS}
    ag, se, pr = tally.agent, tally.seat, tally.pair
    for a in range(A):
        if ag.count(a) == 0:
            continue
        out["agent_win"][a] = ag.total("win", a) / ag.count(a)
        out["agent_penalty"][a] = ag.total("penalty", a) / ag.count(a)
        for s in range(k):
            out["seat_win"][(a, s)] = se.total("win", a * k + s) / se.count(a * k + s)
        for b in range(A):
            ab, ba = a * A + b, b * A + a
            if a == b or pr.count(ab) == 0:
                continue
            nn = pr.count(ab)
            out["pair_win"][(a, b)] = pr.total("win", ab) / nn
            out["pair_penalty"][(a, b)] = pr.total("penalty", ab) / nn
            out["beat"][(a, b)] = pr.total("beat", ab) / nn
            out["diff"][(a, b)] = (pr.total("penalty", ab) - pr.total("penalty", ba)) / nn
            out["ahead"][(a, b)] = (pr.total("beat", ab) + 0.5 * pr.total("tie", ab)) / nn
    return out


def tally_intervals(tally: Tally, labels) -> dict:
    """The intervals of the summary of a tally, in the keys of :func:`intervals`."""
    out: dict = {kind: {} for kind in ("agent_win", "agent_penalty", "seat_win", "pair_win", "pair_penalty", "beat",
                                       "diff", "ahead")}
    names = list(labels)
    for row in tally.agent_table(names).itertuples(index=False):
        a = names.index(row.agent)
        out["agent_win"][a] = (row.win_rate, row.win_lo, row.win_hi)
        out["agent_penalty"][a] = (row.mean_penalty, row.penalty_lo, row.penalty_hi)
        for s in range(tally.players):
            out["seat_win"][(a, s)] = (getattr(row, f"win_rate_seat_{s}"), getattr(row, f"win_lo_seat_{s}"),
                                       getattr(row, f"win_hi_seat_{s}"))
    for row in tally.head_to_head(names).itertuples(index=False):
        key = (names.index(row.agent), names.index(row.opponent))
        out["pair_win"][key] = (row.win_rate, row.win_lo, row.win_hi)
        out["pair_penalty"][key] = (row.mean_penalty, row.penalty_lo, row.penalty_hi)
        out["beat"][key] = (row.beat_rate, row.beat_lo, row.beat_hi)
        out["diff"][key] = (row.penalty_diff, row.diff_lo, row.diff_hi)
        out["ahead"][key] = (row.ahead, row.ahead_lo, row.ahead_hi)
    return out


def real_cell(agents, players: int, deals: int, runs: int, *, truth_deals: int = 100_000, seed: int = 1,
              truth_seed: int = 999_999, chunk: int = 2_000) -> Cell:
    """The summary's intervals of ``runs`` real tournaments of ``deals`` deals each (run seeds
    ``seed .. seed + runs - 1``) against the figures of one large real tournament of
    ``truth_deals`` deals on another seed (its own error: a few percent of the intervals)."""
    big = None
    for start in range(0, truth_deals, chunk):
        t, labels = real_tally(agents, players, min(chunk, truth_deals - start), truth_seed, start=start,
                               width_deals=truth_deals)
        big = t if big is None else big.merge(t)
    true = tally_truth(big)
    cell = Cell("real: " + ",".join(labels), players, deals)
    cell.differ = differ_shares(agents, players, min(truth_deals, MAX_BATCHES), truth_seed)
    for i in range(runs):
        t, labels = real_tally(agents, players, deals, seed + i)
        cell.add(tally_intervals(t, labels), true)
        cell.runs += 1
    return cell


def differ_shares(agents, players: int, deals: int, seed: int) -> dict:
    """For each pair of a real tournament of ``deals`` deals (at most :data:`MAX_BATCHES`: one
    deal per batch), the share of deals in which their penalties differ (a per-deal paired
    difference other than 0). A pair that differs in few deals has few informative deals in a
    short run, and its paired intervals are conservative there (Student's t on a few non-zero
    values, or the bound of deals not yet seen to differ)."""
    t, _ = real_tally(agents, players, deals, seed)
    pr, A = t.pair, t.n_agents
    out = {}
    for a, b in itertools.permutations(range(A), 2):
        ab, ba = a * A + b, b * A + a
        n = pr.N[ab]
        d = (pr.S["penalty"][ab] - pr.S["penalty"][ba])[n > 0]
        if len(d):
            out[str((a, b))] = float((np.abs(d) > 1e-9).mean())
    return out


#: a pair whose penalties differ in fewer deals than this plays alike: a run of 50-200 deals sees
#: about one such deal or none, and its paired intervals hold the truth every time
ALIKE = 0.01


def key_tables(cell: Cell) -> str:
    """The coverage of a real-agent cell key by key (markdown): per agent (its win rate, mean
    penalty and win rate in each seat) and per ordered pair (with the share of deals in which
    the pair's penalties differ). The pooled figure of a kind can hide a key the game makes
    conservative (two agents that play alike in most deals); this shows which."""
    labels = cell.scenario.split(": ", 1)[1].split(",")
    k = cell.players

    def pct(kind: str, key) -> str:
        n, c = cell.by_key.get(kind, {}).get(str(key), (0, 0))
        return f"{100 * c / n:.1f}%" if n else "exact" if cell.exact.get(kind) else "-"

    lines = ["| agent | win rate | mean penalty | " + " | ".join(f"seat {s + 1}" for s in range(k)) + " |",
             "|---|---|---|" + "---|" * k]
    for a, name in enumerate(labels):
        lines.append(f"| {name} | {pct('agent_win', a)} | {pct('agent_penalty', a)} | "
                     + " | ".join(pct("seat_win", (a, s)) for s in range(k)) + " |")
    pair_kinds = ("pair_win", "pair_penalty", "beat", "diff", "ahead")
    lines += ["", "| agent, with | penalties differ in | win rate | mean penalty | lower penalty | "
              "penalty difference | finishes ahead |", "|---|---|---|---|---|---|---|"]
    for a, b in itertools.permutations(range(len(labels)), 2):
        if str((a, b)) not in cell.by_key.get("pair_win", {}):
            continue
        share = cell.differ.get(str((a, b)))
        lines.append(f"| {labels[a]}, {labels[b]} | {'-' if share is None else f'{100 * share:.1f}% of deals'} | "
                     + " | ".join(pct(kind, (a, b)) for kind in pair_kinds) + " |")
    alike = {key for key, share in cell.differ.items() if share < ALIKE}
    if alike:
        what, pooled = {kind: w for kind, w, _ in KINDS}, []
        for kind in pair_kinds:
            n, c = (sum(x[i] for key, x in cell.by_key.get(kind, {}).items() if key not in alike) for i in (0, 1))
            pooled.append(f"{what[kind]} {100 * c / n:.1f}%" if n else f"{what[kind]} -")
        lines.append(f"\nWithout the pairs whose penalties differ in under {100 * ALIKE:g}% of deals: "
                     + "; ".join(pooled) + ".")
    lines.append(f"\n{cell.runs:,} runs of {cell.deals} deals.")
    return "\n".join(lines)


# --- power ----------------------------------------------------------------------------------------

def power_check(run_dir, diff: float, sims: int = 4000, seed: int = 0) -> dict:
    """Does a run of the size ``kc-sim power`` prints reach its power? The per-deal paired
    scores of each pair of the run folder (their real distribution), shifted so that the
    pair's true finishes-ahead rate is ``1/2 + diff``, are resampled into ``sims`` runs of the
    deals :func:`kc_sim.analysis.power.power_from_run` says are needed; each run's interval
    (the summary's: clustered by deal, paired) is checked for excluding 1/2. Returns per pair
    the deals, the ``--rounds`` and the share of runs that found the difference."""
    import pyarrow.parquet as pq

    from kc_sim.analysis.power import power_from_run
    from kc_sim.stats import pair_deal_scores
    from kc_sim.tournament.results import iter_codes, parts, read_manifest

    man = read_manifest(run_dir)
    labels = man["config"]["labels"]
    rows = power_from_run(run_dir, diff)
    pairs = [(labels.index(r.a), labels.index(r.b)) for r in rows]
    per = {p: ([], []) for p in range(len(pairs))}
    for path, (codes, pen, _) in zip(parts(run_dir), iter_codes(run_dir, labels)):
        group = pq.read_table(path, columns=["group"]).column("group").to_numpy()
        deals, score, n = pair_deal_scores(group, codes, pen, pairs)
        for p in range(len(pairs)):
            met = n[:, p] > 0
            per[p][0].append(deals[met])
            per[p][1].append(np.c_[score[met, p] * n[met, p], n[met, p]])
    rng = np.random.default_rng(seed)
    out = []
    for p, r in enumerate(rows):
        deal_ids = np.concatenate(per[p][0])
        sn = np.concatenate(per[p][1])
        u, inv = np.unique(deal_ids, return_inverse=True)       # a deal met in several parts (line-ups): one
        S = np.bincount(inv, weights=sn[:, 0])
        N = np.bincount(inv, weights=sn[:, 1])
        y = S / N
        shifted = y - y.mean() + 0.5 + diff                    # the pair's true rate: 1/2 + diff
        found = 0
        for _ in range(sims):
            pick = rng.integers(0, len(u), r.deals)
            lo, hi = _paired_interval(shifted[pick] * N[pick], N[pick])
            found += lo > 0.5 or hi < 0.5
        out.append({"pair": f"{r.a} vs {r.b}", "sd": r.sd, "deals": r.deals, "rounds": r.rounds,
                    "power": found / sims, "sims": sims})
    return {"diff": diff, "run": str(run_dir), "pairs": out}


def _paired_interval(S, N):
    from kc_sim.stats import rate_from_sums
    _, lo, hi = rate_from_sums(S, N, paired=True)
    return lo, hi
