"""A learnable encoding of the observation: 0/1 planes and scaled counts, float32.

The 143-value observation (:mod:`kc_sim.env.obs_vector`) holds card *ids* (a pile's top
and base, the card drawn), which a neural network cannot use as categories. This encoding
makes each of them one-hot, says what fits where, and scales the counts to [0, 1]. It is
computed from the observation vector and the rule switches alone, so it shows nothing the
seat may not see. Seats are relative to the observer (0 = itself), piles in the order
N E S W NE SE SW NW, cards by id (docs/formats.md).

======================  =====  ================================================================
name                    size   value
======================  =====  ================================================================
hand                    52     1 if the observer holds a copy of card c
hand2                   52     1 if it holds both copies (two decks)
table                   52     1 if a copy of card c lies on the table
table2                  52     1 if both copies do
top                     8x52   pile p's top card, one-hot (all 0 when empty)
base                    8x52   pile p's base card, one-hot
fits                    8x52   1 if card c may be placed on pile p as it is now (one rank lower
                               and the other colour than the top; any card on an empty side,
                               kings only with king_on_empty_side off; kings on an empty corner)
empty                   8      1 if pile p is empty
size                    8      cards in pile p / 13
hand_sizes              8      cards in relative seat r's hand / 26 (0 beyond the players)
seated                  8      1 for the relative seats in the round
stock                   1      cards left in the stock / 104
to_act                  9      the relative seat to act, one-hot; index 8: the round is over
dealer                  8      the dealer's relative seat, one-hot
turn_actions            1      the observer's place/move actions this turn / 16, at most 1
drew                    53     the card drawn this turn, one-hot; index 52: none
players                 7      2..8 players, one-hot
rules                   8      draw end/start/if_stuck (3, one-hot), layout kings to the corner,
                               king on an empty side, two decks, must play kings, face scoring
======================  =====  ================================================================

``PLANES`` maps the names to slices of the ``PLANES_SIZE`` (1,575) values.

``observation="planes_opens"`` appends ``opens`` (449 values, one per action id): what the
action would open to the next player, the change in the number of unseen card copies (in
neither the observer's hand nor on the table) that fit somewhere on the table, if the
action were played now, / 13 and clipped to [-1, 1]; 0 for stop and for cards and piles
that do not fit (the legal mask says which actions may be played). A card on a pile opens the cards that fit on it and closes those that fit
on the top it covers; a pile move empties a side (any card fits there). This is the
measure the ``planner`` weighs against the penalty it sheds, given per action so that a
network can weigh it too (``PLANES_OPENS_SIZE`` = 2,024 values).
"""

from __future__ import annotations

import numba as nb
import numpy as np

import kc_sim.core  # noqa: F401 - sets up the compile cache folder before the first compiled function
from kc_sim.env.obs_vector import (
    O_BASE,
    O_DEALER,
    O_DREW,
    O_HAND,
    O_HAND_SIZES,
    O_PLAYERS,
    O_SIZE,
    O_STOCK,
    O_TABLE,
    O_TO_ACT,
    O_TOP,
    O_TURN_ACTIONS,
    OBS_SIZE,
)
from kc_sim.game.cards import FITS_ON, KINGS_MASK, N_CARDS, NON_KINGS_MASK
from kc_sim.game.variants import (
    R_DECKS,
    R_DRAW,
    R_KING_ON_EMPTY_SIDE,
    R_LAYOUT_KINGS,
    R_MUST_PLAY_KINGS,
    R_SCORING,
)

_SIZES = (("hand", 52), ("hand2", 52), ("table", 52), ("table2", 52), ("top", 8 * 52), ("base", 8 * 52),
          ("fits", 8 * 52), ("empty", 8), ("size", 8), ("hand_sizes", 8), ("seated", 8), ("stock", 1),
          ("to_act", 9), ("dealer", 8), ("turn_actions", 1), ("drew", 53), ("players", 7), ("rules", 8))
PLANES: dict[str, slice] = {}
_at = 0
for _name, _n in _SIZES:
    PLANES[_name] = slice(_at, _at + _n)
    _at += _n
