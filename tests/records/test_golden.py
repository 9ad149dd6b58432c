"""Golden playthroughs: recorded rounds per variant, committed as files. Replaying the same
command must give the same lines, so any change of behaviour shows up as a diff; the
files also pass the reference checker. Regenerate on purpose with KC_SIM_REGOLD=1."""

import os
from pathlib import Path

import pytest

from kc_sim.cli import main
from kc_sim.records.check import check_file

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "classic_2p": (2, "classic"),
    "classic_4p": (4, "classic"),
    "draw_first_3p": (3, "draw_first"),
    "if_stuck_kings_3p": (3, "classic,draw=if_stuck,must_play_kings=true"),
    "two_decks_face_6p": (6, "classic,decks=2,scoring=face,layout_kings=to_corner"),
    "no_king_side_4p": (4, "classic,king_on_empty_side=false,draw=start"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_playthrough(name, tmp_path):
    players, rules = CASES[name]
    out = tmp_path / f"{name}.jsonl"
    assert main(["record", "--players", str(players), "--rounds", "4", "--seed", "2026",
                 "--rules", rules, "-o", str(out)]) == 0
    golden = GOLDEN / f"{name}.jsonl"
    if os.environ.get("KC_SIM_REGOLD"):
        golden.write_text(out.read_text())
    want, got = golden.read_text().splitlines(), out.read_text().splitlines()
    assert len(want) == len(got) == 4
    for i, (w, g) in enumerate(zip(want, got)):
        assert g == w, f"{name}: round {i} differs from the golden playthrough"
    n, problems = check_file(golden)
    assert n == 4 and problems == []
