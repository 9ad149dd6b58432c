"""Game records of a tournament (``--records K``): some of its rounds replayed with the
event log on and written as ``records.jsonl`` (docs/formats.md), for ``kc-sim check`` and
replay. The rounds are taken from the first chunk of each line-up in turn, so the first
records cover every line-up and seating.
"""

from __future__ import annotations

import math
from pathlib import Path

from kc_sim.play.recording.recorded import record_round
from kc_sim.records.format import write_records
from kc_sim.runs import RunReader, layout
from kc_sim.runs.schema import AGENT, PENALTY, RECORD_COLUMNS, seat_names
from kc_sim.tournament.plan import Plan


def _record_rows(plan: Plan, reader: RunReader, k: int):
    """The rounds to record: the first rounds of each line-up's first chunk, taken
    line-up by line-up in turn (so the first records cover every line-up and seating)."""
    firsts = {}
    for c in plan.schedule.chunks():
        firsts.setdefault(c.lineup, c.index)
    per = math.ceil(k / len(firsts))
    seats = range(plan.schedule.players)
    cols = [*RECORD_COLUMNS, *seat_names(AGENT, len(seats)), *seat_names(PENALTY, len(seats))]
    lists = []
    for li, idx in sorted(firsts.items()):
        t = reader.table(layout.ROUNDS, idx, cols).slice(0, per)
        lists.append(t.to_pylist())
    rows = []
    for i in range(per):
        rows += [lst[i] for lst in lists if i < len(lst)]
    return rows[:k]


def write_tournament_records(plan: Plan, reader: RunReader, k: int) -> Path:
    """Replay ``k`` rounds of the run with the event log on and write their game records
    (``records.jsonl``, for ``kc-sim check`` and replay). Single rounds are recorded with
    ``match`` 0 and ``round`` = their group (deal number); rounds of matches with their match
    id and round in the match."""
    by_label = dict(zip(plan.labels, plan.specs))
    faults = plan.out / layout.FAULTS_DIR

    def gen():
        for row in _record_rows(plan, reader, k):
            labels = [row[f"{AGENT}{s}"] for s in range(plan.schedule.players)]
            seat_map = [s for s in range(plan.schedule.players) if row[f"{PENALTY}{s}"] is not None]
            in_match = row["match"] is not None
            rec = record_round([by_label[x] for x in labels], row["seed"], plan.rules,
                                      dealer=seat_map.index(row["dealer"]), seat_map=seat_map,
                                      match=row["match"] if in_match else 0,
                                      round=row["match_round"] if in_match else row["group"], fault_dir=faults)
            rec["players"] = [labels[s] for s in seat_map]
            yield rec

    return write_records(plan.out / layout.RECORDS_FILE, gen())
