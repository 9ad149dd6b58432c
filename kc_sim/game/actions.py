"""Action ids and their text form (docs/formats.md, Action ids and text).

Ids: ``c * 8 + p`` places card c on pile p (0..415); ``416 + s * 8 + p`` moves the
whole side pile s onto pile p (416..447); ``448`` stops. Text: ``7H>E`` places,
``N>E`` moves a pile, ``stop`` stops.
"""

from __future__ import annotations

from kc_sim.core.layout import MOVE_BASE, N_ACTIONS, STOP
from kc_sim.errors import UserError
from kc_sim.game.cards import PILES, card_text, parse_card, parse_pile

ACTION_HELP = "expected CARD>PILE (7H>E), SIDE>PILE (N>E, W>NW) or stop"


def place_id(card: int, pile: int) -> int:
    """Action id placing ``card`` on ``pile``."""
    return card * 8 + pile


def move_id(side: int, pile: int) -> int:
    """Action id moving the whole side pile ``side`` onto ``pile``."""
    return MOVE_BASE + side * 8 + pile


def action_text(a: int) -> str:
    """Record text of action id ``a``: ``7H>E`` (place), ``N>E`` (move a side pile), ``stop``."""
    a = int(a)
    if 0 <= a < MOVE_BASE:
        return f"{card_text(a // 8)}>{PILES[a % 8]}"
    if MOVE_BASE <= a < STOP:
        return f"{PILES[(a - MOVE_BASE) // 8]}>{PILES[a % 8]}"
    if a == STOP:
        return "stop"
    raise UserError(f"bad action id {a}: expected 0 to {N_ACTIONS - 1}")


def parse_action(text: str) -> int:
    """Action id from its record text (inverse of :func:`action_text`); raises UserError."""
    t = str(text).strip()
    if t.lower() == "stop":
        return STOP
    if t.count(">") != 1:
        raise UserError(f"bad action {text!r}: {ACTION_HELP}")
    left, right = (s.strip() for s in t.split(">"))
    try:
        pile = parse_pile(right)
    except UserError:
        raise UserError(f"bad action {text!r}: {right!r} is not a pile (N E S W NE SE SW NW)") from None
    if left.upper() in PILES:
        side = parse_pile(left)
        if side >= 4:
            raise UserError(f"bad action {text!r}: corner piles never move; a move starts from a side N E S W")
        return move_id(side, pile)
    try:
        return place_id(parse_card(left), pile)
    except UserError:
        raise UserError(f"bad action {text!r}: {left!r} is neither a card nor a side; {ACTION_HELP}") from None
