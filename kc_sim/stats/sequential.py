"""Anytime-valid early stopping: a confidence sequence for a bounded mean, and the stopping
rule of ``kc-sim tournament --until decided``.

**Why a confidence sequence.** A normal interval looked at after every chunk, with the run
stopped the first time it excludes 0.5, is wrong far more often than its nominal 5% (about
half the time over 400 looks, measured in tests/test_sequential.py). A *confidence
sequence* ``(CS_t)`` holds with probability ``1 - alpha`` *simultaneously for all t*::

    P( mu in CS_t for every t >= 1 ) >= 1 - alpha,

so the run may look after every deal and stop whenever it likes; the interval at the stop
is still valid. The price is a wider interval: about 2.2x the fixed-size normal one at
10^4..10^6 deals (see :func:`fixed_n_for_halfwidth`).

**The method: empirical-Bernstein CS with a polynomial-stitched boundary.** Howard,
Ramdas, McAuliffe & Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic confidence
sequences", Annals of Statistics 49(2), arXiv:1810.08240: Theorem 4 (empirical Bernstein)
with the stitched boundary of Theorem 1 in its closed form eq. (10). For observations
``x_i`` in ``[lo, hi]`` with conditional mean ``mu``:

* scale ``c = hi - lo``; predictable centre ``mu_hat_{i-1} = (mid + x_1 + ... + x_{i-1}) / i``
  (a running mean with one pseudo-observation at the midpoint ``mid = (lo + hi) / 2``, so
  ``mu_hat_0 = mid``; clipped into ``[lo, hi]``), and the variance process
  ``V_t = sum_{i<=t} (x_i - mu_hat_{i-1})**2``. Then ``S_t = sum (x_i - mu)`` is
  sub-exponential with variance process ``V_t`` and scale ``c`` (Theorem 4), hence
  sub-gamma with the same scale, which is what the boundary needs.
* boundary, for one side with error ``a``::

      u(v) = sqrt(k1**2 v' l(v') + k2**2 c**2 l(v')**2) + c k2 l(v'),   v' = max(v, m)
      l(v) = s log(log(eta v / m)) + log(zeta(s) / (a log(eta)**s))
      k1 = (eta**(1/4) + eta**(-1/4)) / sqrt(2),   k2 = (sqrt(eta) + 1) / 2

  with ``eta = 2``, ``s = 1.4`` (the paper's and its reference implementation ``confseq``'s
  defaults) and ``P(exists t: S_t >= u(V_t)) <= a``.
* two-sided, ``a = alpha / 2`` per side: ``CS_t = mean_t +- u(V_t) / t``.
* ``m = c**2``: the boundary is flat below ``V = m`` and tightest near ``V ~ 3 m``.
  Relative to ``m = c**2``, an ``m`` of ``0.1 c**2`` is wider at every ``V`` (by 40% at
  ``V = c**2``, still 1.4% at ``V = 10**5 c**2``); ``m = 10 c**2`` is 24% narrower at
  ``V = 10 c**2`` but only 2-7% narrower for ``V`` from ``10**2`` to ``10**5 c**2`` and 40%
  wider at ``V = c**2``; ``m = 100 c**2`` is 2-3x wider below ``V = 3 c**2``. The ``V`` at
  which a run decides is not known in advance (it is the per-deal variance, 0.01..0.25
  for a score in [0, 1], times the deals needed), so ``m = c**2``: the smallest ``m`` that
  costs nothing at any ``V``, within a few percent of the best ``m`` for any late stop.
  A pair's per-deal score has ``c = 1``, so ``m = 1``.

**Running intersection.** The intersection of all intervals so far is a confidence
sequence too (the event "mu in every CS_t" is the same), so :class:`ConfSeq` keeps it,
computed at *every observation* (not only at batch ends): :meth:`ConfSeq.interval` is
that intersection. It is never wider than the current interval, a decision once made
stays made, and the result does not depend on how the stream is cut into batches.

**Stopping rule** (:class:`StopRule`): one CS per pair of agents on the per-deal paired
score (the share of the deal's rounds in which the first agent finished ahead of the
second), with the error split Bonferroni: ``alpha / P`` per pair for ``P`` pairs, so that
the chance that *any* pair's sequence ever misses its mean is at most ``alpha``. A pair is
"separated" when its interval excludes ``null`` (0.5: neither finishes ahead more often),
"precise" when its half-width is at most ``precision``, else "open"; the run is done when
every pair is separated or precise.

The CS assumes each observation is a new deal: its conditional mean given all earlier
observations is ``mu``. A pair that meets in the same deal in several line-ups must be fed
one combined score per deal (e.g. a whole block of line-ups at a time), not one per
line-up.

Pure numpy; imports only :mod:`kc_sim.errors` from the project.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kc_sim.errors import UserError

ETA = 2.0
S = 1.4
STATE_FORMAT = "kc-sim/sequential/1"


# --- special functions (scipy is not a dependency) --------------------------------------------

# B_{2j} / (2j)! for j = 1..6, the Euler-Maclaurin coefficients of zeta
_EM = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000)


def zeta(s: float) -> float:
    """Riemann zeta ``sum_k k**-s`` for real ``s > 1``, by Euler-Maclaurin summation after
    ten terms (relative error below 1e-14 for ``s`` in (1, 20])."""
    if not s > 1:
        raise ValueError(f"zeta needs s > 1, got {s}")
    N = 10
    total = math.fsum(k ** -s for k in range(1, N))
    total += N ** (1 - s) / (s - 1) + 0.5 * N ** -s
    rising = s   # s (s+1) ... (s + 2j - 2)
    for j, coef in enumerate(_EM, start=1):
        total += coef * rising * N ** (-s - 2 * j + 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return total


def normal_quantile_two_sided(alpha: float) -> float:
    """``z`` with ``P(|Z| > z) = alpha`` for a standard normal ``Z`` (1.95996 for 0.05), by
    bisection of ``erfc``; accurate for alpha down to 1e-300."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    a, b = 0.0, 40.0
    for _ in range(200):
        mid = (a + b) / 2
        if math.erfc(mid / math.sqrt(2)) > alpha:
            a = mid
        else:
            b = mid
    return (a + b) / 2


