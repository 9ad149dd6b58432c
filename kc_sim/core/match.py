"""The match rule (docs/rules.md, Matches): when a match is over and who wins it.

A match is rounds played until the match switch says stop. Each round adds every
player's penalty to their total. ``to_25``: the match ends after the first round in
which some total reaches 25 (``MATCH_TARGET``). ``rounds:N``: it ends after N rounds.
``eliminate_25``: a player whose total reaches 25 leaves the match; it ends when at
most one player is left. The winners are the players with the lowest total (ties
share the win); under ``eliminate_25`` the last player left, or, when the last ones
were eliminated together, the lowest total among them.

How a match is dealt: round ``r`` of the match with seed S is dealt from
``derive(S, ROUND_STREAM + r)`` (:func:`round_seed`); the first dealer is drawn from S
(``kc_sim.core.step.first_dealer``), and the deal passes left after every round, skipping
players out of the match (:func:`pass_deal`); under eliminate_25 only the players still in
are seated, in match-seat order (:func:`seat_round`). The compiled match loop
(``kc_sim.core.loop``) and the match driven from Python (``kc_sim.play.driver.match``) both
play a match with these functions, so they deal and score it the same way.
"""

import numba as nb
import numpy as np

from kc_sim.core.rng import derive
from kc_sim.core.rows import M_ROUNDS, M_SEED, M_TOTAL, M_WINNERS
from kc_sim.game.variants import MATCH_TARGET, MatchKind

#: the streams of a match seed the rounds are dealt from (:func:`round_seed`)
ROUND_STREAM = 0x726F756E


@nb.njit(cache=True)
def round_seed(match_seed, r):
    """The deal seed of round ``r`` (from 0) of the match with seed ``match_seed``."""
    return derive(match_seed, ROUND_STREAM + r)


@nb.njit(cache=True)
def seat_round(active, players, dealer, seat_map):
    """Seat the next round: the match seats still in, in match-seat order, go to
    ``seat_map[:k]`` (round seat -> match seat). Returns ``k`` and the round seat of
    ``dealer`` (a match seat)."""
    k = 0
    round_dealer = 0
    for s in range(players):
        if active[s]:
            if s == dealer:
                round_dealer = k
            seat_map[k] = s
            k += 1
    return k, round_dealer


@nb.njit(cache=True)
def add_round(kind, n_rounds, rounds_played, totals, active, last_active, seat_map, penalties, k, players):
    """Add the penalties of the round just played (by round seat, ``k`` seats seated by
    ``seat_map``) to the match totals, ``rounds_played`` counting it. Returns whether the
    match is over (:func:`match_over`, which takes the eliminated out of ``active``;
    ``last_active`` keeps who was in before)."""
    for s in range(k):
        totals[seat_map[s]] += penalties[s]
    for s in range(players):
        last_active[s] = active[s]
    return match_over(kind, n_rounds, rounds_played, totals, active, players)


@nb.njit(cache=True)
def pass_deal(dealer, active, players):
    """The next round's dealer: the deal passes left, skipping the players out of the match."""
    dealer = (dealer + 1) % players
    while not active[dealer]:
        dealer = (dealer + 1) % players
    return dealer


@nb.njit(cache=True)
def write_match(out, seed, rounds, winners, totals, players):
    """The match row (``kc_sim.core.rows``' ``M_*`` columns) into ``out`` (one row)."""
    out[M_SEED] = seed
    out[M_ROUNDS] = rounds
    out[M_WINNERS] = winners
    for s in range(out.shape[0] - M_TOTAL):
        out[M_TOTAL + s] = totals[s] if s < players else -1


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
