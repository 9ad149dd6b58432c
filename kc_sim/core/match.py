"""The match rule (docs/rules.md, Matches): when a match is over and who wins it.

A match is rounds played until the match switch says stop. Each round adds every
player's penalty to their total. ``to_25``: the match ends after the first round in
which some total reaches 25 (``MATCH_TARGET``). ``rounds:N``: it ends after N rounds.
``eliminate_25``: a player whose total reaches 25 leaves the match; it ends when at
most one player is left. The winners are the players with the lowest total (ties
share the win); under ``eliminate_25`` the last player left, or, when the last ones
were eliminated together, the lowest total among them.
"""

import numba as nb
import numpy as np

from kc_sim.game.variants import MATCH_TARGET, MatchKind


@nb.njit(cache=True)
def match_over(kind, n_rounds, rounds_played, totals, active, players):
    """Is the match over after this round? Updates ``active`` under eliminate_25."""
    if kind == MatchKind.ROUNDS:
        return rounds_played >= n_rounds
    if kind == MatchKind.TO_25:
        for s in range(players):
            if totals[s] >= MATCH_TARGET:
                return True
        return False
    left = 0
    for s in range(players):
        if active[s] and totals[s] >= MATCH_TARGET:
            active[s] = False
        left += active[s]
    return left <= 1


@nb.njit(cache=True)
def match_winners(kind, totals, active, last_active, players):
    """Bit mask of the winners: lowest total (ties share); under eliminate_25 the last one
    left, or the lowest among those eliminated together in the last round."""
    pool = np.zeros(players, dtype=np.bool_)
    for s in range(players):
        pool[s] = True
        if kind == MatchKind.ELIMINATE_25:
            pool[s] = active[s] if active.sum() == 1 else last_active[s]
    best = 1 << 30
    for s in range(players):
        if pool[s] and totals[s] < best:
            best = totals[s]
    mask = 0
    for s in range(players):
        if pool[s] and totals[s] == best:
            mask |= 1 << s
    return mask


def max_match_rounds(kind: int, players: int, n_rounds: int = 0) -> int:
    """An upper bound on the rounds of one match (the size of a buffer for its round rows).

    ``rounds:N`` plays ``n_rounds``. Otherwise every round adds at least 1 to the penalty
    of every player but at most one (the one who went out), so a round adds at least
    ``players - 1`` points in all: under ``to_25`` the totals stay below the target
    (at most ``MATCH_TARGET - 1`` each) for at most ``(MATCH_TARGET - 1) * players //
    (players - 1)`` rounds, and the next one ends the match; under ``eliminate_25``
    every round adds at least 1 point to some player still in, and the players can take
    fewer than ``MATCH_TARGET * players`` points in all before at most one is left.
    """
    if kind == MatchKind.ROUNDS:
        return int(n_rounds)
    if kind == MatchKind.TO_25:
        return (MATCH_TARGET - 1) * players // (players - 1) + 1
    return MATCH_TARGET * players + 1
