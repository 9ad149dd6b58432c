"""Pairs of agents in a round: the one home of two rules every pairwise figure uses.

* **The pairs of a round** (:func:`seat_pairs`): every ordered pair of seats ``(s, t)``,
  ``s != t``, both dealt in and held by different agents. The tally's head-to-head sums,
  the leaderboard's comparisons and the coverage study's truth all expand a round this way
  (an unordered comparison is the ordered pair whose first agent has the lower index).
* **Finishes ahead** (:func:`ahead`, :func:`ahead_of`): of two agents in a round, the one
  with the lower penalty finishes ahead; equal penalties count half for each. It is the
  score of the head-to-head tables, the leaderboard's Bradley-Terry comparisons, the
  per-deal paired score of early stopping, control variates and power
  (:func:`kc_sim.stats.paired.pair_deal_scores`). In a two-player round that went out it is
  the win; a blocked round still ranks the two hands.

numpy only (workers import this through :class:`~kc_sim.stats.tally.Tally`).
"""

from __future__ import annotations

import numpy as np


def seat_pairs(seat_agent, dealt) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every ordered pair of seats of every round, both dealt in and held by different
    agents: ``(rows, seat_a, seat_b)`` (each of the same length; rows in order, and within a
    round the pairs ``(0, 1), (0, 2), ..., (1, 0), ...``). ``seat_agent`` (R, k) agent index
    by seat; ``dealt`` (R, k) True where the seat was dealt in."""
    seat_agent = np.asarray(seat_agent)
    dealt = np.asarray(dealt, dtype=bool)
    k = seat_agent.shape[1]
    si, ti = (x.ravel() for x in np.nonzero(~np.eye(k, dtype=bool)))
    both = dealt[:, si] & dealt[:, ti] & (seat_agent[:, si] != seat_agent[:, ti])
    rows, j = np.nonzero(both)
    return rows, si[j], ti[j]


def ahead_of(beat, tie):
    """The finishes-ahead score from rounds (or sums of rounds) won on penalty, ``beat``, and
    tied, ``tie``: ``beat + tie / 2``."""
    return beat + 0.5 * tie


def ahead(penalty_a, penalty_b):
    """The finishes-ahead score of a over b in each round: 1 for a lower penalty, 1/2 for an
    equal one, 0 for a higher one (:func:`ahead_of`)."""
    return ahead_of(penalty_a < penalty_b, penalty_a == penalty_b)