# --- the boundary --------------------------------------------------------------------------

def boundary(v, alpha_side: float, c: float, m: float, eta: float = ETA, s: float = S):
    """The polynomial-stitched boundary ``u(v)`` of Howard et al. (2021) eq. (10) for one side
    with error ``alpha_side``: ``P(exists t: S_t >= u(V_t)) <= alpha_side`` for a sub-gamma
    process ``S_t`` with variance process ``V_t`` and scale ``c``. Works on arrays."""
    v = np.maximum(np.asarray(v, dtype=np.float64), m)
    k1 = (eta ** 0.25 + eta ** -0.25) / math.sqrt(2)
    k2 = (math.sqrt(eta) + 1) / 2
    ell = s * np.log(np.log(eta * v / m)) + math.log(zeta(s) / (alpha_side * math.log(eta) ** s))
    lin = c * k2 * ell
    return np.sqrt(k1 * k1 * v * ell + lin * lin) + lin


def advance(x, n0: int, total0, v0, lo: float, hi: float):
    """The running sums of a confidence sequence over a batch ``x`` (``(..., b)``: any leading
    axes are independent streams that have all seen ``n0`` observations), vectorised: no loop
    per observation. ``total0`` / ``v0`` (shape ``x.shape[:-1]``) are the sum and the variance
    process before the batch. Returns ``(t, sums, v)``: the counts ``n0+1 .. n0+b`` (``(b,)``),
    and the running sum and variance process after each observation (``(..., b)``).
    The predictable centre for observation ``i`` is ``(mid + sum_{j<i} x_j) / i``."""
    x = np.asarray(x, dtype=np.float64)
    b = x.shape[-1]
    total0 = np.asarray(total0, dtype=np.float64)[..., None]
    v0 = np.asarray(v0, dtype=np.float64)[..., None]
    t = n0 + np.arange(1, b + 1, dtype=np.float64)
    sums = total0 + np.cumsum(x, axis=-1)
    before = np.concatenate([total0, sums[..., :-1]], axis=-1)   # sum of x_j, j < i
    centre = np.clip((0.5 * (lo + hi) + before) / t, lo, hi)
    v = v0 + np.cumsum((x - centre) ** 2, axis=-1)
    return t, sums, v


def sequence_bounds(t, sums, v, alpha: float, lo: float, hi: float, m: float | None = None):
    """The two-sided confidence sequence ``(lower, upper)`` at each point, ``alpha / 2`` per
    side, from :func:`advance`'s output; the running intersection is their cumulative
    max / min. Works on arrays."""
    c = hi - lo
    m = c * c if m is None else m
    half = boundary(v, alpha / 2, c, m) / t
    mean = sums / t
    return mean - half, mean + half


