"""A figure with its spread: the median of repeated measurements, with their min and max.

A single measurement on a shared machine says little: other work only ever adds time, in
bursts. ``kc-sim bench`` repeats what it times and gives each figure as its median, with
the min and max beside it (``<key>_min``, ``<key>_max``); a ratio is taken per repeat
between measurements made back to back, so the conditions of one repeat cancel out.
"""

from __future__ import annotations

import statistics

SUFFIXES = ("_min", "_max")


def with_spread(key: str, values, digits: int = 3) -> dict:
    """``{key: median, key_min: min, key_max: max}`` of ``values`` (rounded to ``digits``)."""
    values = [float(v) for v in values]
    return {key: round(statistics.median(values), digits), f"{key}_min": round(min(values), digits),
            f"{key}_max": round(max(values), digits)}


def spread_of(figures: dict, key: str) -> tuple[float, float] | None:
    """``(min, max)`` of ``key`` in ``figures`` when it was measured with its spread."""
    lo, hi = (figures.get(key + s) for s in SUFFIXES)
    return None if lo is None or hi is None else (lo, hi)


def is_spread_key(figures: dict, key: str) -> bool:
    """True for the ``_min``/``_max`` companions of a figure in ``figures``."""
    return any(key.endswith(s) and key[: -len(s)] in figures for s in SUFFIXES)
