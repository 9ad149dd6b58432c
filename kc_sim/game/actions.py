"""Action ids and their text form (docs/formats.md, Action ids and text).

This module is the one home of the action ids; the compiled core takes the same
functions through ``kc_sim.core.ids`` and the constants through ``kc_sim.core.layout``.

=============  ===========================  ==================================
ids            action                       encode / decode
=============  ===========================  ==================================
0 .. 415       place card c on pile p       ``place_id(c, p)`` = c * 8 + p;
                                            ``id_card(a)``, ``id_pile(a)``
416 .. 447     move the whole side pile s   ``move_id(s, p)`` = 416 + s * 8 + p;
               onto pile p                  ``id_side(a)``, ``id_pile(a)``
448            stop                         ``STOP``
=============  ===========================  ==================================

Piles are 0..3 the sides N E S W and 4..7 the corners NE SE SW NW
(``kc_sim.game.cards``). Text: ``7H>E`` places, ``N>E`` moves a pile, ``stop`` stops.
"""

from __future__ import annotations

from kc_sim.errors import UserError
from kc_sim.game.cards import (
    FIRST_CORNER,
    N_CARDS,
    N_PILES,
    N_SIDES,
    PILES,
    card_text,
    parse_card,
    parse_pile,
)

#: ids are card-major with the pile in the low bits: ``a >> PILE_BITS`` is the card
PILE_BITS = 3
assert N_PILES == 1 << PILE_BITS
#: first pile-move id: after every (card, pile) placement
MOVE_BASE = N_CARDS * N_PILES
#: the stop id: after every (side, pile) move
STOP = MOVE_BASE + N_SIDES * N_PILES
N_ACTIONS = STOP + 1
assert (MOVE_BASE, STOP, N_ACTIONS) == (416, 448, 449)

ACTION_HELP = "expected CARD>PILE (7H>E), SIDE>PILE (N>E, W>NW) or stop"


# The id functions below are plain arithmetic so that the compiled core can compile
# them as they are (kc_sim.core.ids); they do not check their arguments.

def place_id(card: int, pile: int) -> int:
    """Action id placing ``card`` on ``pile``."""
    return card * N_PILES + pile


def move_id(side: int, pile: int) -> int:
    """Action id moving the whole side pile ``side`` onto ``pile``."""
    return MOVE_BASE + side * N_PILES + pile


def id_card(a: int) -> int:
    """The card of placement id ``a``."""
    return a >> PILE_BITS


def id_side(a: int) -> int:
    """The side moved by pile-move id ``a``."""
    return (a - MOVE_BASE) >> PILE_BITS


def id_pile(a: int) -> int:
    """The target pile of placement or pile-move id ``a`` (MOVE_BASE is a multiple of 8)."""
    return a & (N_PILES - 1)


def is_place(a: int) -> bool:
    """Is ``a`` a placement id (given 0 <= a)?"""
    return a < MOVE_BASE


def is_move(a: int) -> bool:
    """Is ``a`` a pile-move id?"""
    return MOVE_BASE <= a < STOP


def is_corner(p: int) -> bool:
    """Is pile ``p`` a corner (NE SE SW NW)?"""
    return p >= FIRST_CORNER


def is_side(p: int) -> bool:
    """Is pile ``p`` a side (N E S W)?"""
    return p < FIRST_CORNER


def action_text(a: int) -> str:
    """Record text of action id ``a``: ``7H>E`` (place), ``N>E`` (move a side pile), ``stop``."""
    a = int(a)
    if 0 <= a < MOVE_BASE:
        return f"{card_text(id_card(a))}>{PILES[id_pile(a)]}"
    if is_move(a):
        return f"{PILES[id_side(a)]}>{PILES[id_pile(a)]}"
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
        if is_corner(side):
            raise UserError(f"bad action {text!r}: corner piles never move; a move starts from a side N E S W")
        return move_id(side, pile)
    try:
        return place_id(parse_card(left), pile)
    except UserError:
        raise UserError(f"bad action {text!r}: {left!r} is neither a card nor a side; {ACTION_HELP}") from None
