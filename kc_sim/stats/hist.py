"""Histograms of integer values (penalties, turns) and merged ranges of deal numbers: what
the scan keeps besides the per-batch sums (:class:`kc_sim.stats.sums.Sums`). A histogram
grows with :func:`grow_hist` and gives medians and percentiles without the values."""

from __future__ import annotations

import math

import numpy as np


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