# --- one confidence sequence ---------------------------------------------------------------

class ConfSeq:
    """An anytime-valid confidence sequence for the mean of observations in ``[lo, hi]``
    (empirical Bernstein, polynomial stitching; see the module docstring), filled batch by
    batch. State: ``n``, ``total`` (sum), ``sumsq`` (sum of squares, for the sample sd),
    ``v`` (variance process), ``run_lo`` / ``run_hi`` (running intersection). The state after
    a stream does not depend on how it was cut into batches (up to rounding), and it
    round-trips through :meth:`to_dict` / :meth:`from_dict` (JSON-able) for resuming."""

    def __init__(self, alpha: float = 0.05, lo: float = 0.0, hi: float = 1.0,
                 m: float | None = None):
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if not hi > lo:
            raise ValueError(f"need lo < hi, got [{lo}, {hi}]")
        self.alpha = float(alpha)
        self.lo = float(lo)
        self.hi = float(hi)
        self.m = float((hi - lo) ** 2 if m is None else m)
        if not self.m > 0:
            raise ValueError(f"m must be > 0, got {m}")
        self.n = 0
        self.total = 0.0
        self.sumsq = 0.0
        self.v = 0.0
        self.run_lo = self.lo
        self.run_hi = self.hi

    @property
    def mu_hat(self) -> float:
        """The predictable centre for the next observation: ``(mid + total) / (n + 1)``."""
        return min(max((0.5 * (self.lo + self.hi) + self.total) / (self.n + 1), self.lo), self.hi)

    def update(self, x) -> ConfSeq:
        """Take a batch of observations in stream order (1-d; NaN is not allowed here: drop
        absent observations before). Returns self."""
        x = np.asarray(x, dtype=np.float64).ravel()
        if x.size == 0:
            return self
        if not np.all((x >= self.lo) & (x <= self.hi)):   # also catches NaN
            bad = x[~((x >= self.lo) & (x <= self.hi))][0]
            raise ValueError(f"observation {bad} outside [{self.lo}, {self.hi}]")
        t, sums, v = advance(x, self.n, self.total, self.v, self.lo, self.hi)
        lower, upper = sequence_bounds(t, sums, v, self.alpha, self.lo, self.hi, self.m)
        self.run_lo = max(self.run_lo, float(lower.max()))
        self.run_hi = min(self.run_hi, float(upper.min()))
        self.n += x.size
        self.total = float(sums[-1])
        self.v = float(v[-1])
        self.sumsq += float(np.dot(x, x))
        return self

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan

    @property
    def half_width(self) -> float:
        """The current interval's half-width ``u(V_t) / t`` (infinite before any data)."""
        if not self.n:
            return math.inf
        c = self.hi - self.lo
        return float(boundary(self.v, self.alpha / 2, c, self.m)) / self.n

    def current(self) -> tuple[float, float, float]:
        """``(mean, lo, hi)`` of the interval at the current time alone, clipped to the range."""
        mean, h = self.mean, self.half_width
        if not self.n:
            return mean, self.lo, self.hi
        return mean, max(mean - h, self.lo), min(mean + h, self.hi)

    def interval(self) -> tuple[float, float, float]:
        """``(mean, lo, hi)``: the sample mean and the running intersection of every interval
        so far (valid at any stopping time; ``lo > hi`` only when the sequence has failed,
        which happens with probability at most ``alpha``)."""
        return self.mean, self.run_lo, self.run_hi

    @property
    def sd(self) -> float:
        """Sample standard deviation of the observations (n - 1); NaN for fewer than two."""
        if self.n < 2:
            return math.nan
        var = (self.sumsq - self.total * self.total / self.n) / (self.n - 1)
        return math.sqrt(max(var, 0.0))

    def to_dict(self) -> dict:
        return {"alpha": self.alpha, "lo": self.lo, "hi": self.hi, "m": self.m,
                "eta": ETA, "s": S, "n": self.n, "total": self.total, "sumsq": self.sumsq,
                "v": self.v, "mu_hat": self.mu_hat, "run_lo": self.run_lo, "run_hi": self.run_hi}

    @classmethod
    def from_dict(cls, d: dict) -> ConfSeq:
        if d.get("eta", ETA) != ETA or d.get("s", S) != S:
            raise ValueError(f"saved sequence has eta={d.get('eta')}, s={d.get('s')}; "
                             f"this version uses eta={ETA}, s={S}")
        cs = cls(d["alpha"], d["lo"], d["hi"], d["m"])
        cs.n = int(d["n"])
        cs.total = float(d["total"])
        cs.sumsq = float(d["sumsq"])
        cs.v = float(d["v"])
        cs.run_lo = float(d["run_lo"])
        cs.run_hi = float(d["run_hi"])
        return cs


