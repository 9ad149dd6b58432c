"""Streaming statistics of a run folder: everything ``kc-sim plot``, ``kc-sim report``, the
experiment findings and the strategy notebook show, from one pass over the parquet parts.

:func:`scan_run` reads the parts of ``RUN_DIR/rounds/`` (and ``RUN_DIR/matches/``) one at a
time, only the columns it needs, and adds each part into a :class:`RunStats`: per-batch
sums and counts of every statistic, exact counts, and histograms (penalty per agent,
turns per end reason). Nothing per round is kept, so the memory of a scan does not grow
with the number of rounds: it holds one part plus arrays of at most :data:`MAX_BATCHES`
entries per statistic.

**Intervals clustered by deal, from sums.** Every interval is 95% and clustered by deal
(the rotation group column ``group``; the same group number is the same deal in every
line-up of a run). A cluster-robust interval needs only, per cluster ``c``, the sum
``S_c`` of the outcome and the number ``n_c`` of rounds: the mean is
``sum(S) / sum(n)`` (ratio estimator) and its standard error comes from the residuals
``S_c - mean * n_c`` (:func:`mean_from_sums`); a rate is a Wilson interval on the
effective sample size ``p (1 - p) / se**2`` (:func:`rate_from_sums`).
:func:`kc_sim.analysis.plots.cluster_mean` and :func:`kc_sim.analysis.plots.cluster_rate` compute the
per-deal sums of their arrays and call these two functions, so there is one formula.

**Batches of deals.** A run of tens of millions of rounds has millions of deals, so the
sums are kept per *batch* of consecutive deals: ``batch = group // width`` with
``width = ceil(n_deals / MAX_BATCHES)`` (:func:`batch_width`; ``n_deals`` is the number
of deals per line-up, ``manifest["schedule"]["groups_per_lineup"]``). Deals are
independent of each other (each has its own seed), so a batch of deals is itself a valid
cluster: clustering by batches estimates the same variance as clustering by deals (a
cluster-robust estimate stays valid under coarser clusters that contain the true ones),
with at least ``MAX_BATCHES`` / 2 clusters, so the interval keeps its meaning and its
width changes only by sampling noise. With ``n_deals <= MAX_BATCHES`` every batch is one
deal and every figure is *exactly* the one computed from all rounds in memory. When a
rate is 0 or 1 (no variation) the number of deals, not of batches, is its sample size,
as without batching.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kc_sim.errors import UserError

#: at most this many clusters (batches of consecutive deals) per statistic
MAX_BATCHES = 16384
Z95 = 1.959963984540054


def batch_width(n_deals: int) -> int:
    """Consecutive deals per batch so that ``n_deals`` deals make at most
    :data:`MAX_BATCHES` batches (1 when there are no more deals than that)."""
    return max(1, -(-int(n_deals) // int(MAX_BATCHES)))


# --- the formulas -----------------------------------------------------------------------

def _wilson(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    if n <= 0:
        return math.nan, math.nan
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / den
    lo = 0.0 if p <= 0 else max(0.0, centre - half)
    hi = 1.0 if p >= 1 else min(1.0, centre + half)
    return lo, hi


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
    lo, hi = _wilson(p * n_eff, n_eff, z)
    return float(p), lo, hi


def median_from_hist(hist) -> float:
    """The median of integer values ``0..len(hist)-1`` counted by ``hist`` (as
    ``np.median`` of the values: the mean of the two middle ones for an even count)."""
    hist = np.asarray(hist, dtype=np.int64)
    n = int(hist.sum())
    if n == 0:
        return math.nan
    cum = np.cumsum(hist)
    lo = int(np.searchsorted(cum, (n - 1) // 2, side="right"))
    hi = int(np.searchsorted(cum, n // 2, side="right"))
    return (lo + hi) / 2


def percentile_from_hist(hist, q: float) -> float:
    """``np.percentile(values, q)`` (linear method) of the integer values counted by ``hist``."""
    hist = np.asarray(hist, dtype=np.int64)
    n = int(hist.sum())
    if n == 0:
        return math.nan
    cum = np.cumsum(hist)
    h = (n - 1) * np.true_divide(q, 100)
    i = int(math.floor(h))
    a = float(np.searchsorted(cum, i, side="right"))
    b = float(np.searchsorted(cum, min(i + 1, n - 1), side="right"))
    t = h - i
    d = b - a
    return float(b - d * (1 - t)) if t >= 0.5 else float(a + d * t)


# --- per-batch sums ---------------------------------------------------------------------

@dataclass
class _Deals:
    """The deals of one chunk of rows (one line-up): local deal index of every row, and how
    local deals map onto batches (consecutive segments, one per batch)."""

    lg: np.ndarray          # (rows,) local deal index
    ng: int                 # local deals
    starts: np.ndarray      # segment starts (local deal index where the batch changes)
    ub: np.ndarray          # batch of each segment
    identity: bool          # one local deal per segment (no reduction needed)
    deals: np.ndarray       # deal number (group) of every local deal that has rows
    seg: np.ndarray         # (ng,) segment of every local deal

    def reduce(self, a: np.ndarray) -> np.ndarray:
        """(keys, ng) per-deal values -> (keys, segments) per-batch values."""
        return a if self.identity else np.add.reduceat(a, self.starts, axis=1)


def _deal_index(group: np.ndarray, width: int) -> _Deals:
    g0, g1 = int(group.min()), int(group.max())
    if g1 - g0 < 4 * len(group) + 1024:                  # deal numbers: dense
        lg = group - g0
        ng = g1 - g0 + 1
        gid = np.arange(g0, g1 + 1, dtype=np.int64)
    else:
        gid, lg = np.unique(group, return_inverse=True)
        ng = len(gid)
    b = gid // width
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    present = np.bincount(lg, minlength=ng) > 0
    seg = np.zeros(ng, np.int64)
    seg[starts[1:]] = 1
    return _Deals(lg, ng, starts, b[starts], len(starts) == ng, gid[present], np.cumsum(seg))


class Sums:
    """Per-batch sums ``S[value][key, batch]`` of named values and counts ``N[key, batch]``
    (float64) for ``n_keys`` keys (an agent, an ordered pair, a position, ...).

    ``track_deals`` (batches wider than one deal): also count the deals behind every key
    and batch (``D``), the sample size of a rate without variation. Each part holds whole
    deals of one line-up and parts come line-up by line-up (chunk order), so the deals of
    one line-up add up exactly; over line-ups (which replay the same deals) the largest
    count is kept."""

    def __init__(self, n_keys: int, values, n_batches: int, track_deals: bool = False):
        self.n_keys = n_keys
        self.values = tuple(values)
        self.N = np.zeros((n_keys, n_batches))
        self.S = {v: np.zeros((n_keys, n_batches)) for v in self.values}
        self.track = track_deals
        self.D = np.zeros((n_keys, n_batches)) if track_deals else None
        self._Dl = np.zeros((n_keys, n_batches)) if track_deals else None
        self._lineup = None

    @property
    def n_batches(self) -> int:
        return self.N.shape[1]

    def grow(self, n_keys: int, n_batches: int) -> None:
        """Room for at least ``n_keys`` keys and ``n_batches`` batches."""
        k, b = max(n_keys, self.n_keys), max(n_batches, self.n_batches)
        if (k, b) == (self.n_keys, self.n_batches):
            return

        def pad(a):
            out = np.zeros((k, b))
            out[:a.shape[0], :a.shape[1]] = a
            return out
        self.N = pad(self.N)
        self.S = {v: pad(a) for v, a in self.S.items()}
        if self.track:
            self.D, self._Dl = pad(self.D), pad(self._Dl)
        self.n_keys = k

    def add(self, key, deals: _Deals, lg, weights: dict, keys, lineup=0) -> None:
        """Add observations: ``key`` (local key index into ``keys``, the global key of each
        local key), ``lg`` (local deal of each observation), ``weights`` (value name -> the
        observation's value)."""
        keys = np.asarray(keys, dtype=np.int64)
        nk, ng = len(keys), deals.ng
        if len(key) == 0 or nk == 0:
            return
        key = np.asarray(key, dtype=np.int64)
        where = np.ix_(keys, deals.ub)
        cnt = None
        if deals.identity or self.track:                 # per deal: counts (and deals behind them)
            cnt = np.bincount(key * ng + lg, minlength=nk * ng).reshape(nk, ng)
        if deals.identity:                               # one deal per batch
            idx, shape = key * ng + lg, (nk, ng)
            self.N[where] += cnt
        else:                                            # straight into the batches
            nseg = len(deals.ub)
            idx, shape = key * nseg + deals.seg[lg], (nk, nseg)
            self.N[where] += np.bincount(idx, minlength=nk * nseg).reshape(shape)
        for v, w in weights.items():
            self.S[v][where] += np.bincount(idx, weights=np.asarray(w, dtype=np.float64),
                                            minlength=shape[0] * shape[1]).reshape(shape)
        if self.track:
            if lineup != self._lineup:
                self._fold()
                self._lineup = lineup
            self._Dl[where] += deals.reduce((cnt > 0).astype(np.float64))

    def _fold(self) -> None:
        if self.track:
            np.maximum(self.D, self._Dl, out=self.D)
            self._Dl[:] = 0

    def finish(self) -> None:
        self._fold()
        self._lineup = None

    # results
    def count(self, key: int = 0) -> int:
        return int(round(float(self.N[key].sum())))

    def total(self, value: str, key: int = 0) -> float:
        return float(self.S[value][key].sum())

    def deals(self, key: int = 0) -> int:
        """Deals (clusters) with at least one observation of ``key``."""
        if self.track:
            return int(round(float(self.D[key].sum())))
        return int((self.N[key] > 0).sum())

    def mean(self, value: str, key: int = 0) -> tuple[float, float, float]:
        return mean_from_sums(self.S[value][key], self.N[key])

    def rate(self, value: str, key: int = 0) -> tuple[float, float, float]:
        return rate_from_sums(self.S[value][key], self.N[key], self.deals(key))


def _grow_hist(h: np.ndarray, add: np.ndarray) -> np.ndarray:
    """``h + add`` along the last axis, padding the shorter with zeros."""
    if add.shape[-1] > h.shape[-1]:
        out = np.zeros(h.shape[:-1] + (add.shape[-1],), np.int64)
        out[..., :h.shape[-1]] = h
        h = out
    h[..., :add.shape[-1]] += add
    return h


# --- reading ------------------------------------------------------------------------------

def _read_part(path, columns):
    """One part with the given columns (tests replace this to watch the reads)."""
    import pyarrow.parquet as pq
    return pq.read_table(path, columns=columns)


def _int(table, name: str, fill: int = -1) -> np.ndarray:
    return table.column(name).fill_null(fill).to_numpy().astype(np.int64)


def _codes(table, name: str, index: dict) -> np.ndarray:
    """A column of agent names as agent codes (-1 for null or unknown)."""
    from kc_sim.tournament.results import agent_codes
    return agent_codes(table.column(name), index)


def _blocked(table) -> np.ndarray:
    col = table.column("end").combine_chunks()
    if hasattr(col, "dictionary"):
        names = col.dictionary.to_pylist()
        if "blocked" not in names:
            return np.zeros(len(col), bool)
        return (col.indices.fill_null(-1).to_numpy().astype(np.int64) == names.index("blocked"))
    return np.array([v == "blocked" for v in col.to_pylist()], bool)


def round_columns(players: int) -> list[str]:
    return (["lineup", "group", "first", "winner", "end", "turns", "actions"]
            + [f"agent_{s}" for s in range(players)] + [f"penalty_{s}" for s in range(players)])


def _round_arrays(t, players: int, index: dict) -> dict:
    return {
        "lineup": _int(t, "lineup", 0), "group": _int(t, "group"),
        "first": _int(t, "first", 0), "winner": _int(t, "winner"), "blocked": _blocked(t),
        "turns": _int(t, "turns", 0), "actions": _int(t, "actions", 0),
        "agent": np.stack([_codes(t, f"agent_{s}", index) for s in range(players)], axis=1),
        "penalty": np.stack([_int(t, f"penalty_{s}") for s in range(players)], axis=1),
    }


def _by_lineup(cols: dict):
    """The rows of a part split by line-up (a part normally holds one line-up)."""
    lu = cols["lineup"]
    first = int(lu[0])
    if (lu == first).all():
        yield first, cols
        return
    for v in np.unique(lu):
        m = lu == v
        yield int(v), {k: a[m] for k, a in cols.items()}


def _open_run(run_dir):
    """(path, manifest, labels, players) of a run folder, or a UserError saying what is wrong."""
    from kc_sim.tournament import results as R

    path = Path(run_dir)
    if not path.is_dir():
        raise UserError(f"run folder {path} does not exist (make one with kc-sim tournament --out {path})")
    if not (path / R.MANIFEST_FILE).exists():
        raise UserError(f"{path} is not a run folder: it has no {R.MANIFEST_FILE} "
                        "(make one with kc-sim tournament --out DIR)")
    try:
        manifest = R.read_manifest(path)
        config = manifest["config"]
        labels = list(config["labels"])
        players = int(config["players"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UserError(f"cannot read {path / R.MANIFEST_FILE}: {e}") from None
    return path, manifest, labels, players


def n_deals(manifest: dict, parts) -> int:
    """Deals per line-up: the schedule's ``groups_per_lineup``, else the largest deal number
    + 1 (from the parts' statistics, or their ``group`` column)."""
    import pyarrow.parquet as pq

    n = (manifest.get("schedule") or {}).get("groups_per_lineup")
    if isinstance(n, int) and n > 0:
        return n
    top = -1
    for p in parts:
        meta = pq.read_metadata(p)
        j = meta.schema.to_arrow_schema().get_field_index("group")
        stats = [meta.row_group(i).column(j).statistics for i in range(meta.num_row_groups)]
        if all(s is not None and s.has_min_max for s in stats):
            top = max([top] + [int(s.max) for s in stats])
        else:
            t = _read_part(p, ["group"])
            if t.num_rows:
                top = max(top, int(_int(t, "group").max()))
    return top + 1


def _merge(intervals) -> list:
    """Half-open intervals of deal numbers, sorted and merged."""
    merged = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [tuple(x) for x in merged]


# --- the statistics of a run --------------------------------------------------------------

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
    deals: int = 0                   # distinct deals (rotation groups) in the rounds
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

    def _prepare(self, deals: _Deals, n_lineups: int = 0) -> None:
        need = int(deals.ub.max()) + 1
        for s in self._all_sums():
            s.grow(n_lineups if s is self.lineup else s.n_keys, need)

    def _note_deals(self, deals: _Deals) -> None:
        d = deals.deals
        if len(d) == 0:
            return
        cut = np.flatnonzero(np.diff(d) != 1) + 1
        starts, stops = d[np.r_[0, cut]], d[np.r_[cut - 1, len(d) - 1]] + 1
        self._intervals.extend(zip(starts.tolist(), stops.tolist()))
        if len(self._intervals) > 4096:
            self._intervals = _merge(self._intervals)

    def add_rounds(self, cols: dict, lu: int) -> None:
        """Add the rounds of one line-up (arrays as :func:`_round_arrays` gives them)."""
        A, P, W, F = cols["agent"], cols["penalty"], cols["winner"], cols["first"]
        blocked, G = cols["blocked"], cols["group"]
        n, K = P.shape
        if n == 0:
            return
        na = len(self.labels)
        deals = _deal_index(G, self.width)
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
        self.agent.add(key, deals, lg[r], {"win": won, "penalty": pen}, present, lu)
        pos = (s - F[r]) % K
        self.pos_agent.add(key * K + pos, deals, lg[r], {"win": won},
                           (present[:, None] * K + np.arange(K)[None, :]).ravel(), lu)
        top = max(int(P.max()), 0) + 1
        h = np.bincount(A[r, s] * top + pen, minlength=na * top).reshape(na, top)
        self.pen_hist = _grow_hist(self.pen_hist, h)

        # ordered pairs of seats both dealt in
        si, ti = (x.ravel() for x in np.nonzero(~np.eye(K, dtype=bool)))
        both = dealt[:, si] & dealt[:, ti] & (A[:, si] != A[:, ti])          # (n, K (K - 1))
        rb, j = np.nonzero(both)
        sa, sb = si[j], ti[j]
        pa, pb = P[rb, sa], P[rb, sb]
        pair_keys = (present[:, None] * na + present[None, :]).ravel()
        self.h2h.add(LA[rb, sa] * kp + LA[rb, sb], deals, lg[rb],
                     {"score": (pa < pb) + 0.5 * (pa == pb), "win": W[rb] == sa, "diff": pa - pb}, pair_keys, lu)

        # positions in turn order over all agents: the seat at each position, when dealt in
        seat_at = (F[:, None] + np.arange(K)[None, :]) % K
        r2, p2 = np.nonzero(np.take_along_axis(dealt_p, seat_at, axis=1))
        self.pos_all.add(p2, deals, lg[r2], {"win": wpos[r2] == p2}, np.arange(K), lu)

        # per round
        out = ~blocked
        first = (wpos == 0).astype(np.float64)
        nd = dealt_p.sum(axis=1)
        self.rounds_.add(np.zeros(n, np.int64), deals, lg, {
            "turns": cols["turns"], "actions": cols["actions"], "out": out, "blocked": blocked, "first": first,
            "edge": first - out / K, "first_last": first - (wpos == K - 1),
            "penalty": np.where(dealt_p, P, 0).sum(axis=1) / np.maximum(nd, 1)}, [0], lu)
        self.lineup.add(np.zeros(n, np.int64), deals, lg, {"out": out, "blocked": blocked}, [lu], lu)
        T = cols["turns"]
        top = int(T.max()) + 1
        self.turns_hist = _grow_hist(self.turns_hist, np.stack([np.bincount(T[out], minlength=top),
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
                               {"won": np.concatenate([win_lo[full] == 2, win_hi[full] == 2])}, pair_keys, lu)

    def add_matches(self, t, index: dict) -> None:
        """Add one part of match rows (an arrow table)."""
        import pyarrow as pa

        lineups = _int(t, "lineup", 0)
        if len(lineups) and not (lineups == lineups[0]).all():
            for v in np.unique(lineups):
                self._add_matches(t.filter(pa.array(lineups == v)), index, int(v))
        else:
            self._add_matches(t, index, int(lineups[0]) if len(lineups) else 0)

    def _add_matches(self, t, index: dict, lu: int) -> None:
        k = self.players
        n = t.num_rows
        if n == 0:
            return
        G = _int(t, "group")
        deals = _deal_index(G, self.width)
        if self.match_ is None:
            na, nb = len(self.labels), self.agent.n_batches
            self.match_agent = Sums(na, ("win", "total"), nb, self.width > 1)
            self.match_ = Sums(1, ("rounds",), nb, self.width > 1)
            self.n_matches = 0
        self._prepare(deals)
        self.n_matches += n
        A = np.stack([_codes(t, f"agent_{s}", index) for s in range(k)], axis=1)
        total = np.stack([_int(t, f"total_{s}", 0) for s in range(k)], axis=1)
        winners = _int(t, "winners", 0)
        r, s = np.nonzero(A >= 0)
        na = len(self.labels)
        self.match_agent.add(A[r, s], deals, deals.lg[r], {"win": (winners[r] >> s) & 1, "total": total[r, s]},
                             np.arange(na), lu)
        self.match_.add(np.zeros(n, np.int64), deals, deals.lg, {"rounds": _int(t, "rounds", 0)}, [0], lu)

    def finish(self) -> None:
        for s in self._all_sums():
            s.finish()
        self._intervals = _merge(self._intervals)
        self.deals = sum(b - a for a, b in self._intervals)

    # --- what the figures and tables show -----------------------------------------------
    @property
    def n_agents(self) -> int:
        return len(self.labels)

    @property
    def rules_label(self) -> str:
        from kc_sim.analysis.plots import rules_label
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
                             "score": self.h2h.rate("score", k), "win": self.h2h.rate("win", k),
                             "diff": self.h2h.mean("diff", k)})
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
            "win_diff": mean_from_sums(h.S["win"][k] - h.S["win"][kb], h.N[k]),
            "ahead": h.rate("score", k), "pen_diff": h.mean("diff", k), "twice": twice,
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
        import pandas as pd

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


def scan_run(run_dir) -> RunStats:
    """Read a run folder part by part (manifest, round parts, match parts when present) into
    a :class:`RunStats`. A :class:`RunStats` is returned as it is. Raises
    :class:`UserError` when the folder is missing or holds no finished rounds."""
    import pyarrow as pa

    from kc_sim.tournament import results as R

    if isinstance(run_dir, RunStats):
        return run_dir
    path, manifest, labels, players = _open_run(run_dir)
    parts = R.parts(path, R.ROUNDS_DIR)
    if not parts:
        raise UserError(f"{path} holds no rounds yet ({R.ROUNDS_DIR}/ is empty): finish the run first "
                        f"(rerun its command: {manifest.get('command', 'kc-sim tournament ...')})")
    config = manifest["config"]
    index = {name: i for i, name in enumerate(labels)}
    try:
        deals = n_deals(manifest, parts)
        stats = RunStats(path=path, manifest=manifest, labels=labels, players=players,
                         rules=config.get("rules", "classic"), mode=config.get("mode", "rounds"),
                         seed=int(config.get("seed", 0)), width=batch_width(deals), n_deals=deals)
        stats._init_sums()
        cols = round_columns(players)
        for p in parts:
            t = _read_part(p, cols)
            arrays = _round_arrays(t, players, index)
            del t
            for lu, sub in _by_lineup(arrays) if len(arrays["group"]) else ():
                stats.add_rounds(sub, lu)
            del arrays
            stats.parts_read += 1
        mparts = R.parts(path, R.MATCHES_DIR)
        if mparts:
            mcols = ["lineup", "group", "rounds"] + [f"agent_{s}" for s in range(players)] + \
                [f"total_{s}" for s in range(players)] + ["winners"]
            for p in mparts:
                stats.add_matches(_read_part(p, mcols), index)
            if stats.n_matches is None:
                stats.n_matches = 0
    except (OSError, ValueError, KeyError, pa.ArrowException) as e:
        raise UserError(f"cannot read the rounds of {path}: {e}") from None
    stats.finish()
    return stats


# --- two runs on the same deals ------------------------------------------------------------

@dataclass
class Paired:
    """Two runs compared round by round (see :func:`compare_runs`)."""

    same_deals: bool
    changed: tuple | None = None      # rate of rounds whose winner (or block) differs
    same_result: bool = False         # no round changed its winner or block
    same_turns: bool = False          # every round has the same turns and actions
    same_penalty: bool = False        # every round has the same penalties


def _iter_rows(parts, columns, players, index):
    """The rows of a run's parts, one part at a time, as arrays (for :func:`compare_runs`)."""
    for p in parts:
        t = _read_part(p, columns)
        out = {"group": _int(t, "group"), "rotation": _int(t, "rotation", 0), "lineup": _int(t, "lineup", 0),
               "winner": _int(t, "winner"), "blocked": _blocked(t), "turns": _int(t, "turns", 0),
               "actions": _int(t, "actions", 0),
               "agent": np.stack([_codes(t, f"agent_{s}", index) for s in range(players)], axis=1),
               "penalty": np.stack([_int(t, f"penalty_{s}") for s in range(players)], axis=1)}
        del t
        yield out


def _aligned(it1, it2):
    """Pairs of equally long row blocks from two streams of blocks (dicts of arrays)."""
    b1 = b2 = None
    while True:
        while b1 is None or len(b1["group"]) == 0:
            b1 = next(it1, None)
            if b1 is None:
                break
        while b2 is None or len(b2["group"]) == 0:
            b2 = next(it2, None)
            if b2 is None:
                break
        if b1 is None or b2 is None:
            if (b1 is None) != (b2 is None):
                yield None, None                      # one run has more rows
            return
        m = min(len(b1["group"]), len(b2["group"]))
        yield {k: v[:m] for k, v in b1.items()}, {k: v[:m] for k, v in b2.items()}
        b1 = {k: v[m:] for k, v in b1.items()}
        b2 = {k: v[m:] for k, v in b2.items()}


def compare_runs(s1: RunStats, s2: RunStats) -> Paired:
    """Do two runs play the same deals in the same order and seating (same size, players,
    seed, deal numbers, rotations, line-ups and agent codes, round by round)? When they
    do, also the rate of rounds whose result (winner or block) differs between the two,
    clustered by deal, and whether the play or the penalties are identical. Streams both
    runs' parts side by side."""
    from kc_sim.tournament import results as R

    if not (s1.n == s2.n and s1.players == s2.players and s1.seed == s2.seed and s1.width == s2.width):
        return Paired(False)
    k = s1.players
    cols = (["lineup", "group", "rotation", "winner", "end", "turns", "actions"]
            + [f"agent_{s}" for s in range(k)] + [f"penalty_{s}" for s in range(k)])
    streams = []
    for s in (s1, s2):
        index = {name: i for i, name in enumerate(s.labels)}
        streams.append(_iter_rows(R.parts(s.path, R.ROUNDS_DIR), cols, k, index))
    nb = max(s1.rounds_.n_batches, s2.rounds_.n_batches)
    changed = Sums(1, ("changed",), nb, s1.width > 1)
    same_turns = same_pen = True
    for a, b in _aligned(*streams):
        if a is None:
            return Paired(False)
        if not all(np.array_equal(a[c], b[c]) for c in ("group", "rotation", "lineup", "agent")):
            return Paired(False)
        same_turns = same_turns and np.array_equal(a["turns"], b["turns"]) and np.array_equal(a["actions"], b["actions"])
        same_pen = same_pen and np.array_equal(a["penalty"], b["penalty"])
        other = (a["winner"] != b["winner"]) | (a["blocked"] != b["blocked"])
        for lu, sub in _by_lineup({"group": a["group"], "lineup": a["lineup"], "other": other}):
            deals = _deal_index(sub["group"], s1.width)
            changed.grow(1, int(deals.ub.max()) + 1)
            changed.add(np.zeros(len(sub["group"]), np.int64), deals, deals.lg, {"changed": sub["other"]}, [0], lu)
    changed.finish()
    n_changed = changed.total("changed")
    return Paired(True, changed.rate("changed"), n_changed == 0, same_turns, same_pen)
