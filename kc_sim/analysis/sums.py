"""Streaming sums for intervals clustered by deal: per-batch sums of named values.

A run can hold millions of deals, so the sums behind its clustered intervals are kept
per *batch* of consecutive deals (``batch = group // width``): :class:`Sums` holds, for
every key (an agent, an ordered pair, a position, ...) and batch, the sum of each value
and the number of observations; :func:`kc_sim.stats.mean_from_sums` and
:func:`kc_sim.stats.rate_from_sums` turn them into intervals. :class:`Deals` maps the
rows of one part onto its deals and batches. Histograms of integer values (penalties,
turns) grow with :func:`grow_hist` and give medians and percentiles without the values.
Why batches of deals are valid clusters: :mod:`kc_sim.analysis.scan`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kc_sim.stats import mean_from_sums, rate_from_sums


@dataclass
class Deals:
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


def deal_index(group: np.ndarray, width: int) -> Deals:
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
    return Deals(lg, ng, starts, b[starts], len(starts) == ng, gid[present], np.cumsum(seg))


class Sums:
    """Per-batch sums ``S[value][key, batch]`` of named values and counts ``N[key, batch]``
    (float64) for ``n_keys`` keys (an agent, an ordered pair, a position, ...).

    ``track_deals`` (batches wider than one deal): also count the deals behind every key
    and batch (``D``), the sample size of a rate without variation. Each part holds whole
    deals of one line-up, and parts come block by block (chunk order): the parts of one
    block hold the same deals for every line-up, so a deal counts once for a key however
    many of the block's line-ups saw it (runs of kc-sim/tournament/1, stored line-up by
    line-up, count a deal once per line-up)."""

    def __init__(self, n_keys: int, values, n_batches: int, track_deals: bool = False):
        self.n_keys = n_keys
        self.values = tuple(values)
        self.N = np.zeros((n_keys, n_batches))
        self.S = {v: np.zeros((n_keys, n_batches)) for v in self.values}
        self.track = track_deals
        self.D = np.zeros((n_keys, n_batches)) if track_deals else None
        self._block: Deals | None = None      # the deals of the block being added
        self._seen = None                     # (keys, deals of the block): key seen in the deal

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
            self.D = pad(self.D)
            if self._seen is not None:
                seen = np.zeros((k, self._seen.shape[1]), bool)
                seen[:self._seen.shape[0]] = self._seen
                self._seen = seen
        self.n_keys = k

    def add(self, key, deals: Deals, lg, weights: dict, keys) -> None:
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
            b = self._block
            if b is None or b.ng != ng or not np.array_equal(b.deals[:1], deals.deals[:1]):
                self._fold()
                self._block, self._seen = deals, np.zeros((self.n_keys, ng), bool)
            self._seen[keys] |= cnt > 0

    def _fold(self) -> None:
        """Count the deals of the finished block."""
        if self._seen is not None:
            self.D[:, self._block.ub] += self._block.reduce(self._seen.astype(np.float64))
            self._block = self._seen = None

    def finish(self) -> None:
        self._fold()

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


def grow_hist(h: np.ndarray, add: np.ndarray) -> np.ndarray:
    """``h + add`` along the last axis, padding the shorter with zeros."""
    if add.shape[-1] > h.shape[-1]:
        out = np.zeros(h.shape[:-1] + (add.shape[-1],), np.int64)
        out[..., :h.shape[-1]] = h
        h = out
    h[..., :add.shape[-1]] += add
    return h


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


def merge_intervals(intervals) -> list:
    """Half-open intervals of deal numbers, sorted and merged."""
    merged = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [tuple(x) for x in merged]
