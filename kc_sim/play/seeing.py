"""Positions of rounds for people to look at: the position dict that
:mod:`kc_sim.records.svg` draws, built from a :class:`~kc_sim.play.game.Game`, and a game
record replayed decision by decision into the steps of a browser replay
(:mod:`kc_sim.records.replay_page`).

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
from kc_sim.game.cards import PILES, card_text, sort_hand
from kc_sim.play.game import Game
from kc_sim.records.check import parse_record
from kc_sim.records.replay_page import replay_page
from kc_sim.records.svg import card_label, position_svg
from kc_sim.records.untrusted import display_names, display_text

__all__ = ["position", "game_svg", "replay_doc", "record_page", "record_position", "result_text"]


def _seat(names, s: int) -> str:
    return f"seat {s} ({display_text(names[s])})" if names is not None and s < len(names) else f"seat {s}"


def status_text(game, names=None) -> str:
    """``turn 5: seat 1 (random) to play``, or how the round ended."""
    if game.over:
        if game.winner is not None:
            return f"round over: {_seat(names, game.winner)} went out"
        return "round over: blocked (no one could go out)"
    return f"turn {game.turns}: {_seat(names, game.seat)} to play"


def position(game, *, names=None, last: dict | None = None) -> dict:
    """The position dict of ``game`` for :func:`kc_sim.records.svg.position_svg`: every
    hand (sorted by rank, as people hold them), the piles base first, the stock size, the
    seat to act, a status line, the penalties when over and ``last`` (the highlight)."""
    k = game.players
    hands = [[card_text(c) for c in sort_hand(game.hand(s))] for s in range(k)]
    pos = {
        "turn": game.turns,
        "seat": None if game.over else game.seat,
        "hands": hands,
        "sizes": [len(h) for h in hands],
        "piles": [[card_text(c) for c in pile] for pile in game.piles],
        "stock": len(game.stock),
        "status": status_text(game, names),
        "penalties": game.penalties,
    }
    if last is None and not game.over and game.drew is not None:
        who = _seat(names, game.seat)
        last = {"text": f"{who} drew a card this turn", "full": f"{who} drew {card_label(card_text(game.drew))} this turn",
                "cards": [card_text(game.drew)], "where": f"hand {game.seat}"}
    if last:
        pos["last"] = last
    return pos


def game_svg(game, *, names=None, scores=None, show="all", title=None) -> str:
    """SVG of a game's position (``show``: ``"all"``, a seat, or None for the seat to act)."""
    return position_svg(position(game, names=names), names=names, scores=scores, dealer=game.dealer,
                        show=show, title=title)


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
    who = f"{_seat(names, game.winner)} went out" if game.winner is not None else "blocked, no winner"
    return f"{game.end}: {who}; penalties {' '.join(str(p) for p in game.penalties)}"


def _start(rec: dict, where: str):
    try:
        p = parse_record(rec, unfinished_ok=True)
        if p.players != len(p.hands):
            raise UserError(f"fields players/hands: {p.players} players but {len(p.hands)} hands")
        return Game.from_position(p.hands, p.piles, p.stock, dealer=p.dealer, rules=p.rules)
    except UserError as e:
        raise UserError(f"{where}: {e}") from None


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
    game = _start(rec, where)
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
            steps.append(position(game, names=names, last={"text": f"{_seat(names, seat)} plays {words}",
                                                           "cards": moved, "where": pile}))
        if game.over or (unfinished and t == len(turns) - 1):
            continue
        try:
            _, drew = game.play(L.STOP)
        except UserError as e:
            raise UserError(f"{where}: turn {t}: the action list ends, but stopping is illegal: {e}") from None
        words = f"{_seat(names, seat)} stops" + ("" if actions else " (no action)")
        # the card drawn is named only where its hand is shown ("full"); "text" says "a card"
        hot, where, full = [], None, words
        if drew is not None and game.rules.draw == "end":
            words, full = words + " and draws a card", full + f" and draws {card_label(card_text(drew))}"
            hot, where = [card_text(drew)], f"hand {seat}"
        if not game.over and game.drew is not None:
            who = _seat(names, game.seat)
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


def record_page(rec: dict, *, where: str = "record", title: str | None = None) -> str:
    """A self-contained HTML page replaying one game record (``kc-sim replay --html``)."""
    doc = replay_doc(rec, where=where, title=title)
    return replay_page(doc, title=f"kc-sim replay: {doc['title']}")


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
