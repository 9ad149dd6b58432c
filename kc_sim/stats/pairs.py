"""Agents in a round: the one home of the rules every per-agent and pairwise figure uses.

* **Agents by name** (:func:`agent_index`): an agent name becomes its index in the run's
  list of agents, and a seat without an agent (null) or a name not in the list becomes -1;
  every reader of parts, files or dataframes goes through it.
* **The pairs of a round** (:func:`seat_pairs`): every ordered pair of seats ``(s, t)``,
  ``s != t``, both dealt in and held by different agents. The tally's head-to-head sums,
  the leaderboard's comparisons and the coverage study's truth all expand a round this way
  (the leaderboard takes each unordered pair once, its lower agent index first).
* **Position in turn order** (:func:`turn_positions`): 0 for the seat that plays first
  (left of the dealer), then clockwise. The dealer is drawn for every deal, so a seat's
  number averages the positions out; the first-player edge shows by position.
* **Finishes ahead** (:func:`ahead`, :func:`ahead_of`): of two agents in a round, the one
  with the lower penalty finishes ahead; equal penalties count half for each. It is the
  score of the head-to-head tables, the leaderboard's Bradley-Terry comparisons, the
  per-deal paired score of early stopping, control variates and power
  (:func:`kc_sim.stats.paired.pair_deal_scores`). In a two-player round that went out it is
  the win; a blocked round still ranks the two hands.

numpy only (workers import this through :class:`~kc_sim.stats.tally.Tally`).
"""

from __future__ import annotations

import itertools

import numpy as np


def seat_pairs(seat_agent, dealt, ordered: bool = True):
    """The pairs of seats of the rounds, one pair of seats at a time: yields ``(s, t, rows)``
    for every pair of seats, ``rows`` the rounds in which both were dealt in and held by
    different agents. ``ordered``: both ``(s, t)`` and ``(t, s)``, in the order ``(0, 1), (0,
    2), ..., (1, 0), ...``; otherwise ``s < t`` only. ``seat_agent`` (R, k) agent index by
    seat; ``dealt`` (R, k) True where the seat was dealt in. A round has a few seats and a part
    many rows, so the callers work on the columns of one pair of seats at a time."""
    seat_agent = np.asarray(seat_agent)
    dealt = np.asarray(dealt, dtype=bool)
    for s, t in (itertools.permutations if ordered else itertools.combinations)(range(seat_agent.shape[1]), 2):
        yield s, t, np.flatnonzero(dealt[:, s] & dealt[:, t] & (seat_agent[:, s] != seat_agent[:, t]))


def turn_positions(first, seat, players: int):
    """The position in turn order of ``seat`` in rounds whose first player sat at ``first``
    (arrays alike, or scalars): 0 plays first, ``players - 1`` last. A seat left out of a
    match round keeps its place, as the run's report counts positions."""
    return (np.asarray(seat) - np.asarray(first)) % players


def ahead_of(beat, tie):
    """The finishes-ahead score from rounds (or sums of rounds) won on penalty, ``beat``, and
    tied, ``tie``: ``beat + tie / 2``."""
    return beat + 0.5 * tie


def ahead(penalty_a, penalty_b):
    """The finishes-ahead score of a over b in each round: 1 for a lower penalty, 1/2 for an
    equal one, 0 for a higher one (:func:`ahead_of`)."""
    return ahead_of(penalty_a < penalty_b, penalty_a == penalty_b)


def agent_index(names, index: dict) -> np.ndarray:
    """The agent index of each of ``names`` (agent names; None for a seat without one) in
    ``index`` (name -> index), -1 for None or a name not in ``index`` (int64)."""
    return np.array([index.get(n, -1) if n is not None else -1 for n in names], dtype=np.int64)
