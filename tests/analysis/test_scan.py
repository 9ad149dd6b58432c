"""The streaming statistics of :mod:`kc_sim.analysis.scan` against the in-memory computation they
replace, on small runs (2, 3 and 4 players, matches, self-play, paired runs).

The oracle below is the per-round implementation that ``kc_sim.analysis.plots``, ``kc_sim.analysis.report``
and ``kc_sim.analysis.experiments`` used before the scan (every round of a run loaded into numpy
arrays), kept verbatim as the reference: it is for small runs and these tests only.
Every figure of the scan must equal it to 1e-9 while a run has at most ``MAX_BATCHES``
deals per line-up; with more deals the means stay identical and the intervals are the
same intervals clustered by batches of consecutive deals."""

from __future__ import annotations

import math
import tracemalloc
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy.stats import t as student_t

from kc_sim.analysis import scan
from kc_sim.analysis.compare import compare_runs
from kc_sim.analysis.experiments.findings import round_diff
from kc_sim.analysis.scan import scan_run
from kc_sim.analysis.text import rules_label
from kc_sim.errors import UserError
from kc_sim.stats import mean_from_sums, rate_from_sums, sums
from kc_sim.tournament.run import run_tournament
from tests.helpers.intervals import clustered as reference
from tests.helpers.intervals import largest_deal_mean, per_deal

AGENTS = ["greedy", "king-first", "merger", "random"]


# --- the oracle: every round in memory ---------------------------------------------------------

@dataclass
class RunData:
    """The rounds of a run as numpy arrays (one row per round, one column per seat)."""

    path: Path
    manifest: dict
    labels: list[str]            # agent names, index = agent code
    players: int                 # seats per table (K)
    rules: str                   # canonical rule spec
    mode: str                    # "rounds" or "matches"
    seed: int
    lineup: np.ndarray           # (n,)
    group: np.ndarray            # (n,) deal number: the cluster of the intervals
    seating: np.ndarray          # (n,)
    agent: np.ndarray            # (n, K) agent code by seat
    penalty: np.ndarray          # (n, K) penalty by seat, -1 when the seat was not dealt in
    winner: np.ndarray           # (n,) winning seat, -1 when blocked
    first: np.ndarray            # (n,) seat that played first
    blocked: np.ndarray          # (n,) bool
    turns: np.ndarray            # (n,)
    actions: np.ndarray          # (n,)
    match: np.ndarray            # (n,) match id, -1 for single rounds
    matches: dict | None = None  # match rows: group, agent (m, K), total (m, K), win (m, K), rounds
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return len(self.group)

    @property
    def deals(self) -> int:
        """Distinct deals (the same group is the same deal in every line-up)."""
        if "deals" not in self._cache:
            self._cache["deals"] = _n_clusters(self.group)
        return self._cache["deals"]

    @property
    def rules_label(self) -> str:
        return rules_label(self.rules)

    @property
    def position(self) -> np.ndarray:
        """(n, K) position in turn order of each seat: 0 plays first."""
        if "position" not in self._cache:
            seats = np.arange(self.players)[None, :]
            self._cache["position"] = (seats - self.first[:, None]) % self.players
        return self._cache["position"]

    @property
    def winner_position(self) -> np.ndarray:
        """(n,) position in turn order of the winner, -1 when blocked."""
        return np.where(self.winner >= 0, (self.winner - self.first) % self.players, -1)

    def seat_of(self, a: int) -> np.ndarray:
        """(n,) seat of agent ``a`` in each round, -1 when it had no seat (or was not dealt in)."""
        key = ("seat_of", a)
        if key not in self._cache:
            here = (self.agent == a) & (self.penalty >= 0)
            self._cache[key] = np.where(here.any(axis=1), here.argmax(axis=1), -1)
        return self._cache[key]

    def agents_seen(self) -> list[int]:
        """Agent codes that played at least one round, in label order."""
        return [a for a in range(len(self.labels)) if ((self.agent == a) & (self.penalty >= 0)).any()]

    def caption(self) -> str:
        size = f"{self.n:,} rounds ({self.deals:,} deals)"
        if self.matches is not None:
            size = f"{len(self.matches['group']):,} matches, " + size
        agents = ", ".join(self.labels)
        return (f"rules: {self.rules_label} | {self.players} players | {size} | agents: {agents} | "
                f"seed {self.seed} | intervals: 95%, clustered by deal")

