"""Numbers with their intervals as text: the one formatter of the tables kc-sim prints.

``fmt_pct(0.523, 0.521, 0.525)`` -> ``52.3% [52.1, 52.5]``; ``fmt_pp`` a difference of
rates in percentage points with its sign, ``fmt_signed`` a difference of means with its
sign, ``fmt_num`` a plain number. A NaN (or None) value prints ``-``; a value without an
interval (no bounds, or NaN bounds) prints alone. ``width`` and ``bound_width`` pad the
value and the bounds, for the aligned columns of the terminal tables. :func:`rules_label`
names a rule set in a caption or a table; :func:`digits_for_width` picks the decimals that
show a column's narrowest interval.
"""

from __future__ import annotations

import dataclasses
import math

from kc_sim.game.rules import PRESETS, parse_rules


def digits_for_width(lo, hi, least: int = 1, most: int = 3) -> int:
    """Decimals (``least`` to ``most``) that show the narrowest of these intervals of rates,
    in percentage points, with two figures. Nash ratings of a 10M-round run span hundredths
    of a pp, and one decimal printed them as ``-0.1 [-0.1, -0.1]``, which reads as certainty."""
    widths = [100 * (h - lo_) for lo_, h in zip(lo, hi)
              if lo_ is not None and h is not None and math.isfinite(h - lo_) and h > lo_]
    if not widths:
        return least
    return min(most, max(least, math.ceil(-math.log10(min(widths))) + 1))


def _fmt(v, lo, hi, digits: int, scale: float, unit: str, sign: str = "", width: int | None = None,
         bound_width: int | None = None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    spec = f"{sign}{width or ''}.{digits}f"
    text = f"{scale * v:{spec}}{unit}"
    if lo is None or math.isnan(lo):
        return text
    bound = f"{sign}{bound_width or ''}.{digits}f"
    return f"{text} [{scale * lo:{bound}}, {scale * hi:{bound}}]"


def fmt_pct(v, lo=None, hi=None, digits: int = 1, width: int | None = None, bound_width: int | None = None) -> str:
    """``52.3% [52.1, 52.5]`` (or ``-`` for NaN)."""
    return _fmt(v, lo, hi, digits, 100, "%", width=width, bound_width=bound_width)


def fmt_pp(v, lo=None, hi=None, digits: int = 2) -> str:
    """A difference of rates in percentage points: ``+1.74 pp [+1.61, +1.87]``."""
    return _fmt(v, lo, hi, digits, 100, " pp", "+")


def fmt_signed(v, lo=None, hi=None, digits: int = 3) -> str:
    """A difference of means with its sign: ``+0.048 [+0.041, +0.054]``."""
    return _fmt(v, lo, hi, digits, 1, "", "+")


def fmt_num(v, lo=None, hi=None, digits: int = 2, width: int | None = None) -> str:
    """``2.60 [2.59, 2.62]`` (or ``-`` for NaN)."""
    return _fmt(v, lo, hi, digits, 1, "", width=width)


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ... (positions in turn order)."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def excludes(ci, value) -> int:
    """+1 when the interval ``(v, lo, hi)`` lies above ``value``, -1 below, 0 when it
    contains it (or has no bounds)."""
    _, lo, hi = ci
    if math.isnan(lo):
        return 0
    return 1 if lo > value else -1 if hi < value else 0


def rules_label(spec: str) -> str:
    """A short name of a rule set: the closest preset plus the switches that differ
    (``classic``, ``draw_first``, ``classic,draw=start,scoring=face``)."""
    rs = parse_rules(spec)
    best = None
    for preset in PRESETS:
        base = parse_rules(preset)
        diff = []
        for f in dataclasses.fields(rs):
            v, b = getattr(rs, f.name), getattr(base, f.name)
            if v != b:
                diff.append(f"{f.name}={str(v).lower() if isinstance(v, bool) else v}")
        if best is None or len(diff) < len(best[1]):
            best = (preset, diff)
    return ",".join([best[0], *best[1]])
