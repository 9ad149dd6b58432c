"""A game record replayed decision by decision into positions for people to look at: the
steps of a browser replay (:mod:`kc_sim.picture.replay_page`), each a position dict as
:mod:`kc_sim.play.table.position` builds it from a :class:`~kc_sim.play.table.game.Game`.

A record is replayed with kc-sim's own :class:`Game`, rebuilt with ``Game.from_position``
from the record's hands, table, stock and dealer (as ``kc-sim replay`` does). A *step* is
one decision: step 0 is the position before the first action; every placement, pile move
and stop is one more step (a stop closes the turn: the draw under ``draw=end``, then the
next seat's turn opens, with its draw under ``draw=start`` or ``if_stuck``). A turn that
ends with the player going out has no stop. An unfinished record (``kc-sim play`` quit
mid-round) stops where the record stops.
"""

from __future__ import annotations

from kc_sim.core import layout as L
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.cards import PILES, card_text
from kc_sim.play.table.game import Game
from kc_sim.play.table.position import position, seat_label
from kc_sim.picture.svg import card_label
from kc_sim.records.check import parse_record
from kc_sim.records.untrusted import display_names

__all__ = ["replay_doc", "record_position", "record_turn", "result_text", "start_position"]


def describe(game, a: int) -> tuple[str, list[str], str | None]:
    """What action ``a`` does in ``game`` (before it is applied), the cards it moves and the
    pile they go to."""
    piles = game.piles
    if a == L.STOP:
        return "stop", [], None
    if a < L.MOVE_BASE:
        c, p = divmod(a, 8)
        top = piles[p]
        where = f"onto {card_label(card_text(top[-1]))}" if top else "into the empty pile"
        return f"{action_text(a)} ({card_label(card_text(c))} {where} at {PILES[p]})", [card_text(c)], PILES[p]
    s, p = divmod(a - L.MOVE_BASE, 8)
    moving = [card_text(c) for c in piles[s]]
    where = f"onto {card_label(card_text(piles[p][-1]))}" if piles[p] else "into the empty corner"
    return f"{action_text(a)} (pile {PILES[s]} {where} at {PILES[p]})", moving, PILES[p]


def result_text(game, names) -> str:
    if not game.over:
        return "not over"
    who = f"{seat_label(names, game.winner)} went out" if game.winner is not None else "blocked, no winner"
    return f"{game.end}: {who}; penalties {' '.join(str(p) for p in game.penalties)}"


def start_position(rec: dict) -> Game:
    """The record's round right after the layout, its first turn open (rebuilt with
    ``Game.from_position`` from its hands, table, stock and dealer). A record that cannot
    be is a UserError; the caller puts where the record is in front of its message."""
    p = parse_record(rec, unfinished_ok=True)
    if p.players != len(p.hands):
        raise UserError(f"fields players/hands: {p.players} players but {len(p.hands)} hands")
    return Game.from_position(p.hands, p.piles, p.stock, dealer=p.dealer, rules=p.rules)


def record_turn(where: str, t: int, turn, game) -> tuple[list, list[int]]:
    """Turn ``t`` of a game record checked against the position it is replayed on: an object
    with ``seat``, ``drew`` and ``actions``, the round not yet over, played by the seat to
    act. Returns its action texts and their ids; a bad turn is a UserError naming ``where``."""
    if not isinstance(turn, dict) or any(k not in turn for k in ("seat", "drew", "actions")):
        raise UserError(f"{where}: field turns[{t}]: expected an object with seat, drew, actions")
    if game.over:
        raise UserError(f"{where}: turn {t}: the round already ended ({game.end}); the record goes on")
    if turn["seat"] != game.seat:
        raise UserError(f"{where}: turn {t}: the record has seat {turn['seat']} play, but it is seat "
                        f"{game.seat}'s turn (check the file with kc-sim check)")
    actions = turn["actions"] if isinstance(turn["actions"], list) else []
    ids = []
    for j, text in enumerate(actions):
        try:
            ids.append(parse_action(text))
        except UserError as e:
            raise UserError(f"{where}: field turns[{t}].actions[{j}]: {e}") from None
    return actions, ids


