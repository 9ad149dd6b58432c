"""A compiled policy that cheats, for tests/test_testing.py: when the next seat's hand
holds a king (a card it must not see) it plays its last legal placement or pile move,
else it plays like greedy. Every action it takes is legal."""

from agents.greedy import greedy_policy
from kc_sim.core.layout import HAND, PLAYERS
from kc_sim.core.legal import count_plays, nth_play
from kc_sim.core.policy import compiled_policy
from kc_sim.game.cards import KINGS_MASK

KINGS = int(KINGS_MASK)


@compiled_policy
def peeker(st, seat, mem):
    nxt = (seat + 1) % st[PLAYERS]
    k = count_plays(st)
    if k > 0 and (st[HAND + 2 * nxt] & KINGS) != 0:
        return nth_play(st, k - 1)
    return greedy_policy(st, seat, mem)