def _int(table, name: str, fill: int = -1, dtype=np.int64) -> np.ndarray:
    return table.column(name).fill_null(fill).to_numpy().astype(dtype)


def _codes(table, name: str, index: dict) -> np.ndarray:
    """A dictionary column of agent names as agent codes (-1 for null)."""
    col = table.column(name).combine_chunks()
    if not hasattr(col, "dictionary"):          # a plain string column
        vals = col.to_pylist()
        return np.array([index.get(v, -1) if v is not None else -1 for v in vals], np.int64)
    lookup = np.array([index.get(x, -1) for x in col.dictionary.to_pylist()] + [-1], np.int64)
    idx = col.indices.fill_null(len(lookup) - 1).to_numpy().astype(np.int64)
    return lookup[idx]


def load_run(run_dir) -> RunData:
    """Load a run folder (manifest and round parts; match parts when present).
    Raises :class:`UserError` when the folder is missing or holds no finished rounds."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from kc_sim.runs import RunReader, layout

    if isinstance(run_dir, RunData):
        return run_dir
    reader = RunReader.open(run_dir)                          # the same checks as the scan
    path, manifest, labels, players = reader.path, reader.manifest.to_dict(), reader.labels, reader.players
    config = manifest["config"]
    parts = RunReader(path).parts(layout.ROUNDS)
    if not parts:
        raise UserError(f"{path} holds no rounds yet ({layout.ROUNDS}/ is empty): finish the run first "
                        f"(rerun its command: {manifest.get('command', 'kc-sim tournament ...')})")
    cols = (["lineup", "group", "seating", "match", "first", "winner", "end", "turns", "actions"]
            + [f"agent_{s}" for s in range(players)] + [f"penalty_{s}" for s in range(players)])
    try:
        t = pa.concat_tables([pq.read_table(p, columns=cols) for p in parts])
    except (OSError, ValueError, pa.ArrowException) as e:
        raise UserError(f"cannot read the rounds of {path}: {e}") from None
    index = {name: i for i, name in enumerate(labels)}
    end = t.column("end").combine_chunks()
    end = end.dictionary_decode() if hasattr(end, "dictionary") else end
    data = RunData(
        path=path, manifest=manifest, labels=labels, players=players, rules=config.get("rules", "classic"),
        mode=config.get("mode", "rounds"), seed=int(config.get("seed", 0)),
        lineup=_int(t, "lineup", dtype=np.int16), group=_int(t, "group"), seating=_int(t, "seating", dtype=np.int16),
        agent=np.stack([_codes(t, f"agent_{s}", index).astype(np.int16) for s in range(players)], axis=1),
        penalty=np.stack([_int(t, f"penalty_{s}", dtype=np.int16) for s in range(players)], axis=1),
        winner=_int(t, "winner", dtype=np.int8), first=_int(t, "first", dtype=np.int8),
        blocked=pc.equal(end, "blocked").fill_null(False).to_numpy(zero_copy_only=False).astype(bool),
        turns=_int(t, "turns", 0, np.int32), actions=_int(t, "actions", 0, np.int32), match=_int(t, "match"),
    )
    del t
    mparts = RunReader(path).parts(layout.MATCHES)
    if mparts:
        mcols = ["group", "rounds"] + [f"agent_{s}" for s in range(players)] + \
            [f"total_{s}" for s in range(players)] + ["winners"]
        m = pa.concat_tables([pq.read_table(p, columns=mcols) for p in mparts])
        winners = _int(m, "winners", 0)
        data.matches = {
            "group": _int(m, "group"), "rounds": _int(m, "rounds", 0),
            "agent": np.stack([_codes(m, f"agent_{s}", index) for s in range(players)], axis=1),
            "total": np.stack([_int(m, f"total_{s}", 0) for s in range(players)], axis=1),
            "win": np.stack([((winners >> s) & 1).astype(bool) for s in range(players)], axis=1),
        }
    return data


# --- intervals clustered by deal ---------------------------------------------------

def _select(x, cluster, mask):
    """The outcomes and their deal ids as arrays, restricted to ``mask`` when given."""
    x = np.asarray(x, dtype=np.float64)
    cluster = np.asarray(cluster, dtype=np.int64)
    return (x[mask], cluster[mask]) if mask is not None else (x, cluster)


def cluster_mean(x, cluster, mask=None, paired=False, spread=None) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of ``x`` clustered by deal: the reference interval of
    tests/helpers/intervals.py. NaNs when there is nothing to average."""
    x, cluster = _select(x, cluster, mask)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    return reference(x, cluster, paired=paired, spread=spread)


