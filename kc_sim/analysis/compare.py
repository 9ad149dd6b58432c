"""Two runs on the same deals, compared round by round (the ``rules`` findings).

:func:`compare_runs` streams the parts of two runs side by side: when they played the
same deals in the same order and seating, it says whether the play or the penalties are
identical and how often the result of a round (its winner, or a block) changed, as a
rate clustered by deal, so a change of rules can be paired deal by deal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kc_sim.analysis import scan
from kc_sim.analysis.run_stats import RunStats
from kc_sim.runs import RunReader, layout
from kc_sim.stats.sums import Sums, deal_index


@dataclass
class Paired:
    """Two runs compared round by round (see :func:`compare_runs`)."""

    same_deals: bool
    changed: tuple | None = None      # rate of rounds whose winner (or block) differs
    same_result: bool = False         # no round changed its winner or block
    same_turns: bool = False          # every round has the same turns and actions
    same_penalty: bool = False        # every round has the same penalties


def seating_column(reader: RunReader) -> str:
    """``seating`` (format 2), or ``rotation`` in runs of kc-sim/tournament/1 (cyclic
    rotations; its values are the seating indices of the ``rotations`` schedule)."""
    import pyarrow.parquet as pq  # lazy: as the rest of the scan
    first = reader.parts(layout.ROUNDS)[:1]
    return "rotation" if first and "rotation" in pq.read_schema(first[0]).names else "seating"


def _iter_rows(reader: RunReader, columns, players, index, seating: str):
    """The rows of a run's parts, one part at a time, as arrays (for :func:`compare_runs`)."""
    for t in reader.tables(layout.ROUNDS, columns):
        out = {**scan.round_arrays(t, players, index), "seating": scan.int_column(t, seating, 0)}
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
    seed, deal numbers, seatings, line-ups and agent codes, round by round)? When they
    do, also the rate of rounds whose result (winner or block) differs between the two,
    clustered by deal, and whether the play or the penalties are identical. Streams both
    runs' parts side by side."""
    if not (s1.n == s2.n and s1.players == s2.players and s1.seed == s2.seed and s1.width == s2.width):
        return Paired(False)
    k = s1.players
    streams = []
    for s in (s1, s2):
        index = {name: i for i, name in enumerate(s.labels)}
        reader = RunReader(s.path)
        seating = seating_column(reader)
        cols = scan.round_columns(k, extra=(seating,))
        streams.append(_iter_rows(reader, cols, k, index, seating))
    nb = max(s1.rounds_.n_batches, s2.rounds_.n_batches)
    changed = Sums(1, ("changed",), nb, s1.width > 1)
    same_turns = same_pen = True
    for a, b in _aligned(*streams):
        if a is None:
            return Paired(False)
        if not all(np.array_equal(a[c], b[c]) for c in ("group", "seating", "lineup", "agent")):
            return Paired(False)
        same_turns = same_turns and np.array_equal(a["turns"], b["turns"]) and np.array_equal(a["actions"], b["actions"])
        same_pen = same_pen and np.array_equal(a["penalty"], b["penalty"])
        other = (a["winner"] != b["winner"]) | (a["blocked"] != b["blocked"])
        for lu, sub in scan.by_lineup({"group": a["group"], "lineup": a["lineup"], "other": other}):
            deals = deal_index(sub["group"], s1.width)
            changed.grow(1, int(deals.ub.max()) + 1)
            changed.add(np.zeros(len(sub["group"]), np.int64), deals, deals.lg, {"changed": sub["other"]}, [0])
    changed.finish()
    n_changed = changed.total("changed")
    return Paired(True, changed.rate("changed"), n_changed == 0, same_turns, same_pen)