# --- the stopping rule ---------------------------------------------------------------------

@dataclass(frozen=True)
class PairStatus:
    """One pair's state in a :class:`Decision`."""
    pair: tuple[int, int]
    n: int              # deals in which the pair met
    mean: float         # mean per-deal score (finishes-ahead rate, ties half)
    lo: float           # running-intersection interval at level 1 - alpha / P
    hi: float
    half_width: float   # (hi - lo) / 2
    status: str         # "separated" | "precise" | "open"


@dataclass(frozen=True)
class Decision:
    """What :meth:`StopRule.decision` returns: every pair's status, whether the run is done
    (every pair separated or precise) and the one-line reason for the run's last line."""
    pairs: tuple[PairStatus, ...]
    done: bool
    deals: int
    reason: str

    @property
    def statuses(self) -> tuple[str, ...]:
        return tuple(p.status for p in self.pairs)


def _num(x: float) -> str:
    return f"{x:.4f}"


class StopRule:
    """The stopping rule of ``--until decided``: one :class:`ConfSeq` per pair on the per-deal
    paired score, each at level ``1 - alpha / P`` (Bonferroni over the ``P`` pairs, so the
    chance that any pair is ever wrongly "separated" is at most ``alpha``).

    ``pairs`` ``(P, 2)`` agent indices; ``precision`` the half-width (in score units: 0.005 =
    0.5 percentage points of the finishes-ahead rate) at which a pair that has not separated
    counts as measured well enough, or None (only separation decides a pair); ``null`` the
    score of "no difference". Fed with :meth:`update` in deal order; :meth:`decision` says
    where each pair stands. Deterministic for a given stream (not for how it is batched), and
    serialisable with :meth:`to_dict` / :meth:`from_dict`."""

    def __init__(self, pairs, alpha: float = 0.05, precision: float | None = None,
                 lo: float = 0.0, hi: float = 1.0, null: float = 0.5):
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if len(pairs) == 0:
            raise ValueError("a stopping rule needs at least one pair")
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if precision is not None and not precision > 0:
            raise ValueError(f"precision must be > 0, got {precision}")
        if not lo <= null <= hi:
            raise ValueError(f"null {null} outside [{lo}, {hi}]")
        self.pairs = [(int(a), int(b)) for a, b in pairs]
        self.alpha = float(alpha)
        self.precision = None if precision is None else float(precision)
        self.lo, self.hi, self.null = float(lo), float(hi), float(null)
        self.deals = 0
        self.sequences = [ConfSeq(self.alpha_pair, lo, hi) for _ in self.pairs]

    @property
    def alpha_pair(self) -> float:
        """The error of each pair's sequence: ``alpha / P``."""
        return self.alpha / len(self.pairs)

    def update(self, scores) -> StopRule:
        """Take the per-deal scores of the next ``D`` deals, ``(D, P)`` in deal order, NaN where
        the pair did not meet in that deal (it then counts for neither that pair's mean nor its
        ``n``). Returns self."""
        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim == 1 and len(self.pairs) == 1:
            scores = scores[:, None]
        if scores.ndim != 2 or scores.shape[1] != len(self.pairs):
            raise ValueError(f"scores must be (deals, {len(self.pairs)}), got {scores.shape}")
        for p, cs in enumerate(self.sequences):
            col = scores[:, p]
            cs.update(col[~np.isnan(col)])
        self.deals += scores.shape[0]
        return self

    def _status(self, pair: tuple[int, int], cs: ConfSeq) -> PairStatus:
        mean, lo, hi = cs.interval()
        half = (hi - lo) / 2
        if cs.n and (lo > self.null or hi < self.null):
            status = "separated"
        elif cs.n and self.precision is not None and half <= self.precision:
            status = "precise"
        else:
            status = "open"
        return PairStatus(pair, cs.n, mean, lo, hi, half, status)

    def decision(self, names: Sequence[str] | None = None) -> Decision:
        """Each pair's status, ``done``, and the one-line reason, e.g. ``decided: greedy vs
        merger 0.5134 [0.5051, 0.5217] excludes 0.5 after 48,000 deals``. ``names[i]`` is the
        name of agent index ``i`` (default: the index)."""
        out = []
        parts = []
        for pair, cs in zip(self.pairs, self.sequences):
            st = self._status(pair, cs)
            out.append(st)
            a, b = (str(i) if names is None else str(names[i]) for i in pair)
            text = f"{a} vs {b} "
            if st.n == 0:
                text += "no deals yet"
            else:
                text += f"{_num(st.mean)} [{_num(st.lo)}, {_num(st.hi)}] "
                if st.status == "separated":
                    text += f"excludes {self.null:g}"
                elif self.precision is None:
                    text += "open"
                else:
                    op = "<=" if st.status == "precise" else ">"
                    text += f"half-width {st.half_width:.4f} {op} {self.precision:g}"
            parts.append(text)
        done = all(st.status != "open" for st in out)
        head = "decided" if done else "undecided"
        reason = f"{head}: {'; '.join(parts)} after {self.deals:,} deals"
        return Decision(tuple(out), done, self.deals, reason)

    def to_dict(self) -> dict:
        return {"format": STATE_FORMAT, "pairs": [list(p) for p in self.pairs],
                "alpha": self.alpha, "precision": self.precision, "lo": self.lo, "hi": self.hi,
                "null": self.null, "deals": self.deals,
                "sequences": [cs.to_dict() for cs in self.sequences]}

    @classmethod
    def from_dict(cls, d: dict) -> StopRule:
        if d.get("format") != STATE_FORMAT:
            raise ValueError(f"not a saved stopping rule of format {STATE_FORMAT}: "
                             f"{d.get('format')!r}")
        rule = cls(d["pairs"], d["alpha"], d["precision"], d["lo"], d["hi"], d["null"])
        if len(d["sequences"]) != len(rule.pairs):
            raise ValueError("saved stopping rule has a sequence count unlike its pair count")
        rule.deals = int(d["deals"])
        rule.sequences = [ConfSeq.from_dict(s) for s in d["sequences"]]
        return rule


