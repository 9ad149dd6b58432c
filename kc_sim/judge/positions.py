"""A checked game record replayed into what the judge evaluates: the decisions and the draws.

A *decision* is one action of the seat to act: every placement and pile move of a turn, and
the stop that ends it (records leave it implicit: a turn's action list ends where the player
stopped; a turn ended by the last card has none). The judge compares single actions, not
whole turns: a record lists actions, and the plans of a turn (every order of every
sequence of plays) grow combinatorially, while the legal actions of one point are a few
dozen at most. A decision with one legal action (often: stop, with nothing to play) is
*forced*.

A *draw* is a card that came to a seat's hand from the stock: at the stop (``draw=end``) or
as its next turn opens (``draw=start``, ``if_stuck``). The draw of the first turn's opening
(``draw=start``) is part of the deal.

Records are read with :func:`kc_sim.records.check.iter_records` (limits on untrusted text)
and each is replayed through the reference (:func:`kc_sim.records.check.check_record`)
before use: a record that is not valid is refused with one line naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kc_sim.core import layout as L
from kc_sim.errors import UserError
from kc_sim.play.seeing import start_position
from kc_sim.records.check import check_record, iter_records, parse_record
from kc_sim.records.untrusted import display_names

__all__ = ["Decision", "Draw", "Replayed", "check_one", "read_checked", "replay"]


@dataclass
class Decision:
    """One action of one seat: the position before it (the whole round state; the judge uses
    only what the seat may see unless asked for hindsight), the legal actions, the action
    played."""

    index: int                 # the decision's number in the round (every seat's, from 0)
    turn: int                  # the record's turn index (from 0)
    seat: int
    state: np.ndarray
    legal: list[int]
    chosen: int

    @property
    def forced(self) -> bool:
        return len(self.legal) == 1


@dataclass
class Draw:
    """A card drawn by a seat, and the position right after it was drawn (``step``: that
    position's number in the replay, :func:`kc_sim.play.seeing.replay_doc`'s ``steps``,
    where step ``d`` is the position before decision ``d``)."""

    turn: int
    seat: int
    card: int
    state: np.ndarray
    step: int = 0


@dataclass
class Replayed:
    """A record replayed: its header, the position after the deal, every decision and draw,
    and the result (``winner`` None: blocked; ``end`` "unfinished" for a round stopped early)."""

    index: int
    line: int
    rec: dict
    names: list[str]
    players: int
    rules: object
    start: np.ndarray
    decisions: list[Decision] = field(default_factory=list)
    draws: list[Draw] = field(default_factory=list)
    end: str = "unfinished"
    winner: int | None = None
    penalties: list[int] | None = None


def check_one(rec: dict, i: int, n: int, where) -> dict:
    """``rec`` once checked against the reference (record ``i``, line ``n`` of ``where``), or a
    one-line UserError naming it. A round stopped early (kc-sim play quit mid-round:
    ``result.end`` "unfinished") is checked as the checker checks a round a fault stopped:
    every turn legal, the round not over."""
    stopped = isinstance(rec.get("result"), dict) and rec["result"].get("end") == "unfinished"
    problems = check_record({**rec, "fault": rec.get("fault")} if stopped else rec, i, n)
    if problems:
        raise UserError(f"{where}:{n}: record {i} is not a valid round ({problems[0].message}): check the file "
                        "with kc-sim check")
    return rec


def read_checked(path, rounds=None) -> list[tuple[int, int, dict]]:
    """``(index, line, record)`` for the records of ``path`` chosen by ``rounds`` (indices
    counting from 0; None: every record), each checked against the reference. A file that
    cannot be read, a malformed line or a record that does not replay is a one-line
    UserError naming the file and line; an index past the file's end too."""
    path = Path(path)
    wanted = None if rounds is None else set(rounds)
    out = []
    count = 0
    for i, (n, rec) in enumerate(iter_records(path, unfinished_ok=True)):
        count += 1
        if wanted is not None and i not in wanted:
            continue
        out.append((i, n, check_one(rec, i, n, path)))
    if count == 0:
        raise UserError(f"{path}: no game records: expected a file of kc-sim/game/1 records (JSON Lines)")
    if wanted is not None and max(wanted) >= count:
        raise UserError(f"bad --round {max(wanted)}: the file has {count} record(s), counted from 0")
    return out


def replay(index: int, line: int, rec: dict) -> Replayed:
    """Replay a checked record with the compiled core, keeping every decision and draw."""
    game = start_position(rec)
    p = parse_record(rec, unfinished_ok=True)
    names = display_names(rec["players"])
    out = Replayed(index, line, rec, names, game.players, game.rules, game.state.copy())
    draw_end = game.rules.draw == "end"
    k = 0
    for t, turn in enumerate(p.turns):
        seat = game.seat
        for a in turn.actions:
            out.decisions.append(Decision(k, t, seat, game.state.copy(), game.legal_actions(), a))
            k += 1
            game.play(a)
        if game.over or (p.end == "unfinished" and t == len(p.turns) - 1):
            continue
        out.decisions.append(Decision(k, t, seat, game.state.copy(), game.legal_actions(), L.STOP))
        k += 1
        _, drew = game.play(L.STOP)
        if draw_end and drew is not None:
            out.draws.append(Draw(t, seat, drew, game.state.copy(), k))
        elif not draw_end and not game.over and game.drew is not None:
            out.draws.append(Draw(t + 1, game.seat, game.drew, game.state.copy(), k))
    if game.over:
        out.end, out.winner, out.penalties = game.end, game.winner, list(game.penalties)
    return out