#: values in the encoding
PLANES_SIZE = _at
(P_HAND, P_HAND2, P_TABLE, P_TABLE2, P_TOP, P_BASE, P_FITS, P_EMPTY, P_SIZE, P_HAND_SIZES, P_SEATED, P_STOCK,
 P_TO_ACT, P_DEALER, P_TURN_ACTIONS, P_DREW, P_PLAYERS, P_RULES) = (PLANES[n].start for n, _ in _SIZES)


#: the observation encodings the environments serve
OBSERVATIONS = ("vector", "planes", "planes_opens")
#: the ``opens`` block: one value per action id, after the planes
OPENS_SIZE = 449
PLANES_OPENS_SIZE = PLANES_SIZE + OPENS_SIZE
#: values in one observation of each encoding
SIZES = {"vector": OBS_SIZE, "planes": PLANES_SIZE, "planes_opens": PLANES_OPENS_SIZE}
_MOVE_BASE, _STOP = 416, 448


@nb.njit(cache=True)
def planes_from_vector(vec, rules, out):
    """Write the encoding of the observation vector ``vec`` (int8[143]) under the rule codes
    ``rules`` (``RuleSet.codes()``) into the float32 row ``out``."""
    out[:] = 0.0
    for c in range(N_CARDS):
        h = vec[O_HAND + c]
        t = vec[O_TABLE + c]
        out[P_HAND + c] = 1.0 if h >= 1 else 0.0
        out[P_HAND2 + c] = 1.0 if h >= 2 else 0.0
        out[P_TABLE + c] = 1.0 if t >= 1 else 0.0
        out[P_TABLE2 + c] = 1.0 if t >= 2 else 0.0
    side_ok = NON_KINGS_MASK | (KINGS_MASK if rules[R_KING_ON_EMPTY_SIDE] else 0)
    for p in range(8):
        top = vec[O_TOP + p]
        base = vec[O_BASE + p]
        if top >= 0:
            out[P_TOP + 52 * p + top] = 1.0
            fits = FITS_ON[top]
        else:
            out[P_EMPTY + p] = 1.0
            fits = side_ok if p < 4 else KINGS_MASK
        if base >= 0:
            out[P_BASE + 52 * p + base] = 1.0
        for c in range(N_CARDS):
            if (fits >> c) & 1:
                out[P_FITS + 52 * p + c] = 1.0
        out[P_SIZE + p] = vec[O_SIZE + p] / 13.0
    players = vec[O_PLAYERS]
    for r in range(8):
        n = vec[O_HAND_SIZES + r]
        if n >= 0:
            out[P_HAND_SIZES + r] = n / 26.0
            out[P_SEATED + r] = 1.0
    out[P_STOCK] = vec[O_STOCK] / 104.0
    to_act = vec[O_TO_ACT]
    out[P_TO_ACT + (to_act if to_act >= 0 else 8)] = 1.0
    out[P_DEALER + vec[O_DEALER]] = 1.0
    out[P_TURN_ACTIONS] = min(vec[O_TURN_ACTIONS] / 16.0, 1.0)
    drew = vec[O_DREW]
    out[P_DREW + (drew if drew >= 0 else 52)] = 1.0
    out[P_PLAYERS + players - 2] = 1.0
    out[P_RULES + rules[R_DRAW]] = 1.0
    out[P_RULES + 3] = 1.0 if rules[R_LAYOUT_KINGS] else 0.0
    out[P_RULES + 4] = 1.0 if rules[R_KING_ON_EMPTY_SIDE] else 0.0
    out[P_RULES + 5] = 1.0 if rules[R_DECKS] == 2 else 0.0
    out[P_RULES + 6] = 1.0 if rules[R_MUST_PLAY_KINGS] else 0.0
    out[P_RULES + 7] = 1.0 if rules[R_SCORING] else 0.0


@nb.njit(cache=True)
def planes_rows(vecs, rules, out):
    """:func:`planes_from_vector` for every row of ``vecs`` (int8[B, 143]) into ``out`` (float32[B, PLANES_SIZE])."""
    for i in range(vecs.shape[0]):
        planes_from_vector(vecs[i], rules, out[i])


