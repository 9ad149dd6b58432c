"""A compiled policy that stalls, for the fault-injection tests (tests/faults): it plays
legally (its first legal play, else stop) until its sixth decision of a round, where it
never returns - except in the warm-up's deal (seed 0, deal 0), so that the stall comes in
a chunk of the run. A stall in compiled code cannot be interrupted: its process is killed.
``plod`` is slow but never stalls: every decision burns a fixed amount of work."""

from __future__ import annotations

import numba as nb

from kc_sim.core.layout import STOCK, STOP
from kc_sim.core.legal import count_plays, nth_play
from kc_sim.core.policy import compiled_policy

FAULT_DECISION = 6
WARM_DEAL_FIRST_CARD = 38        # the first stock card of the warm-up's deal


@nb.njit(cache=True)
def _spin(mem):
    while mem[5] >= 0:              # never false (2**63 steps): a loop compiled code cannot leave
        mem[5] += 1
    return STOP


@compiled_policy
def spin(st, seat, mem):
    """Never returns from its sixth decision of a round (but in the warm-up's deal)."""
    mem[1] += 1
    if mem[1] >= FAULT_DECISION and st[STOCK] != WARM_DEAL_FIRST_CARD:
        return _spin(mem)
    return nth_play(st, 0) if count_plays(st) > 0 else STOP


#: steps of busy work per decision of ``plod`` (a fraction of a millisecond)
PLOD_STEPS = 40_000


@nb.njit(cache=True)
def _burn(mem):
    x = mem[6] | 1
    for _ in range(PLOD_STEPS):            # xorshift: no closed form the compiler could fold
        x ^= x << 13
        x ^= x >> 7
        x ^= x << 17
    mem[6] = x


@compiled_policy
def plod(st, seat, mem):
    """Plays as ``spin`` does before it stalls, slowly: each decision first burns fixed work."""
    _burn(mem)
    return nth_play(st, 0) if count_plays(st) > 0 else STOP
