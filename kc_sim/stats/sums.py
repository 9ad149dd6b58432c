"""Streaming sums for intervals clustered by deal: per-batch sums of named values.

A run can hold millions of deals, so the sums behind its clustered intervals are kept
per *batch* of consecutive deals (``batch = group // width``, ``width`` from
:func:`batch_width`): :class:`Sums` holds, for every key (an agent, an ordered pair, a
seat, ...) and batch, the sum of each value and the number of observations;
:func:`kc_sim.stats.intervals.mean_from_sums` and
:func:`kc_sim.stats.intervals.rate_from_sums` turn them into intervals. :class:`Deals`
maps the rows of one part onto its deals and batches.

**Why batches of deals are valid clusters.** Deals are independent of each other (each has
its own seed), so a batch of consecutive deals is itself a valid cluster: clustering by
batches estimates the same variance as clustering by deals (a cluster-robust estimate
stays valid under coarser clusters that contain the true ones), with at least
``MAX_BATCHES / 2`` clusters, so an interval keeps its meaning and its width changes only
by sampling noise (about 1% at 8,192 batches). With ``n_deals <= MAX_BATCHES`` every
batch is one deal and every figure is *exactly* the one clustered by deal. The same group
number is the same deal in every line-up of a run, so a batch holds whole deals whatever
the line-up: the memory of the sums is ``keys x values x MAX_BATCHES`` at most, whatever
the number of rounds.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass

import numpy as np

from kc_sim.stats.intervals import mean_from_sums, rate_from_sums

#: at most this many clusters (batches of consecutive deals) per statistic
MAX_BATCHES = 16384


def batch_width(n_deals: int) -> int:
    """Consecutive deals per batch so that ``n_deals`` deals make at most
    :data:`MAX_BATCHES` batches (1 when there are no more deals than that)."""
    return max(1, -(-int(n_deals) // int(MAX_BATCHES)))


def batch_count(n_deals: int, width: int) -> int:
    """Batches of ``width`` consecutive deals that hold deals ``0 .. n_deals - 1`` (at least 1)."""
    return max(1, -(-int(n_deals) // int(width)))


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

    def mean(self, value: str, key: int = 0, paired: bool = False) -> tuple[float, float, float]:
        """The clustered mean of ``value`` for ``key`` (``paired``: a paired difference of two
        agents, :func:`~kc_sim.stats.intervals.mean_from_sums`)."""
        return mean_from_sums(self.S[value][key], self.N[key], paired=paired)

    def rate(self, value: str, key: int = 0, n_deals: int | None = None, paired: bool = False):
        """The clustered rate of ``value`` for ``key``; ``n_deals`` (default: counted) is the
        sample size of a rate without variation."""
        return rate_from_sums(self.S[value][key], self.N[key], self.deals(key) if n_deals is None else n_deals,
                              paired=paired)

    # --- adding up and storing (the tally of a chunk) ------------------------------------
    def merge(self, other: Sums) -> Sums:
        """Add the sums of ``other`` (same values; its keys and batches may be fewer)."""
        self.grow(other.n_keys, other.n_batches)
        k, b = other.n_keys, other.n_batches
        self.N[:k, :b] += other.N
        for v in self.values:
            self.S[v][:k, :b] += other.S[v]
        return self

    def pack(self) -> dict:
        """The sums as a small JSON-able dict: only the keys and the range of batches with
        observations, every array as integers (all kc-sim's sums are whole numbers: counts,
        wins, penalties), zlib-compressed and base64-encoded (:func:`unpack`)."""
        used_k = np.flatnonzero(self.N.any(axis=1))
        used_b = np.flatnonzero(self.N.any(axis=0))
        if not len(used_k):
            return {"keys": [], "first": 0, "batches": 0}
        b0, b1 = int(used_b[0]), int(used_b[-1]) + 1
        arrays = [self.N[used_k, b0:b1]] + [self.S[v][used_k, b0:b1] for v in self.values]
        return {"keys": used_k.tolist(), "first": b0, "batches": b1 - b0,
                "data": {name: _pack_array(a) for name, a in zip(("N",) + self.values, arrays)}}

    @classmethod
    def unpack(cls, d: dict, n_keys: int, values) -> Sums:
        """The :class:`Sums` of :meth:`pack` (``n_keys`` keys); raises ValueError when ``d`` is
        not what :meth:`pack` writes (the metadata of a part is data from a file)."""
        keys = np.asarray(d.get("keys", []), dtype=np.int64)
        b0, nb = int(d.get("first", -1)), int(d.get("batches", -1))
        if keys.ndim != 1 or b0 < 0 or nb < 0 or b0 + nb > MAX_BATCHES + 1 or (len(keys) and (
                keys.min() < 0 or keys.max() >= n_keys or len(np.unique(keys)) != len(keys))):
            raise ValueError("bad keys or batches")
        out = cls(n_keys, values, b0 + nb)
        if not len(keys):
            return out
        data = d.get("data")
        if not isinstance(data, dict):
            raise ValueError("no data")
        for name in ("N",) + out.values:
            a = _unpack_array(data.get(name), len(keys) * nb).reshape(len(keys), nb)
            (out.N if name == "N" else out.S[name])[keys, b0:] = a
        if (out.N < 0).any():
            raise ValueError("negative counts")
        return out


def _pack_array(a: np.ndarray) -> str:
    """Whole numbers as the narrowest integer type that holds them, compressed, base64."""
    v = np.rint(a).astype(np.int64)
    lo, hi = (int(v.min()), int(v.max())) if v.size else (0, 0)
    for t in (np.int8, np.int16, np.int32, np.int64):
        if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
            break
    return f"{np.dtype(t).str}:" + base64.b64encode(zlib.compress(v.astype(t).tobytes(), 6)).decode("ascii")


def _unpack_array(text, size: int) -> np.ndarray:
    if not isinstance(text, str) or ":" not in text:
        raise ValueError("bad array")
    kind, payload = text.split(":", 1)
    if kind not in ("|i1", "<i2", "<i4", "<i8"):
        raise ValueError(f"bad array type {kind!r}")
    dt = np.dtype(kind)
    try:
        raw = zlib.decompressobj().decompress(base64.b64decode(payload, validate=True), size * dt.itemsize + 1)
    except (ValueError, zlib.error) as e:
        raise ValueError(f"bad array: {e}") from None
    if len(raw) != size * dt.itemsize:
        raise ValueError("array of the wrong size")
    return np.frombuffer(raw, dtype=dt).astype(np.float64)
