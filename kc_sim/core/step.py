"""Changing a round: the dealer, deal and layout, place, move a pile, the end and start of a turn,
and scoring (docs/rules.md: Seats, dealer and deal; Actions; Drawing; End of the round; Scoring).

The rule, in short: seven cards to each seat, one card face up on each side, the rest the
stock; kings dealt to a side stay or go to a corner (``layout_kings``). One card is drawn
per turn: at the stop (``draw=end``), as the turn opens (``start``) or as it opens only
when nothing can be played (``if_stuck``), never by a player who just went out. The round
ends **out** when a hand empties, or **blocked** after as many idle turns in a row (no
action, no draw) as there are players. Each hand left is charged a penalty: kings 10 and
others 1 (``kings10``), or K Q J 10 = 10, ace 1, 2-9 their number (``face``).

All functions take the flat state (see ``layout``) and change it in place. They trust
their caller: legality is checked by ``legal`` before an action is applied.
"""

import numba as nb
import numpy as np

from kc_sim.core.bits import popcount
from kc_sim.core.ids import id_card, id_pile, id_side, is_move, is_place
from kc_sim.core.kernel import kernel
from kc_sim.core.layout import (
    ACTIONS,
    DEALER,
    DONE,
    DREW,
    END,
    END_BLOCKED,
    END_OUT,
    FIRST,
    FIRST_CORNER,
    HAND,
    HAND_N,
    IDLE,
    N_PILES,
    N_SIDES,
    PENALTY,
    PILE_BASE,
    PILE_MASK,
    PILE_SIZE,
    PILE_TOP,
    PLAYERS,
    RULES,
    SEAT,
    STOCK,
    STOCK_LEN,
    STOCK_POS,
    TURN_ACTIONS,
    TURNS,
    WINNER,
)
from kc_sim.core.legal import has_play
from kc_sim.core.rng import advance, derive, scale
from kc_sim.game.cards import KING, KINGS_MASK, N_CARDS, RANK, RANK_MASK
from kc_sim.game.variants import (
    N_RULE_CODES,
    R_DECKS,
    R_DRAW,
    R_LAYOUT_KINGS,
    R_SCORING,
    Draw,
    LayoutKings,
    Scoring,
)

#: cards dealt to each player
HAND_SIZE = 7
#: the stream of a seed the dealer is drawn from (:func:`first_dealer`)
DEALER_STREAM = 0x6465616C
#: penalty per rank under scoring=face (index 0 unused): K Q J 10 count 10, A 1, others face value
FACE_VALUE = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10], dtype=np.int64)


@nb.njit(cache=True, inline="always")
def add_to_hand(st, seat, c):
    """Give card c to a seat (into plane 1 when it already holds a copy)."""
    bit = np.int64(1) << c
    i = HAND + 2 * seat
    if st[i] & bit:
        st[i + 1] |= bit
    else:
        st[i] |= bit
    st[HAND_N + seat] += 1


@nb.njit(cache=True, inline="always")
def take_from_hand(st, seat, c):
    """Remove one copy of card c from a seat's hand."""
    bit = np.int64(1) << c
    i = HAND + 2 * seat
    if st[i + 1] & bit:
        st[i + 1] &= ~bit
    else:
        st[i] &= ~bit
    st[HAND_N + seat] -= 1


@nb.njit(cache=True, inline="always")
def put_on_pile(st, p, c):
    """Put card c on pile p (as its base when the pile is empty)."""
    if st[PILE_TOP + p] < 0:
        st[PILE_BASE + p] = c
    st[PILE_TOP + p] = c
    st[PILE_MASK + p] |= np.int64(1) << c
    st[PILE_SIZE + p] += 1


@kernel
def first_dealer(seed, players):
    """The dealer drawn at random from a seed (docs/rules.md, Seats, dealer and deal):
    the first draw of a generator seeded with the seed's dealer stream."""
    _, z = advance(np.uint64(derive(seed, np.int64(DEALER_STREAM))))  # int64, the type seed_policies gives it: one compile
    return scale(z, players)


@kernel
def shuffle_stock(st, seed, decks):
    """Write the shuffled deck (52 cards, or 104 with two decks) into the stock area:
    a Fisher-Yates shuffle driven by the core's generator seeded with ``seed``."""
    n = N_CARDS * decks
    for i in range(n):
        st[STOCK + i] = i % N_CARDS
    s = np.uint64(seed)
    for i in range(n - 1, 0, -1):
        s, z = advance(s)
        j = scale(z, i + 1)
        t = st[STOCK + i]
        st[STOCK + i] = st[STOCK + j]
        st[STOCK + j] = t
    st[STOCK_LEN] = n


@kernel
def clear_table(st, players, dealer, rules):
    """Start a round on ``st``: no cards in hands or piles, the header set, the player
    left of the dealer to act. The stock area (the deck) is kept."""
    n = st[STOCK_LEN]
    st[:STOCK] = 0
    st[STOCK_LEN] = n
    for i in range(N_RULE_CODES):
        st[RULES + i] = rules[i]
    st[PLAYERS] = players
    st[DEALER] = dealer
    st[WINNER] = -1
    for p in range(N_PILES):
        st[PILE_BASE + p] = -1
        st[PILE_TOP + p] = -1
    st[FIRST] = (dealer + 1) % players
    st[SEAT] = st[FIRST]