def pen_spread(data, a: int, b: int) -> float:
    """The larger per-deal mean penalty of agents a and b over the rounds they shared: the
    bound of a penalty difference that is the same in every deal (the summary's rule)."""
    sa, sb = data.seat_of(a), data.seat_of(b)
    i = np.flatnonzero((sa >= 0) & (sb >= 0))
    return max(largest_deal_mean(data.penalty[i, s[i]], data.group[i]) for s in (sa, sb))


def _n_clusters(cluster: np.ndarray) -> int:
    return len(np.unique(cluster))


def cluster_rate(x, cluster, mask=None, paired=False) -> tuple[float, float, float]:
    """``(rate, lo, hi)`` of a 0/1 outcome (or a score in [0, 1]) clustered by deal: the
    reference interval of tests/helpers/intervals.py for rates."""
    x, cluster = _select(x, cluster, mask)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    return reference(x, cluster, rate=True, paired=paired)


def head_to_head(data: RunData) -> list[dict]:
    """One row per ordered pair of agents that met: rounds together, ``score`` (the row
    agent finished with a lower penalty than the other; ties count half; in 2-player
    rounds without a block this is the win rate), ``win`` (the row agent won the round),
    ``diff`` (mean penalty, row agent minus opponent), each with its interval."""
    rows = []
    seen = data.agents_seen()
    idx = np.arange(data.n)
    for a in seen:
        sa = data.seat_of(a)
        for b in seen:
            if a == b:
                continue
            sb = data.seat_of(b)
            both = (sa >= 0) & (sb >= 0)
            if not both.any():
                continue
            i = idx[both]
            pa, pb = data.penalty[i, sa[both]], data.penalty[i, sb[both]]
            score = np.where(pa < pb, 1.0, np.where(pa == pb, 0.5, 0.0))
            won = (data.winner[both] == sa[both]).astype(np.float64)
            g = data.group[both]
            rows.append({
                "agent": data.labels[a], "opponent": data.labels[b], "a": a, "b": b, "rounds": int(both.sum()),
                "score": cluster_rate(score, g, paired=True), "win": cluster_rate(won, g),
                "diff": cluster_mean(pa - pb, g, paired=True, spread=pen_spread(data, a, b)),
            })
    return rows


def agent_rows(data: RunData) -> list[dict]:
    """Per agent: rounds, win rate and mean penalty with intervals, penalty 0 share."""
    rows = []
    for a in data.agents_seen():
        s = data.seat_of(a)
        here = s >= 0
        i = np.flatnonzero(here)
        pen = data.penalty[i, s[here]].astype(np.float64)
        g = data.group[here]
        rows.append({"agent": data.labels[a], "a": a, "rounds": int(here.sum()),
                     "win": cluster_rate((data.winner[here] == s[here]).astype(np.float64), g),
                     "penalty": cluster_mean(pen, g)})
    return rows


def position_rows(data: RunData, agent: int | None = None) -> list[dict]:
    """Win rate by position in turn order (0 plays first), over all agents or one agent."""
    pos = data.position
    wpos = data.winner_position
    out = []
    for p in range(data.players):
        if agent is None:
            seat = (data.first + p) % data.players
            mask = data.penalty[np.arange(data.n), seat] >= 0
        else:
            s = data.seat_of(agent)
            mask = (s >= 0) & (pos[np.arange(data.n), np.maximum(s, 0)] == p)
        out.append({"position": p, "rounds": int(mask.sum()),
                    "win": cluster_rate((wpos == p).astype(np.float64), data.group, mask)})
    return out


def end_rows(data: RunData) -> dict:
    """Round length and end reasons, with intervals."""
    g = data.group
    return {
        "rounds": data.n, "deals": data.deals,
        "turns": cluster_mean(data.turns, g), "actions": cluster_mean(data.actions, g),
        "turns_median": float(np.median(data.turns)) if data.n else math.nan,
        "out": cluster_rate((~data.blocked).astype(np.float64), g),
        "blocked": cluster_rate(data.blocked.astype(np.float64), g),
    }

