"""Seat-balanced schedules: every seating design is balanced, and the order the agents
are named in changes nothing: not a file, not a figure."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow.parquet as pq
import pytest

from kc_sim.errors import UserError
from kc_sim.tournament.options import TournamentOptions
from kc_sim.runs import read_rounds
from kc_sim.runs.manifest import read_manifest_json
from kc_sim.tournament.run import run_tournament
from kc_sim.tournament.schedule import balanced_seatings, rotations


def _balance(seatings, k):
    pos = np.zeros((k, k), int)        # [position, seat]
    nxt = np.zeros((k, k), int)        # [position, position sitting right after it]
    for q in seatings:
        for s in range(k):
            pos[q[s], s] += 1
            nxt[q[s], q[(s + 1) % k]] += 1
    return pos, nxt[~np.eye(k, dtype=bool)]


@pytest.mark.parametrize("k", range(2, 9))
def test_balanced_seatings_put_everyone_everywhere_after_everyone(k):
    seatings = balanced_seatings(k)
    assert len(set(seatings)) == len(seatings)
    assert all(sorted(q) == list(range(k)) for q in seatings)
    pos, after = _balance(seatings, k)
    assert (pos == pos[0, 0]).all()                    # each position in each seat equally often
    assert (after == after[0]).all()                   # each ordered pair neighbours equally often
    if k <= 4:
        assert set(seatings) == set(itertools.permutations(range(k)))


def test_rotations_keep_the_clockwise_order():
    pos, after = _balance(rotations(3), 3)
    assert (pos == 1).all()
    assert sorted(after.tolist()) == [0, 0, 0, 3, 3, 3]     # 0 is always right before 1, never after
    with pytest.raises(UserError, match="--seating"):
        TournamentOptions.create("greedy,merger,random", seating="shuffled")


def _files(out):
    parts = {p.relative_to(out): pq.read_table(p) for p in sorted(out.rglob("*.parquet"))}
    return parts


@pytest.mark.parametrize("players,agents", [
    (2, ["random", "greedy", "merger"]),
    (3, ["random", "merger", "greedy"]),
    (4, ["random", "merger", "king-first", "greedy"]),
])
def test_the_order_of_agents_changes_no_file_and_no_figure(tmp_path, players, agents):
    outs = []
    orders = [agents, list(reversed(agents)), agents[1:] + agents[:1]]
    for i, order in enumerate(orders):
        out = tmp_path / f"run{i}"
        res = run_tournament(order, players=players, rounds=2400, chunk_size=600, seed=9, out=out, quiet=True,
                             jobs=1)
        outs.append((out, res))
    first, res0 = outs[0]
    want = _files(first)
    assert want and len(res0.plan.schedule.seatings) == {2: 2, 3: 6, 4: 24}[players]
    for out, res in outs[1:]:
        got = _files(out)
        assert got.keys() == want.keys()
        for name in want:
            assert got[name].equals(want[name]), name
        assert res.plan.config == res0.plan.config
        assert (res.tally.pair.S["beat"] == res0.tally.pair.S["beat"]).all()
    # the named order is kept for the caller: named[i] is the index of the i-th agent named
    for order, (out, res) in zip(orders, outs):
        assert [res.plan.config.agents[j] for j in res.plan.named] == order


def test_rotations_schedule_is_kept_for_comparison(tmp_path):
    res = run_tournament(["greedy", "merger", "random"], players=3, rounds=900, seed=3, out=tmp_path / "rot",
                         seating="rotations", quiet=True, jobs=1)
    man = read_manifest_json(res.out)
    assert man["schedule"]["seating"] == "rotations" and len(man["schedule"]["seatings"]) == 3
    df = read_rounds(res.out)
    assert sorted(df["seating"].unique().tolist()) == [0, 1, 2]
