"""Helpers for tests of faults: the game record a fault saved, replayed to the fault."""

import json
from pathlib import Path

from kc_sim.game.rules import parse_rules
from kc_sim.play.table.game import Game


def replay_fault_record(path: Path) -> tuple[dict, Game]:
    """Read the record of a faulty round and replay it up to the fault, which is in its
    last turn: the round is not over and the faulty seat is to act. Returns (record, game)."""
    rec = json.loads(Path(path).read_text().splitlines()[0])
    assert rec["fault"]["turn"] == len(rec["turns"]) - 1
    assert rec["result"]["end"] == "unfinished"
    rules = parse_rules(",".join(f"{k}={str(v).lower()}" for k, v in rec["rules"].items()))
    g = Game.from_position(rec["hands"], [rec["table"].get(p, []) for p in ("N", "E", "S", "W", "NE", "SE", "SW",
                                                                           "NW")],
                           rec["stock"], rec["dealer"], rules)
    for t, turn in enumerate(rec["turns"]):
        assert g.seat == turn["seat"]
        for text in turn["actions"]:
            g.play(text)
        if t < len(rec["turns"]) - 1:
            g.play("stop")
    assert not g.over and g.seat == rec["fault"]["seat"]
    return rec, g
