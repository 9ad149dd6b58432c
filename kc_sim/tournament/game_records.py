"""Game records of a tournament (``--records K``): some of its rounds replayed with the
event log on and written as ``records.jsonl`` (docs/formats.md), for ``kc-sim check`` and
replay. The rounds are taken from the first chunk of each line-up in turn, so the first
records cover every line-up and seating.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from kc_sim.play.recording.recorded import record_round
from kc_sim.records.format import write_records
from kc_sim.runs import RunReader, layout
from kc_sim.runs.schema import AGENT, PENALTY, RECORD_COLUMNS, seat_names

if TYPE_CHECKING:
    from kc_sim.tournament.plan import Plan


def row_record(row: dict, by_label: dict, rules, players: int, *, as_match: bool = True,
               fault_dir=None) -> tuple[dict, list[str], list[int]]:
    """A round part's row (a dict of :data:`~kc_sim.runs.schema.RECORD_COLUMNS`,
    ``agent_<s>`` and ``penalty_<s>``) played again from its seed by the agents of
    ``by_label`` (label -> agent spec) with the event log on: ``(record, labels by seat,
    seats dealt in)``. A round of a match is recorded with its match id and round in the
    match (unless ``as_match`` is False); a single round with ``match`` 0 and ``round`` =
    its group (deal number). The one home of turning a part's row into a game record
    (``tournament --records`` and the report's sample rounds)."""
    labels = [row[f"{AGENT}{s}"] for s in range(players)]
    seat_map = [s for s in range(players) if row[f"{PENALTY}{s}"] is not None]
    in_match = as_match and row["match"] is not None
    rec = record_round([by_label[x] for x in labels], row["seed"], rules, dealer=seat_map.index(row["dealer"]),
                       seat_map=seat_map, match=row["match"] if in_match else 0,
                       round=row["match_round"] if in_match else row["group"], fault_dir=fault_dir)
    rec["players"] = [labels[s] for s in seat_map]
    return rec, labels, seat_map


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
    id and round in the match. Each names the run's ``--seed`` (``run_seed``)."""
    by_label = dict(zip(plan.labels, plan.specs))
    faults = plan.out / layout.FAULTS_DIR

    def gen():
        for row in _record_rows(plan, reader, k):
            rec = row_record(row, by_label, plan.rules, plan.schedule.players, fault_dir=faults)[0]
            yield {**rec, "run_seed": int(plan.config.seed)}

    return write_records(plan.out / layout.RECORDS_FILE, gen())
