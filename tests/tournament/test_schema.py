"""The column schema (kc_sim.runs.schema) is the file: every part has exactly its
columns, in its order, with its types; and labels lose their copy number and module."""

from __future__ import annotations

import pyarrow as pa
import pytest

from kc_sim.play.agents.names import base_label
from kc_sim.tournament.plan import labels_of
from kc_sim.tournament.schedule import balanced_seatings
from kc_sim.runs.schema import (
    MATCH_COLUMNS,
    ROUND_COLUMNS,
    column_names,
    matches_table,
    rounds_table,
)
from kc_sim.tournament.worker import ChunkTask, RunSetup, run_chunk


def _types_match(columns, table: pa.Table, k: int) -> None:
    assert table.schema.names == column_names(columns, k)
    for c in columns:
        for name in c.names(k):
            t = table.schema.field(name).type
            if c.arrow == "dictionary":
                assert pa.types.is_dictionary(t), name
            else:
                assert str(t) == c.arrow, (name, t)
            if not c.nullable and c.arrow != "dictionary":
                assert table.column(name).null_count == 0, name


@pytest.mark.parametrize("players", [2, 3])
def test_parts_follow_the_schema(players):
    names = ("random",) * players
    seatings = balanced_seatings(players)
    setup = RunSetup(seed=5, rules="classic", mode="matches", groups_per_lineup=3, n_agents=players, seatings=seatings)
    task = ChunkTask(index=0, lineup=0, agents=tuple(range(players)), names=names, start=0, stop=3, setup=setup)
    res = run_chunk(task)
    labels = [f"a{i}" for i in range(players)]
    rounds = rounds_table(res.rounds, 0, 0, range(players), seatings, labels)
    matches = matches_table(res.matches, 0, 0, range(players), seatings, labels)
    _types_match(ROUND_COLUMNS, rounds, players)
    _types_match(MATCH_COLUMNS, matches, players)
    S = len(seatings)
    assert rounds.column("match").null_count == 0 and matches.num_rows == 3 * S
    assert sorted(set(matches.column("match").to_pylist())) == list(range(3 * S))   # (group * S + seating)
    setup = RunSetup(seed=5, rules="classic", mode="rounds", groups_per_lineup=2, n_agents=players, seatings=seatings)
    single = run_chunk(ChunkTask(index=1, lineup=0, agents=tuple(range(players)), names=names, start=0, stop=2,
                                 setup=setup))
    t = rounds_table(single.rounds, 1, 0, range(players), seatings, labels)
    _types_match(ROUND_COLUMNS, t, players)
    assert t.column("match").null_count == t.num_rows == 2 * S
    # seat s of seating q holds line-up position q[s]
    for row in t.to_pylist():
        q = seatings[row["seating"]]
        assert [row[f"agent_{s}"] for s in range(players)] == [labels[q[s]] for s in range(players)]


def test_base_label():
    assert base_label("greedy#2") == "greedy"
    assert base_label("pkg.mod:Mine") == "Mine"
    assert base_label("agents/x.py:Mine#3") == "Mine"
    assert base_label("no#digits") == "no#digits"

    class Spec:
        def __init__(self, name):
            self.name = name
    assert labels_of([Spec("greedy"), Spec("greedy"), Spec("a/b.py:X")]) == ["greedy", "greedy#2", "X"]
