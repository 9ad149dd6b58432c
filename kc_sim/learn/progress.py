"""What both methods of ``kc-sim train`` write beside the model and say while they train: the
paths of the learning curve and its figure, a duration for a progress line, and where progress
lines go."""

from __future__ import annotations

import math
import sys
from pathlib import Path

__all__ = ["curve_paths", "duration", "main_log"]


def curve_paths(out) -> tuple[Path, Path]:
    """(the curve's parquet, its figure) beside the model ``out``."""
    out = Path(out)
    stem = out.with_suffix("") if out.suffix == ".zip" else out
    return Path(f"{stem}.curve.parquet"), Path(f"{stem}.curve.png")


def duration(s: float) -> str:
    """``1h 05m`` or ``4m 07s`` (``?`` for an unknown time)."""
    if not math.isfinite(s):
        return "?"
    s = int(round(s))
    return f"{s // 3600}h {s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m {s % 60:02d}s"


def main_log(text: str) -> None:
    """Progress lines to stderr (the CLI's results go to stdout)."""
    print(text, file=sys.stderr, flush=True)