@kernel
def deal_stock(st, players, dealer, rules):
    """Deal the deck already in the stock area: HAND_SIZE (7) cards each, one at a time, from the
    dealer's left; turn up N, E, S, W (layout kings to corners under ``to_corner``);
    the rest is the stock, and the player left of the dealer is to start the first turn
    (``open_turn`` starts it; it is separate so that the dealt position can be recorded)."""
    clear_table(st, players, dealer, rules)
    pos = 0
    for i in range(HAND_SIZE * players):
        add_to_hand(st, (dealer + 1 + i) % players, st[STOCK + pos])
        pos += 1
    for side in range(N_SIDES):
        while True:
            c = st[STOCK + pos]
            pos += 1
            placed = False
            if rules[R_LAYOUT_KINGS] == LayoutKings.TO_CORNER and RANK[c] == KING:
                for corner in range(FIRST_CORNER, N_PILES):
                    if st[PILE_TOP + corner] < 0:
                        put_on_pile(st, corner, c)
                        placed = True
                        break
            if not placed:
                put_on_pile(st, side, c)
                break
    st[STOCK_POS] = pos


@kernel
def deal(st, seed, players, dealer, rules):
    """Shuffle from ``seed``, deal a new round into ``st`` and start its first turn."""
    shuffle_stock(st, seed, rules[R_DECKS])
    deal_stock(st, players, dealer, rules)
    open_turn(st)


@nb.njit(cache=True, inline="always")
def draw(st):
    """The seat to act draws the next stock card, if any; returns it or -1."""
    if st[STOCK_POS] >= st[STOCK_LEN]:
        return -1
    c = st[STOCK + st[STOCK_POS]]
    st[STOCK_POS] += 1
    add_to_hand(st, st[SEAT], c)
    st[DREW] = c
    return c


@kernel
def open_turn(st):
    """Start the turn of the seat in ``SEAT``: draw first under draw=start, or under
    draw=if_stuck when the player has no placement or pile move."""
    st[TURNS] += 1
    st[TURN_ACTIONS] = 0
    st[DREW] = -1
    rule = st[RULES + R_DRAW]
    if rule == Draw.START or (rule == Draw.IF_STUCK and not has_play(st)):
        draw(st)


@kernel
def close_turn(st):
    """End the current turn after a stop: draw under draw=end, then end the round as
    blocked once every player in a row has had an idle turn (no action, no draw)."""
    if st[RULES + R_DRAW] == Draw.END:
        draw(st)
    if st[TURN_ACTIONS] == 0 and st[DREW] < 0:
        st[IDLE] += 1
    else:
        st[IDLE] = 0
    if st[IDLE] >= st[PLAYERS]:
        finish(st, -1, END_BLOCKED)


@kernel
def next_turn(st):
    """Pass the turn clockwise (to the next seat) and start it."""
    st[SEAT] = (st[SEAT] + 1) % st[PLAYERS]
    open_turn(st)


@kernel
def penalty_of_masks(lo, hi, scoring):
    """Penalty of a hand given as its two planes: ``Scoring.KINGS10`` (K 10, others 1) or
    ``Scoring.FACE`` (K Q J 10 count 10, A 1, others their face value)."""
    total = 0
    for m in (lo, hi):
        if scoring == Scoring.KINGS10:
            k = popcount(m & KINGS_MASK)
            total += 10 * k + popcount(m) - k
        else:
            for r in range(1, KING + 1):
                total += FACE_VALUE[r] * popcount(m & RANK_MASK[r])
    return total


@kernel
def hand_penalty(st, seat):
    """Penalty for the cards in a seat's hand under the round's scoring."""
    return penalty_of_masks(st[HAND + 2 * seat], st[HAND + 2 * seat + 1], st[RULES + R_SCORING])


@kernel
def finish(st, winner, end):
    """End the round: record winner and reason, score every hand."""
    st[DONE] = 1
    st[WINNER] = winner
    st[END] = end
    for s in range(st[PLAYERS]):
        st[PENALTY + s] = hand_penalty(st, s)


@kernel
def place(st, c, p):
    """Place card c from the hand of the seat to act on pile p; an empty hand ends the
    round at once (out, no draw)."""
    seat = st[SEAT]
    take_from_hand(st, seat, c)
    put_on_pile(st, p, c)
    st[TURN_ACTIONS] += 1
    st[ACTIONS] += 1
    if st[HAND_N + seat] == 0:
        finish(st, seat, END_OUT)


@kernel
def move_pile(st, s, p):
    """Move the whole side pile s onto pile p, order kept; side s becomes empty."""
    if st[PILE_TOP + p] < 0:
        st[PILE_BASE + p] = st[PILE_BASE + s]
    st[PILE_TOP + p] = st[PILE_TOP + s]
    st[PILE_MASK + p] |= st[PILE_MASK + s]
    st[PILE_SIZE + p] += st[PILE_SIZE + s]
    st[PILE_BASE + s] = -1
    st[PILE_TOP + s] = -1
    st[PILE_MASK + s] = 0
    st[PILE_SIZE + s] = 0
    st[TURN_ACTIONS] += 1
    st[ACTIONS] += 1


@kernel(inline="always")
def stop(st):
    """The seat to act stops: its turn closes (with the draw under draw=end, and the round
    ending blocked after a full circle of idle turns), then, unless the round is over, the
    next player's turn opens (with its draw under draw=start or if_stuck). Returns the card
    the closed turn drew (-1: none), which a game record's turn names and which the next
    turn's opening would otherwise overwrite. Every stop of every caller is this function:
    ``apply``, the loops' event log (``kc_sim.core.loop.play_action``), the environments'
    step (``kc_sim.env.step.env_step``) and ``Game.play``. Compiled inline into each, so
    ``apply`` compiles to the code it was before it called this."""
    close_turn(st)
    drew = st[DREW]
    if not st[DONE]:
        next_turn(st)
    return drew


@kernel
def apply(st, a):
    """Apply a legal action id: place, move a pile, or stop (:func:`stop`)."""
    if is_place(a):
        place(st, id_card(a), id_pile(a))
    elif is_move(a):
        move_pile(st, id_side(a), id_pile(a))
    else:
        stop(st)