def replay_doc(rec: dict, *, where: str = "record", title: str | None = None) -> dict:
    """Replay a game record decision by decision; returns the replay page's data: seat
    names, dealer, rules, the position of every step, where each turn starts, and the
    result (replayed, and whether it matches the record). Raises UserError for a record
    that cannot be replayed (an illegal action, a turn by the wrong seat)."""
    try:
        game = start_position(rec)
    except UserError as e:
        raise UserError(f"{where}: {e}") from None
    names = display_names(rec.get("players", []))       # shown cut and cleaned: a name is not a payload
    if len(names) != game.players:
        names = [f"seat {s}" for s in range(game.players)]
    turns = rec.get("turns")
    if not isinstance(turns, list):
        raise UserError(f"{where}: field turns: expected a list of turn objects")
    result = rec.get("result") if isinstance(rec.get("result"), dict) else {}
    unfinished = result.get("end") == "unfinished"
    steps = [position(game, names=names)]
    turn_starts = []
    for t, turn in enumerate(turns):
        actions, ids = record_turn(where, t, turn, game)
        turn_starts.append(len(steps) - 1)
        seat = game.seat
        for text, a in zip(actions, ids):
            words, moved, pile = describe(game, a)
            try:
                if a == L.STOP:
                    raise UserError("stop inside an action list")
                game.play(a)
            except UserError as e:
                raise UserError(f"{where}: turn {t}: action {text}: {e} (check the file with kc-sim check)") from None
            steps.append(position(game, names=names, last={"text": f"{seat_label(names, seat)} plays {words}",
                                                           "cards": moved, "where": pile}))
        if game.over or (unfinished and t == len(turns) - 1):
            continue
        try:
            _, drew = game.play(L.STOP)
        except UserError as e:
            raise UserError(f"{where}: turn {t}: the action list ends, but stopping is illegal: {e}") from None
        words = f"{seat_label(names, seat)} stops" + ("" if actions else " (no action)")
        # the card drawn is named only where its hand is shown ("full"); "text" says "a card"
        hot, where, full = [], None, words
        if drew is not None and game.rules.draw == "end":
            words, full = words + " and draws a card", full + f" and draws {card_label(card_text(drew))}"
            hot, where = [card_text(drew)], f"hand {seat}"
        if not game.over and game.drew is not None:
            who = seat_label(names, game.seat)
            words, full = words + f"; {who} draws a card", full + f"; {who} draws {card_label(card_text(game.drew))}"
            hot, where = [card_text(game.drew)], f"hand {game.seat}"
        steps.append(position(game, names=names, last={"text": words, "full": full, "cards": hot, "where": where}))
    if unfinished:
        verdict, matches = f"unfinished record: the game was stopped after {len(turns)} turns", None
    elif not game.over:
        verdict, matches = f"the record ends after {len(turns)} turns but the round is not over", False
    else:
        same = (result.get("end") == game.end and result.get("winner") == game.winner
                and result.get("penalties") == game.penalties)
        verdict, matches = result_text(game, names) + (" (as recorded)" if same else " (DIFFERS from the record)"), same
    return {
        "title": title or f"seed {rec.get('seed')}, match {rec.get('match')}, round {rec.get('round')}",
        "names": names, "dealer": game.dealer, "players": game.players,
        "rules": str(game.rules.spec()), "seed": rec.get("seed"),
        "turn_starts": turn_starts, "steps": steps, "result": verdict, "matches": matches,
    }


def record_position(rec: dict, turn: int | None = None, *, where: str = "record") -> tuple[dict, dict]:
    """(replay doc, the position before turn ``turn`` (from 1); None or past the last turn:
    the final position)."""
    doc = replay_doc(rec, where=where)
    starts = doc["turn_starts"]
    if turn is None or turn > len(starts):
        return doc, doc["steps"][-1]
    if turn < 1:
        raise UserError(f"bad --turn {turn}: turns count from 1 (the record has {len(starts)})")
    return doc, doc["steps"][starts[turn - 1]]
