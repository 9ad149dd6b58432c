"""A game's position as the picture draws it (:mod:`kc_sim.picture.svg`): the position dict
built from a :class:`~kc_sim.play.table.game.Game` (every hand sorted as people hold them, the
piles, the stock size, who is to act, a status line), and its SVG (``Game._repr_svg_``,
``kc-sim render``). It reads a game through its public properties only, so the game module
imports it without a cycle; a record replayed step by step (:mod:`kc_sim.play.seeing`) builds
its positions here too."""

from __future__ import annotations

from kc_sim.game.cards import card_text, sort_hand
from kc_sim.picture.svg import card_label, position_svg
from kc_sim.records.untrusted import display_text

__all__ = ["position", "game_svg", "seat_label", "status_text"]


def seat_label(names, s: int) -> str:
    """``seat 1 (random)``: a seat with its cleaned name when names are given."""
    return f"seat {s} ({display_text(names[s])})" if names is not None and s < len(names) else f"seat {s}"


def status_text(game, names=None) -> str:
    """``turn 5: seat 1 (random) to play``, or how the round ended."""
    if game.over:
        if game.winner is not None:
            return f"round over: {seat_label(names, game.winner)} went out"
        return "round over: blocked (no one could go out)"
    return f"turn {game.turns}: {seat_label(names, game.seat)} to play"


def position(game, *, names=None, last: dict | None = None) -> dict:
    """The position dict of ``game`` for :func:`kc_sim.picture.svg.position_svg`: every
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
        who = seat_label(names, game.seat)
        last = {"text": f"{who} drew a card this turn", "full": f"{who} drew {card_label(card_text(game.drew))} this turn",
                "cards": [card_text(game.drew)], "where": f"hand {game.seat}"}
    if last:
        pos["last"] = last
    return pos


def game_svg(game, *, names=None, scores=None, show="all", title=None) -> str:
    """SVG of a game's position (``show``: ``"all"``, a seat, or None for the seat to act)."""
    return position_svg(position(game, names=names), names=names, scores=scores, dealer=game.dealer,
                        show=show, title=title)
