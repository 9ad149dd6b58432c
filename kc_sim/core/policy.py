"""The compiled policy interface and the uniform-random policy.

A compiled policy is a numba function with the signature ``POLICY_SIG``::

    policy(state: int64[::1], seat: int64, mem: int64[::1]) -> int64  # an action id

called by the compiled round loop at every decision of its seat. ``state`` is the
round (see ``layout``); a policy must read only what its seat may see: its own hand,
the piles, the stock size, hand sizes and the header. ``mem`` is the seat's private
scratch memory of ``MEM_SIZE`` int64: ``mem[0]`` is its random generator (seeded per
round by the loop, use ``kc_sim.core.rng.below(mem, 0, k)``); ``mem[1:]`` is zeroed at
the start of every round and is the policy's own (e.g. a plan for the turn).
"""

import numba as nb
from numba import types

from kc_sim.core.bits import nth_bit, popcount
from kc_sim.core.ids import place_id
from kc_sim.core.layout import N_PILES, STOP
from kc_sim.core.legal import count_moves, hand_mask, nth_play, place_mask
from kc_sim.core.rng import below

MEM_SIZE = 64
POLICY_SIG = types.int64(types.int64[::1], types.int64, types.int64[::1])
POLICY_TYPE = types.FunctionType(POLICY_SIG)


def compiled_policy(fn):
    """Compile ``fn`` as a policy the round loop can call directly (cached on disk)."""
    return nb.njit(POLICY_SIG, cache=True)(fn)


@compiled_policy
def random_policy(st, seat, mem):
    """A uniformly random legal placement or pile move; stop only when none is left.

    The choice is ``nth_play(st, below(mem, 0, count_plays(st)))``. For speed one pass
    counts the placements pile by pile, keeping each pile's ``place_mask`` in ``mem[1:9]``
    so that a chosen placement is read from them rather than recomputed (the same order
    as ``nth_play``; tests/core/test_enumerator.py checks the two agree)."""
    hand = hand_mask(st, seat)
    k = 0
    for p in range(N_PILES):
        m = place_mask(st, hand, p)
        mem[1 + p] = m
        k += popcount(m)
    total = k + count_moves(st)
    if total == 0:
        return STOP
    r = below(mem, 0, total)
    if r >= k:
        return nth_play(st, r)
    for p in range(N_PILES):
        m = mem[1 + p]
        c = popcount(m)
        if r < c:
            return place_id(nth_bit(m, r), p)
        r -= c
    return STOP