# --- user input and the fixed-size comparison ------------------------------------------------

_PRECISION = re.compile(r"\s*((?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(pp|%)?\s*")


def parse_share(text: str, option: str, upper: float = 1.0) -> float:
    """A difference of shares as the user writes it: ``"0.5pp"`` or ``"0.5%"``
    (percentage points, = 0.005) or a plain fraction ``"0.005"``; it must come to a value
    in (0, ``upper``), else a one-line error naming ``option``."""
    match = _PRECISION.fullmatch(str(text))
    value = None
    if match:
        value = float(match.group(1)) / (100.0 if match.group(2) else 1.0)
    if value is None or not 0 < value < upper:
        raise UserError(f"bad {option} {text!r}: expected e.g. 0.5pp or 0.005 "
                        f"(above 0, below {upper * 100:g}pp)")
    return value


def parse_precision(text: str) -> float:
    """``--precision``: the half-width at which a pair counts as measured (see :func:`parse_share`)."""
    return parse_share(text, "--precision")


def fixed_n_for_halfwidth(sd: float, halfwidth: float, alpha: float = 0.05) -> int:
    """Deals a fixed-size run needs for a normal interval of this half-width:
    the least ``n`` with ``z_{1-alpha/2} sd / sqrt(n) <= halfwidth``.

    For "rounds saved by stopping", compare the deals a stopped run used with the fixed-size
    run planned for the *requested* ``--precision`` (what one would run without early
    stopping): a run that stops by separating early saves the difference. A fixed-size run
    sized to the stopped run's *final* half-width is a different comparison: since the
    sequence is about 2x wider than the normal interval at the same n, that run is about
    4-5x shorter than the stopped one (the price of looking at every chunk)."""
    if not halfwidth > 0 or not sd >= 0:
        raise ValueError(f"need sd >= 0 and halfwidth > 0, got sd={sd}, halfwidth={halfwidth}")
    z = normal_quantile_two_sided(alpha)
    # the 1e-12 keeps an exact square (n = 400.0000000001 after rounding) from gaining a deal
    return max(1, math.ceil((z * sd / halfwidth) ** 2 * (1 - 1e-12)))
