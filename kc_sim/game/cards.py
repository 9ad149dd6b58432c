"""Cards: ids, text form, rank and colour tables, and the fit masks.

A card id is ``suit * 13 + (rank - 1)`` with suits in the order C D H S and
rank 1 = ace ... 13 = king, so ``AC = 0``, ``KC = 12``, ``AD = 13``, ``KS = 51``.
A set of cards is a 52-bit mask: bit ``c`` set means card ``c`` is present.
Pile indices are 0 N, 1 E, 2 S, 3 W (sides) and 4 NE, 5 SE, 6 SW, 7 NW (corners).

The tables here are plain numpy arrays so that the compiled core can freeze
them as constants; everything else in the module is for people and files.
"""

from __future__ import annotations

import numpy as np

from kc_sim.errors import UserError

N_CARDS = 52
SUITS = "CDHS"
RANKS = "A23456789TJQK"
SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
PILES = ("N", "E", "S", "W", "NE", "SE", "SW", "NW")
#: the table: piles 0..3 are the sides (N E S W), 4..7 the corners (NE SE SW NW)
N_SIDES = 4
FIRST_CORNER = N_SIDES
N_PILES = len(PILES)
SIDES = range(N_SIDES)
CORNERS = range(FIRST_CORNER, N_PILES)
KING = 13
ACE = 1

#: rank (1..13) of every card id
RANK = np.array([c % 13 + 1 for c in range(N_CARDS)], dtype=np.int64)
#: suit index (0 C, 1 D, 2 H, 3 S) of every card id
SUIT = np.array([c // 13 for c in range(N_CARDS)], dtype=np.int64)
#: colour of every card id: 0 black (clubs, spades), 1 red (diamonds, hearts)
COLOUR = np.array([1 if s in (1, 2) else 0 for s in SUIT], dtype=np.int64)


def _mask(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return m


#: mask of the four kings
KINGS_MASK = _mask(c for c in range(N_CARDS) if RANK[c] == KING)
#: mask of all 52 cards
ALL_MASK = (1 << N_CARDS) - 1
#: mask of every card but the kings
NON_KINGS_MASK = ALL_MASK & ~KINGS_MASK
#: FITS_ON[t]: mask of the cards that fit on a pile whose top is card t
#: (one rank lower, the other colour); zero on an ace, which closes its pile.
FITS_ON = np.array(
    [
        _mask(x for x in range(N_CARDS) if RANK[x] == RANK[t] - 1 and COLOUR[x] != COLOUR[t])
        for t in range(N_CARDS)
    ],
    dtype=np.int64,
)
#: FITS_UNDER[b]: mask of the tops that card b fits on (one rank higher, the other colour);
#: zero for a king, which fits on nothing.
FITS_UNDER = np.array(
    [_mask(t for t in range(N_CARDS) if RANK[t] == RANK[b] + 1 and COLOUR[t] != COLOUR[b]) for b in range(N_CARDS)],
    dtype=np.int64,
)
#: RANK_MASK[r]: mask of the four cards of rank r (index 0 unused)
RANK_MASK = np.array([0] + [_mask(c for c in range(N_CARDS) if RANK[c] == r) for r in range(1, 14)], dtype=np.int64)


def card_text(c: int) -> str:
    """The text form of card id ``c``: rank then suit, e.g. ``TD``, ``KS``."""
    return RANKS[int(c) % 13] + SUITS[int(c) // 13]


def parse_card(text: str) -> int:
    """Card id from its text form: ``7H``, ``TD``, ``10D``, ``Q♦`` (case-insensitive)."""
    t = str(text).strip().upper()
    if t and t[-1] in SUIT_SYMBOLS:
        t = t[:-1] + SUIT_SYMBOLS[t[-1]]
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise UserError(
            f"bad card {text!r}: expected rank (A 2-9 T/10 J Q K) then suit (C D H S or ♣♦♥♠), e.g. 7H, TD, Q♦"
        )
    return SUITS.index(t[1]) * 13 + RANKS.index(t[0])


def parse_pile(text: str) -> int:
    """Pile index from its name (N E S W NE SE SW NW)."""
    t = str(text).strip().upper()
    if t not in PILES:
        raise UserError(f"bad pile {text!r}: expected one of {' '.join(PILES)}")
    return PILES.index(t)


def mask_to_cards(mask: int) -> list[int]:
    """Card ids present in a 52-bit mask, lowest id first."""
    mask = int(mask) & ((1 << N_CARDS) - 1)
    out = []
    while mask:
        low = mask & -mask      # the lowest card left
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def sort_hand(hand) -> list[int]:
    """Cards sorted for a person: by rank (ace low), then suit (C D H S)."""
    return sorted((int(c) for c in hand), key=lambda c: (int(RANK[c]), int(SUIT[c])))


def hand_text(hand) -> str:
    """A hand as card texts sorted by rank, e.g. ``AD 2C 4C 7H 9S QD KS``; ``-`` when empty."""
    cards = sort_hand(hand)
    return " ".join(card_text(c) for c in cards) if cards else "-"
