"""Game records: one round as one JSON object, written as JSON Lines (docs/formats.md, Game records).

A record holds the deal (hands as dealt, the table after the layout, the stock),
every turn (seat, card drawn, actions in order) and the result, enough to replay and
check the round with ``kc-sim check``.
"""

from __future__ import annotations

import json
from pathlib import Path

from kc_sim.core import layout as L
from kc_sim.core.loop import (
    LOG_CLOSE,
    LOG_TURN,
)
from kc_sim.game.actions import action_text
from kc_sim.game.cards import PILES, card_text
from kc_sim.game.rules import RuleSet
from kc_sim.support.atomic import atomic_file

FORMAT = "kc-sim/game/1"


def table_dict(piles) -> dict:
    """Non-empty piles by name, base first, as card texts."""
    return {PILES[p]: [card_text(c) for c in pile] for p, pile in enumerate(piles) if pile}


def turns_from_log(log) -> list[dict]:
    """Turn dicts from the core's event log (see ``kc_sim.core.loop``)."""
    turns: list[dict] = []
    for ev in (int(x) for x in log):
        if ev >= LOG_CLOSE:
            turns[-1]["drew"] = card_text(ev - LOG_CLOSE - 1) if ev > LOG_CLOSE else None
        elif ev >= LOG_TURN:
            turns.append({"seat": ev - LOG_TURN, "drew": None, "actions": []})
        elif ev != L.STOP:
            turns[-1]["actions"].append(action_text(ev))
    return turns


def make_record(*, rules: RuleSet, names, seed: int, initial: dict, turns: list[dict], end: str,
                winner, penalties, match: int = 0, round: int = 0) -> dict:
    """A game record with every field docs/formats.md requires, from a round's parts.
    ``initial`` is a snapshot (dealer, hands, piles, stock) taken right after the deal."""
    return {
        "format": FORMAT,
        "rules": rules.round_dict(),
        "seed": int(seed),
        "match": int(match),
        "round": int(round),
        "players": list(names),
        "dealer": int(initial["dealer"]),
        "hands": [[card_text(c) for c in h] for h in initial["hands"]],
        "table": table_dict(initial["piles"]),
        "stock": [card_text(c) for c in initial["stock"]],
        "turns": turns,
        "result": {"end": end, "winner": winner, "penalties": [int(p) for p in penalties]},
    }


def write_records(path, records) -> Path:
    """Write records as JSON Lines (one round per line); returns the path. The file is
    written under a hidden temporary name and renamed into place, so a process killed
    while writing (a worker stopped after another one's fault) leaves no partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return path
