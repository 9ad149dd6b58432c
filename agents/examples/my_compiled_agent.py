"""An example compiled policy: copy this file to start your own.

Use it by name wherever agents are named::

    kc-sim ... agents/examples/my_compiled_agent.py:low_first
    kc_sim.play.runner.play_rounds(["agents.examples.my_compiled_agent:low_first", "greedy"], seeds, "classic")

or run it: ``python agents/examples/my_compiled_agent.py`` plays 100,000 rounds against
``greedy`` in the compiled loop and prints the average penalties and the speed.

A compiled policy is a numba function with the signature
``policy(state int64[::1], seat int64, mem int64[::1]) -> int64`` (an action id),
compiled with ``kc_sim.core.policy.compiled_policy`` (``POLICY_SIG``, cached on disk).
The round loop calls it at every decision of its seat. It may read only its own hand
``state[HAND + 2 * seat]``, the piles (``PILE_*``), the stock size
``state[STOCK_LEN] - state[STOCK_POS]``, hand sizes ``state[HAND_N + s]`` and the header;
never other hands or ``state[STOCK:]``. It must not change ``state``. ``mem`` (64 int64)
is its own: ``mem[0]`` is its random generator (``below(mem, 0, k)``), ``mem[1:]`` is
zeroed before every round.
"""

import numba as nb

from kc_sim.core.bits import lowest
from kc_sim.core.layout import HAND, MOVE_BASE, PILE_BASE, STOP, TURNS
from kc_sim.core.legal import can_move, count_plays, nth_play, target_mask
from kc_sim.core.policy import compiled_policy
from kc_sim.core.rng import below
from kc_sim.game.cards import RANK

# mem slots this policy uses (mem[0] is the generator)
M_TURN = 1          # the turn number its plan belongs to
M_MOVES = 2         # pile moves made this turn


@nb.njit(cache=True, inline="always")
def _lowest_rank_placement(st, hand):
    """The placement of the lowest-ranked card that fits a non-empty pile, or -1."""
    best, best_rank = -1, 99
    for p in range(8):
        m = hand & target_mask(st, p)
        while m:
            c = lowest(m)
            m &= m - 1
            if RANK[c] < best_rank:
                best, best_rank = c * 8 + p, RANK[c]
    return best


@compiled_policy
def low_first(st, seat, mem):
    """Sheds its lowest cards first (anywhere they fit), makes at most two pile moves a
    turn, and otherwise plays a random legal action with probability 1/4 before stopping."""
    if mem[M_TURN] != st[TURNS]:          # a new turn: reset the plan kept in mem
        mem[M_TURN] = st[TURNS]
        mem[M_MOVES] = 0
    a = _lowest_rank_placement(st, st[HAND + 2 * seat])
    if a >= 0:
        return a
    if mem[M_MOVES] < 2:
        for s in range(4):
            if st[PILE_BASE + s] >= 0:
                for p in range(8):
                    if can_move(st, s, p):
                        mem[M_MOVES] += 1
                        return MOVE_BASE + s * 8 + p
    k = count_plays(st)
    if k > 0 and below(mem, 0, 4) == 0:
        return nth_play(st, below(mem, 0, k))
    return STOP


if __name__ == "__main__":
    import time

    import numpy as np

    from kc_sim.core import loop
    from kc_sim.play.runner import play_rounds

    me = f"{__file__}:low_first"
    play_rounds([me, "greedy"], np.arange(100), "classic")            # warm up
    t = time.perf_counter()
    rows = play_rounds([me, "greedy"], np.arange(100_000), "classic")
    dt = time.perf_counter() - t
    pen = rows[:, loop.C_PENALTY:loop.C_PENALTY + 2].mean(axis=0)
    print(f"100,000 rounds vs greedy in {dt:.2f} s ({100_000 / dt:,.0f} rounds/s): "
          f"mean penalty {pen[0]:.2f} (low_first) vs {pen[1]:.2f} (greedy)")