def match_rows(data: RunData) -> list[dict]:
    """Per agent, when the run played matches: match win rate (a shared win counts for
    every sharer) and mean penalty total, clustered by deal (match seed group)."""
    m = data.matches
    if m is None:
        return []
    out = []
    for a in data.agents_seen():
        here = m["agent"] == a
        has = here.any(axis=1)
        seat = here.argmax(axis=1)
        idx = np.flatnonzero(has)
        win = m["win"][idx, seat[has]].astype(np.float64)
        total = m["total"][idx, seat[has]].astype(np.float64)
        g = m["group"][has]
        out.append({"agent": data.labels[a], "matches": int(has.sum()), "win": cluster_rate(win, g),
                    "total": cluster_mean(total, g)})
    return out

def _deals_won_twice(data, a: int, b: int):
    """2-player runs: share of deals (line-up with a and b, both seatings) that one agent
    won from both seats."""

    sa, sb = data.seat_of(a), data.seat_of(b)
    both = (sa >= 0) & (sb >= 0)
    if data.players != 2 or not both.any():
        return None
    won = (data.winner == sa) & both
    key = data.lineup[both].astype(np.int64) * (int(data.group.max()) + 1) + data.group[both]
    uniq, inv = np.unique(key, return_inverse=True)
    wins = np.bincount(inv, weights=won[both].astype(np.float64))
    lost = np.bincount(inv, weights=((data.winner == sb) & both)[both].astype(np.float64))
    size = np.bincount(inv)
    full = size == 2
    g = uniq[full] % (int(data.group.max()) + 1)
    return (cluster_rate((wins[full] == 2).astype(np.float64), g),
            cluster_rate((lost[full] == 2).astype(np.float64), g), int(full.sum()))


def _pair_figures(d, a: int, b: int) -> dict | None:
    """Head-to-head figures of agents a and b over the rounds where both sat."""

    sa, sb = d.seat_of(a), d.seat_of(b)
    both = (sa >= 0) & (sb >= 0)
    if not both.any():
        return None
    i = np.flatnonzero(both)
    pa, pb = d.penalty[i, sa[both]], d.penalty[i, sb[both]]
    wa = (d.winner[both] == sa[both]).astype(np.float64)
    wb = (d.winner[both] == sb[both]).astype(np.float64)
    g = d.group[both]
    return {
        "rounds": int(both.sum()),
        "win_a": cluster_rate(wa, g), "win_b": cluster_rate(wb, g),
        "win_diff": cluster_mean(wa - wb, g, paired=True, spread=1.0),
        "ahead": cluster_rate(np.where(pa < pb, 1.0, np.where(pa == pb, 0.5, 0.0)), g, paired=True),
        "pen_diff": cluster_mean((pa - pb).astype(np.float64), g, paired=True, spread=pen_spread(d, a, b)),
        "twice": _deals_won_twice(d, a, b),
    }

def _same_deals(d1, d2) -> bool:
    return (d1.n == d2.n and d1.players == d2.players and np.array_equal(d1.group, d2.group)
            and np.array_equal(d1.seating, d2.seating) and np.array_equal(d1.lineup, d2.lineup)
            and d1.seed == d2.seed and np.array_equal(d1.agent, d2.agent))


def _diff(x1, g1, x2, g2, paired: bool):
    """(difference, lo, hi) of two clustered means: paired by round when the runs played
    the same deals, else as independent estimates."""

    if paired:
        return cluster_mean(np.asarray(x1, np.float64) - np.asarray(x2, np.float64), g1, paired=True)
    def mean_var(x, g):
        S, N = per_deal(x, g)
        m = S.sum() / N.sum()
        return m, len(S) / (len(S) - 1) * ((S - m * N) ** 2).sum() / N.sum() ** 2, len(S)

    (m1, v1, n1), (m2, v2, n2) = mean_var(x1, g1), mean_var(x2, g2)
    d = m1 - m2
    if v1 + v2 == 0:                                                       # no variation in either run
        return d, d, d
    df = (v1 + v2) ** 2 / (v1 ** 2 / (n1 - 1) + v2 ** 2 / (n2 - 1))       # Welch-Satterthwaite
    half = student_t.ppf(0.975, df) * math.sqrt(v1 + v2)
    return d, d - half, d + half