def planes(vec, rules) -> np.ndarray:
    """The encoding of one observation vector (a new float32 array); ``rules`` a RuleSet."""
    out = np.zeros(PLANES_SIZE, dtype=np.float32)
    planes_from_vector(np.asarray(vec, dtype=np.int8), rules.codes(), out)
    return out


@nb.njit(cache=True, inline="always")
def _open_count(tops, side_ok, unseen):
    """Unseen card copies that fit somewhere on a table with these tops (-1: empty pile)."""
    m = 0
    for p in range(8):
        t = tops[p]
        if t >= 0:
            m |= FITS_ON[t]
        else:
            m |= side_ok if p < 4 else KINGS_MASK
    n = 0
    for c in range(N_CARDS):
        if (m >> c) & 1:
            n += unseen[c]
    return n


@nb.njit(cache=True)
def opens_from_vector(vec, rules, out):
    """Write the ``opens`` block of the observation vector ``vec`` under the rule codes
    ``rules`` into the float32 row ``out`` (449 values; see the module docstring)."""
    out[:] = 0.0
    decks = rules[R_DECKS]
    unseen = np.empty(N_CARDS, dtype=np.int64)
    for c in range(N_CARDS):
        unseen[c] = max(decks - vec[O_HAND + c] - vec[O_TABLE + c], 0)
    side_ok = NON_KINGS_MASK | (KINGS_MASK if rules[R_KING_ON_EMPTY_SIDE] else 0)
    tops = np.empty(8, dtype=np.int64)
    for p in range(8):
        tops[p] = vec[O_TOP + p]
    now = _open_count(tops, side_ok, unseen)
    for p in range(8):                       # placements: card c onto pile p, where it fits
        t = tops[p]
        fits = FITS_ON[t] if t >= 0 else (side_ok if p < 4 else KINGS_MASK)
        for c in range(N_CARDS):
            if vec[O_HAND + c] > 0 and (fits >> c) & 1:
                tops[p] = c
                out[c * 8 + p] = min(max((_open_count(tops, side_ok, unseen) - now) / 13.0, -1.0), 1.0)
                tops[p] = t
    for s in range(4):                       # whole side pile s onto pile p
        base = vec[O_BASE + s]
        if base < 0:
            continue
        for p in range(8):
            t = tops[p]
            if p == s or not ((t >= 0 and (FITS_ON[t] >> base) & 1) or (t < 0 and p >= 4 and (KINGS_MASK >> base) & 1)):
                continue
            tops[p] = tops[s]
            tops[s] = -1
            out[_MOVE_BASE + s * 8 + p] = min(max((_open_count(tops, side_ok, unseen) - now) / 13.0, -1.0), 1.0)
            tops[s] = tops[p]
            tops[p] = t


@nb.njit(cache=True)
def planes_opens_rows(vecs, rules, out):
    """The planes then ``opens`` for every row of ``vecs`` into ``out`` (float32[B, PLANES_OPENS_SIZE])."""
    for i in range(vecs.shape[0]):
        planes_from_vector(vecs[i], rules, out[i, :PLANES_SIZE])
        opens_from_vector(vecs[i], rules, out[i, PLANES_SIZE:])


def encode_into(vec, codes, observation: str, out) -> np.ndarray:
    """Write the encoding ``observation`` (``planes`` or ``planes_opens``) of one observation
    vector into the float32 row ``out`` (``SIZES[observation]`` long) under the rule codes
    ``codes``; returns ``out``. For callers that encode one view at a time (agents)."""
    planes_from_vector(vec, codes, out[:PLANES_SIZE])
    if observation == "planes_opens":
        opens_from_vector(vec, codes, out[PLANES_SIZE:])
    return out


def encode(vec, rules, observation: str) -> np.ndarray:
    """One observation vector as the encoding ``observation`` (``vector``, ``planes`` or
    ``planes_opens``) asks for (a new array); ``rules`` a RuleSet."""
    vec = np.asarray(vec, dtype=np.int8)
    if observation == "vector":
        return vec
    return encode_into(vec, rules.codes(), observation, np.zeros(SIZES[observation], dtype=np.float32))
