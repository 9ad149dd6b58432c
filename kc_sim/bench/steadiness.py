"""How steady the machine's speed was while ``kc-sim bench`` ran.

Rule: a fixed piece of work (a pure-Python loop of :data:`PROBE_STEPS` steps, about 90 ms
on the development machine) is timed :data:`PROBE_REPEATS` times at the start of the bench,
between its parts and at its end, and each point keeps the median of its times (a single
probe catches hiccups of a few ms: 12-ms probes on a quiet machine ranged 11-23 ms, 90-ms
ones 87-88 ms). The spread of the points says whether the absolute figures (rounds per
second, seconds) were taken on a machine running at one speed: on a shared machine other
work only ever adds time, in bursts, and a virtual machine's first hour after boot ran the
same loop at 0.084-0.18 s from one second to the next (README, speed table). Ratios are
taken within batches and hold either way; absolute figures measured in such a burst are low,
and :func:`note` says so under the targets.
"""

from __future__ import annotations

import statistics
import time

from kc_sim.bench.spread import spread_of, with_spread

PROBE_STEPS = 3_000_000
PROBE_REPEATS = 3
#: a spread (slowest probe over fastest) above this gets a note under the targets
UNSTEADY = 1.2


def probe_ms() -> float:
    """Milliseconds of wall time of the fixed loop, once."""
    t = time.perf_counter()
    s = 0
    for i in range(PROBE_STEPS):
        s += i * i
    return (time.perf_counter() - t) * 1000.0


class Probes:
    """The probe times of one bench: :meth:`take` at each point, :meth:`figures` at the end."""

    def __init__(self):
        self.ms: list[float] = []          # one median per point

    def take(self) -> None:
        self.ms.append(statistics.median(probe_ms() for _ in range(PROBE_REPEATS)))

    def figures(self) -> dict:
        """``machine_probe_ms`` (median, min and max over the points) and
        ``machine_probe_spread`` (the slowest point over the fastest; 1 at one speed)."""
        return {**with_spread("machine_probe_ms", self.ms, digits=1),
                "machine_probe_spread": round(max(self.ms) / min(self.ms), 2)}


def note(figures: dict) -> str | None:
    """One line for under the targets when the probes of ``figures`` spread more than
    :data:`UNSTEADY` (None otherwise, or when the bench took no probe)."""
    spread = figures.get("machine_probe_spread")
    if spread is None or spread <= UNSTEADY:
        return None
    lo, hi = spread_of(figures, "machine_probe_ms")
    return (f"note: the machine's speed varied during this run (a fixed loop took {lo:.0f}-{hi:.0f} ms, "
            f"{spread:.2f}x): absolute figures may be low; the ratios, taken within batches, hold. "
            "Rerun when the machine is quiet.")