def _round_values(d) -> dict:
    """Per-round values behind the rules comparison."""
    k = d.players
    dealt = d.penalty >= 0
    wpos = d.winner_position
    return {
        "turns": d.turns.astype(np.float64),
        "blocked": d.blocked.astype(np.float64),
        "edge": (wpos == 0).astype(np.float64) - (~d.blocked) / k,
        "penalty": np.where(dealt, d.penalty, 0).sum(axis=1) / np.maximum(dealt.sum(axis=1), 1),
    }



# --- comparing -------------------------------------------------------------------------------

def assert_close(got, want, path="", tol=1e-9):
    """Equal structures of numbers (NaN equals NaN), floats to ``tol``."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_close(got[k], want[k], f"{path}.{k}", tol)
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), f"{path}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{path}[{i}]", tol)
    elif isinstance(want, (float, np.floating)) or isinstance(got, (float, np.floating)):
        g, w = float(got), float(want)
        assert (math.isnan(g) and math.isnan(w)) or abs(g - w) <= tol * max(1.0, abs(w)), f"{path}: {g!r} != {w!r}"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


RUNS = {
    "2p": dict(agents=AGENTS, players=2, rounds=3000, seed=3, chunk_size=400),
    "3p": dict(agents=AGENTS, players=3, rounds=2400, seed=5, chunk_size=300),
    "4p": dict(agents=AGENTS, players=4, rounds=2000, seed=6, chunk_size=400),
    "matches": dict(agents=["greedy", "random", "merger"], players=3, matches=60, seed=4, chunk_size=15),
    "matches-2p": dict(agents=["greedy", "random"], players=2, matches=40, seed=8, chunk_size=10),
    "self-play": dict(agents=["greedy", "greedy"], players=2, rounds=1000, seed=9, chunk_size=200),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("scan")
    out = {}
    for name, kw in RUNS.items():
        kw = dict(kw)
        out[name] = base / name
        run_tournament(kw.pop("agents"), jobs=1, out=out[name], quiet=True, **kw)
    return out


def _n_parts(path: Path) -> int:
    return len(list((path / "rounds").glob("part-*.parquet")))


def _oracle_figures(d) -> dict:
    """Every number the figures, the report and the experiments show, from all rounds."""
    seen = d.agents_seen()
    wpos = d.winner_position
    v = _round_values(d)
    out = {
        "n": d.n, "deals": d.deals, "caption": d.caption(), "seen": seen,
        "agents": agent_rows(d), "head_to_head": head_to_head(d), "positions": position_rows(d),
        "positions_by_agent": [position_rows(d, a) for a in seen], "ends": end_rows(d),
        "matches": match_rows(d),
        "match_length": cluster_mean(d.matches["rounds"], d.matches["group"]) if d.matches is not None
        else (math.nan,) * 3,
        "pairs": [_pair_figures(d, a, b) for a in seen for b in seen if a != b],
        "round_means": [cluster_mean(v[k], d.group) for k in ("turns", "blocked", "edge", "penalty")],
        "first": cluster_rate((wpos == 0).astype(np.float64), d.group),
        "first_last": cluster_mean((wpos == 0).astype(np.float64) - (wpos == d.players - 1), d.group),
        "blocked_share": float(d.blocked.mean()),
    }
    values = d.penalty[d.penalty >= 0]
    top = max(int(np.percentile(values, 99.5)), 5)
    shares = []
    for a in seen:
        s = d.seat_of(a)
        pen = d.penalty[np.flatnonzero(s >= 0), s[s >= 0]]
        shares.append(np.bincount(np.minimum(pen, top), minlength=top + 1) / max(len(pen), 1))
    out["penalty_top"], out["penalty_shares"] = top, [x.tolist() for x in shares]
    edges = np.arange(0, int(d.turns.max()) + 2) - 0.5
    out["turns"] = [np.histogram(d.turns[~d.blocked], bins=edges)[0].tolist(),
                    np.histogram(d.turns[d.blocked], bins=edges)[0].tolist()]
    lineups = d.manifest["schedule"]["lineups"]
    groups = [("all rounds", np.ones(d.n, bool))]
    if len(lineups) > 1:
        groups += [(" vs ".join(d.labels[i] for i in lu), d.lineup == li) for li, lu in enumerate(lineups)]
    out["end_reasons"] = [
        [name, cluster_rate((~d.blocked).astype(np.float64), d.group, m),
         cluster_rate(d.blocked.astype(np.float64), d.group, m), int((~d.blocked & m).sum()), int((d.blocked & m).sum())]
        for name, m in groups]
    return out


def _streamed_figures(s) -> dict:
    seen = s.agents_seen()
    return {
        "n": s.n, "deals": s.deals, "caption": s.caption(), "seen": seen,
        "agents": scan.agent_rows(s), "head_to_head": scan.head_to_head(s), "positions": scan.position_rows(s),
        "positions_by_agent": [s.position_rows(a) for a in seen], "ends": scan.end_rows(s),
        "matches": s.match_rows(), "match_length": s.match_length(),
        "pairs": [s.pair(a, b) for a in seen for b in seen if a != b],
        "round_means": [s.round_mean(k) for k in ("turns", "blocked", "edge", "penalty")],
        "first": s.round_rate("first"), "first_last": s.round_mean("first_last"),
        "blocked_share": s.blocked_share,
        "penalty_top": s.penalty_top(), "penalty_shares": [s.penalty_shares(a, s.penalty_top()).tolist() for a in seen],
        "turns": [c.tolist() for c in s.turn_counts()],
        "end_reasons": [[r["name"], r["out"], r["blocked"], r["n_out"], r["n_blocked"]] for r in s.end_reasons()],
    }


# --- the tests ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(RUNS))
def test_streamed_figures_equal_the_in_memory_ones(runs, name):
    path = runs[name]
    assert _n_parts(path) >= 2                           # several parts: the sums cross parts
    s = scan_run(path)
    assert s.width == 1 and s.parts_read == _n_parts(path)
    assert_close(_streamed_figures(s), _oracle_figures(load_run(path)))


def test_cluster_helpers_are_the_old_formulas():
    from kc_sim.stats import cluster_mean as new_mean
    from kc_sim.stats import cluster_rate as new_rate
    rng = np.random.default_rng(1)
    cases = [(rng.random(500) < 0.3, rng.integers(0, 90, 500)), (rng.random(200), np.repeat(np.arange(50), 4)),
             (np.zeros(40), np.repeat(np.arange(10), 4)), (np.ones(8), np.zeros(8, int)),
             (np.tile([1.0, 0.0], 30), np.repeat(np.arange(30), 2)), (rng.random(50), rng.integers(0, 10 ** 9, 50)),
             (np.array([]), np.array([], int))]
    for x, g in cases:
        x = np.asarray(x, np.float64)
        assert_close(new_mean(x, g), cluster_mean(x, g))
        assert_close(new_rate(x, g), cluster_rate(x, g))
        mask = np.arange(len(x)) % 3 != 0
        assert_close(new_rate(x, g, mask), cluster_rate(x, g, mask))
    # the same figures from per-cluster sums, with empty clusters in between
    x, g = rng.random(300), rng.integers(0, 40, 300) * 2
    S, N = np.bincount(g, weights=x), np.bincount(g).astype(float)
    assert_close(mean_from_sums(S, N), cluster_mean(x, g))
    assert_close(rate_from_sums(S, N), cluster_rate(x, g))


def _pair_oracle(d, e):
    """Paired figures of two runs, as the rules comparison computed them from all rounds."""
    paired = _same_deals(d, e)
    v, w = _round_values(d), _round_values(e)
    out = {"paired": paired,
           "diffs": [_diff(v[k], d.group, w[k], e.group, paired) for k in ("turns", "blocked", "edge", "penalty")]}
    if paired:
        other = ((d.winner != e.winner) | (d.blocked != e.blocked)).astype(np.float64)
        out["changed"] = cluster_rate(other, d.group)
        out["same"] = [bool(other.sum() == 0), bool(np.array_equal(d.turns, e.turns) and np.array_equal(d.actions, e.actions)),
                       bool(np.array_equal(d.penalty, e.penalty))]
    return out


def _pair_streamed(s, t):
    p = compare_runs(s, t)
    out = {"paired": p.same_deals,
           "diffs": [round_diff(s, t, k, p.same_deals) for k in ("turns", "blocked", "edge", "penalty")]}
    if p.same_deals:
        out["changed"] = p.changed
        out["same"] = [p.same_result, p.same_turns, p.same_penalty]
    return out


def test_runs_on_the_same_deals_are_paired_as_before(tmp_path, monkeypatch):
    kw = dict(players=3, rounds=1800, seed=11, jobs=1, quiet=True)
    base = ["greedy", "merger", "random"]
    run_tournament(base, out=tmp_path / "a", chunk_size=300, **kw)
    run_tournament(base, out=tmp_path / "b", chunk_size=300, rules="classic,draw=start", **kw)
    run_tournament(base, out=tmp_path / "c", chunk_size=210, **kw)             # same rounds, other parts
    run_tournament(base, out=tmp_path / "d", chunk_size=300, **{**kw, "seed": 12})
    run_tournament(base, out=tmp_path / "e", chunk_size=300, rules="classic,scoring=face", **kw)
    stats = {x: scan_run(tmp_path / x) for x in "abcde"}
    data = {x: load_run(tmp_path / x) for x in "abcde"}
    for x, y in [("b", "a"), ("c", "a"), ("d", "a"), ("e", "a")]:
        assert_close(_pair_streamed(stats[x], stats[y]), _pair_oracle(data[x], data[y]), f"{x} vs {y}")
    assert compare_runs(stats["b"], stats["a"]).same_deals and not compare_runs(stats["d"], stats["a"]).same_deals
    assert compare_runs(stats["c"], stats["a"]).same_penalty                 # the same run, cut differently
    e = compare_runs(stats["e"], stats["a"])
    assert e.same_result and e.same_turns and not e.same_penalty             # face scoring: same play
    # in batches of deals (both runs share the batches): the same paired differences, and
    # intervals that are the paired intervals clustered by batch
    monkeypatch.setattr(sums, "MAX_BATCHES", 8)
    s8 = {x: scan_run(tmp_path / x) for x in "abc"}
    assert s8["a"].width == s8["b"].width > 1
    for x in "bc":
        got, want = _pair_streamed(s8[x], s8["a"]), _pair_streamed(stats[x], stats["a"])
        assert got["paired"] and got["same"] == want["same"]
        assert_close([v[0] for v in got["diffs"]] + [got["changed"][0]],
                     [v[0] for v in want["diffs"]] + [want["changed"][0]])
    d, a, w = data["b"], data["a"], s8["a"].width
    v, u = _round_values(d), _round_values(a)
    for i, k in enumerate(("turns", "blocked", "edge", "penalty")):
        assert_close(_pair_streamed(s8["b"], s8["a"])["diffs"][i], cluster_mean(v[k] - u[k], d.group // w,
                                                                                 paired=True))


def test_batches_of_deals(runs, monkeypatch):
    """More deals than MAX_BATCHES: the sums are pooled into batches of consecutive deals.
    Means and counts stay identical; intervals are the same clustered intervals, with the
    batches as clusters (and the number of deals as the size of a rate without variation)."""
    exact = {name: scan_run(runs[name]) for name in ("2p", "3p", "matches-2p", "self-play")}
    monkeypatch.setattr(sums, "MAX_BATCHES", 8)
    assert sums.batch_width(8) == 1 and sums.batch_width(9) == 2 and sums.batch_width(250) == 32
    widths = []
    for name, s1 in exact.items():
        s8 = scan_run(runs[name])
        d = load_run(runs[name])
        assert s8.width == sums.batch_width(s1.n_deals) > 1 and s8.agent.N.shape[1] <= 8
        widths.append(s8.width)
        f1, f8 = _streamed_figures(s1), _streamed_figures(s8)
        assert f8["n"] == f1["n"] and f8["deals"] == f1["deals"] and f8["caption"] == f1["caption"]
        # every mean and count identical, every interval around it valid and of similar width
        pairs = []

        def walk(a, b, where):
            if isinstance(a, dict):
                for k in a:
                    walk(a[k], b[k], f"{where}.{k}")
            elif isinstance(a, (list, tuple)) and len(a) == 3 and all(isinstance(v, float) for v in a):
                pairs.append((a, b, where))
            elif isinstance(a, (list, tuple)):
                for i, (x, y) in enumerate(zip(a, b)):
                    walk(x, y, f"{where}[{i}]")
            else:
                assert_close(b, a, where)
        walk(f1, f8, name)
        widths_ratio = []
        for (m1, lo1, hi1), (m8, lo8, hi8), where in pairs:
            assert_close(m8, m1, where)
            if math.isnan(lo1) or hi1 - lo1 < 1e-12:
                assert_close((lo8, hi8), (lo1, hi1), where)         # no variation: as without batches
                continue
            assert lo8 <= m8 <= hi8, where
            widths_ratio.append((hi8 - lo8) / (hi1 - lo1))
        assert widths_ratio and 0.3 < np.median(widths_ratio) < 3, (name, np.median(widths_ratio))
        # the batched intervals are the clustered intervals with cluster = group // width
        w = s8.width
        for a in d.agents_seen():
            sa = d.seat_of(a)
            here = sa >= 0
            won = (d.winner[here] == sa[here]).astype(np.float64)
            assert_close(s8.agent_rows()[d.agents_seen().index(a)]["win"], cluster_rate(won, d.group[here] // w))
            pen = d.penalty[np.flatnonzero(here), sa[here]].astype(np.float64)
            assert_close(s8.agent.mean("penalty", a), cluster_mean(pen, d.group[here] // w))
            assert s8.tally.deals == len(np.unique(d.group[here]))      # the tally's deals, not batches
        assert_close(s8.round_mean("turns"), cluster_mean(d.turns, d.group // w))
    assert min(widths) > 1
    # self-play of a deterministic agent: every deal split, a rate of exactly 0 sized by the deals
    s1, s8 = exact["self-play"], scan_run(runs["self-play"])
    t1, t8 = s1.pair(0, 1)["twice"], s8.pair(0, 1)["twice"]
    assert t1[0][0] == 0 and t1[2] == s1.deals
    assert_close(t8, t1)


def test_the_scan_holds_one_part_at_a_time(runs, monkeypatch):
    path = runs["4p"]
    reads, alive = [], []
    real = pq.read_table

    def spy(p, columns):
        # every earlier part has been released before the next one is read
        assert all(r() is None for r in alive), "two parts in memory at once"
        t = real(p, columns=columns)
        reads.append((Path(p), t.num_rows, tuple(columns)))
        alive.append(weakref.ref(t))
        return t

    monkeypatch.setattr(pq, "read_table", spy)       # what the reader reads every part with
    s = scan_run(path)
    parts = sorted((path / "rounds").glob("part-*.parquet"))
    assert [r[0] for r in reads] == parts                          # each part once, one file per read
    assert max(r[1] for r in reads) <= max(int(np.ceil(400 / 4)) * 4, 400)
    assert sum(r[1] for r in reads) == s.n
    assert all("seed" not in r[2] and "stock_left" not in r[2] for r in reads)   # only the needed columns


def test_scan_memory_does_not_grow_with_rounds(tmp_path, monkeypatch):
    """Python-side peak of a scan (numpy buffers, traced by tracemalloc) for a run and a run
    four times its size: bounded by one part plus the batch arrays, not by the rounds."""
    monkeypatch.setattr(sums, "MAX_BATCHES", 64)
    peaks = []
    for n in (4000, 16000):
        out = tmp_path / f"r{n}"
        run_tournament(["greedy", "random"], players=2, rounds=n, seed=1, jobs=1, out=out, quiet=True,
                       chunk_size=1000)
        scan_run(out)                                                # warm up imports and caches
        tracemalloc.start()
        s = scan_run(out)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert s.n == n and s.width > 1
    assert peaks[1] < 1.3 * peaks[0], peaks


def test_scan_errors(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        scan_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="not a run folder"):
        scan_run(tmp_path / "empty")


def test_frames_for_the_notebook(runs):
    s = scan_run(runs["2p"])
    f = s.frames()
    assert list(f["agents"]["agent"]) == [s.labels[a] for a in s.agents_seen()]
    assert {"win", "win_lo", "win_hi", "penalty", "penalty_lo", "penalty_hi"} <= set(f["agents"].columns)
    assert len(f["head_to_head"]) == len(s.head_to_head())
    assert f["turns"]["rounds"].sum() == s.n
    shares = f["penalties"].groupby("agent")["share"].sum()
    assert np.allclose(shares.to_numpy(), 1.0)
