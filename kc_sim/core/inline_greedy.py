"""The hand-inlined reference loop: ``greedy`` self-play written out in one compiled loop.

A yardstick for ``kc-sim bench``, nothing plays through it otherwise. It is what a person
would write to play greedy rounds as fast as the core allows: the greedy choice
(the built-in ``greedy`` agent, ``agents/greedy.py``) computed inline in the round loop,
with no policy call at all, and applied with the step functions directly (``place``,
``move_pile``, the turn's close), so it never encodes an action id, decodes it again or
checks its legality (greedy only makes legal moves). Deal, rules kernels and the row it
writes are the core's, so it plays exactly the rounds ``kc_sim.core.loop.play_rounds``
plays with the greedy agent in every seat (tests/core/test_policy_set.py checks this).

The greedy rule, as in ``agents/common.py``: place the placeable card of highest rank
(lowest id among equal ranks) on the first non-empty pile whose top it fits, else (a king)
the first empty corner, else the first empty side; with nothing to place, make the first
legal pile move if an empty side would take a card of the hand; else stop.
"""

import numba as nb
import numpy as np
from numba import types

from kc_sim.core.bits import lowest
from kc_sim.core.layout import (
    DONE,
    HAND,
    MAX_SEATS,
    N_PILES,
    PILE_TOP,
    SEAT,
    STATE_SIZE,
)
from kc_sim.core.legal import (
    empty_side_mask,
    first_empty_corner,
    first_empty_side,
    move_mask,
    target_mask,
)
from kc_sim.core.loop import I1, MAX_DECISIONS, write_round
from kc_sim.core.rows import C_MATCH, C_MATCH_ROUND, STATUS_OK, STATUS_TOO_LONG
from kc_sim.core.step import close_turn, deal, first_dealer, move_pile, next_turn, place
from kc_sim.game.cards import FITS_ON, KING, RANK, RANK_MASK

__all__ = ["play_greedy_rounds"]


@nb.njit(types.int64(I1, types.int64, I1, types.int64[:, ::1]), cache=True)
def play_greedy_rounds(seeds, players, rules, out):
    """One round per seed with ``greedy`` in every seat (dealer drawn from the seed), one
    row each in ``out``, as ``loop.play_rounds`` writes them. Returns -1 (or the index of a
    round that ran past MAX_DECISIONS, which a legal round cannot)."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    seat_map = np.arange(MAX_SEATS)
    for i in range(seeds.shape[0]):
        deal(st, seeds[i], players, first_dealer(seeds[i], players), rules)
        status = STATUS_TOO_LONG
        for _ in range(MAX_DECISIONS):
            if st[DONE]:
                status = STATUS_OK
                break
            hand = st[HAND + 2 * st[SEAT]]
            takes = np.int64(0)
            for p in range(N_PILES):
                takes |= target_mask(st, p)
            m = hand & takes
            if m:
                # the highest-ranked placeable card, lowest id among equal ranks
                c = -1
                for r in range(KING, 0, -1):
                    x = m & RANK_MASK[r]
                    if x:
                        c = lowest(x)
                        break
                bit = np.int64(1) << c
                # the first non-empty pile whose top it fits, else a corner (king), else a side
                pile = -1
                for p in range(N_PILES):
                    top = st[PILE_TOP + p]
                    if top >= 0 and FITS_ON[top] & bit:
                        pile = p
                        break
                if pile < 0 and RANK[c] == KING:
                    pile = first_empty_corner(st)
                if pile < 0:
                    pile = first_empty_side(st)
                place(st, c, pile)
                continue
            if hand & empty_side_mask(st):
                mm = move_mask(st)
                if mm:
                    b = lowest(mm)
                    move_pile(st, b // N_PILES, b % N_PILES)
                    continue
            close_turn(st)       # stop
            if not st[DONE]:
                next_turn(st)
        write_round(st, seeds[i], seat_map, status, -1, out, i)
        out[i, C_MATCH] = -1
        out[i, C_MATCH_ROUND] = -1
        if status != STATUS_OK:
            return i
    return -1
