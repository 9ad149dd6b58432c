"""The compiled policy interface and the uniform-random policy.

A compiled policy is a numba function with the signature ``POLICY_SIG``::

    policy(state: int64[::1], seat: int64, mem: int64[::1]) -> int64  # an action id

called by the compiled round loop at every decision of its seat. ``state`` is the
round (see ``layout``); a policy must read only what its seat may see: its own hand,
the piles, the stock size, hand sizes and the header. ``mem`` is the seat's private
scratch memory of ``MEM_SIZE`` int64: ``mem[0]`` is its random generator (seeded per
round by the loop, use ``kc_sim.core.rng.below(mem, 0, k)``); ``mem[1:]`` is zeroed at
the start of every round and is the policy's own (e.g. a plan for the turn).

How the loops call a policy is in :mod:`kc_sim.core.policy_set`: through a function
pointer (any policy), or compiled into a round loop made for a known set of policies.
"""

import gc
import threading
from contextlib import contextmanager

import numba as nb
from numba import types

from kc_sim.core.bits import nth_bit, popcount
from kc_sim.core.ids import place_id
from kc_sim.core.kernel import KERNEL_OPTIONS, kernel
from kc_sim.core.layout import N_PILES, STOP
from kc_sim.core.legal import count_moves, hand_mask, nth_play, place_mask
from kc_sim.core.rng import below, derive
from kc_sim.support.lazy import OnFirstUse

MEM_SIZE = 64
POLICY_SIG = types.int64(types.int64[::1], types.int64, types.int64[::1])
POLICY_TYPE = types.FunctionType(POLICY_SIG)


_gc_lock = threading.Lock()
_gc_depth = [0, False]       # compiles under way, and whether the collector was on before them


@contextmanager
def compiling():
    """Python's cyclic garbage collector off while numba compiles (restored after; nested
    uses are fine). A compile allocates objects by the million and the collector would walk
    them again and again: off, the greedy and merger policies and the round loop compiled
    from an empty cache in 6.4 CPU-seconds instead of 6.7 (about 10 MB more memory)."""
    with _gc_lock:
        if _gc_depth[0] == 0:
            _gc_depth[1] = gc.isenabled()
            gc.disable()
        _gc_depth[0] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth[0] -= 1
            if _gc_depth[0] == 0 and _gc_depth[1]:
                gc.enable()


def compiled_policy(fn=None, *, allocates: bool = True):
    """Compile ``fn`` as a policy the round loop can call directly (cached on disk).

    ``allocates=False`` compiles it as a kernel (:mod:`kc_sim.core.kernel`): without numba's
    reference counting, so each call is cheaper, but the policy may create no array (numba
    refuses to compile one that does). The built-in baselines are compiled so. Used bare
    (``@compiled_policy``) or with the option (``@compiled_policy(allocates=False)``)."""
    if fn is None:
        return lambda f: compiled_policy(f, allocates=allocates)
    options = {"cache": True} if allocates else KERNEL_OPTIONS
    with compiling():
        return nb.njit(POLICY_SIG, **options)(fn)


#: the seed stream of a seat's policy generator (``derive(round seed, SEAT_STREAM + seat)``)
SEAT_STREAM = 0x73656174


@kernel
def seed_policies(mem, seed, players):
    """Zero each seated player's policy memory and seed its generator for this round."""
    for s in range(players):
        mem[s, :] = 0
        mem[s, 0] = derive(seed, SEAT_STREAM + s)


def __getattr__(name):
    # random_policy is compiled on first use, not on import of this module (every policy
    # module imports it; a run without random agents never needs the compile)
    if name in _ON_FIRST_USE:
        return _ON_FIRST_USE[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


_random_policy = random_policy     # compiled as ``random_policy`` by __getattr__ on first use
del random_policy
_ON_FIRST_USE = OnFirstUse({"random_policy": lambda: compiled_policy(_random_policy, allocates=False)})
