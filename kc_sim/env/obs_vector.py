"""The observation vector of kc-sim's environments (the PettingZoo AEC env in
:mod:`kc_sim.env.aec` and the batched env in :mod:`kc_sim.env.batch`): 143 int8 holding
what one seat may see, seats counted relative to it. The layout table is in
:mod:`kc_sim.env.aec`'s docstring and docs/environments.md. No PettingZoo needed here.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from kc_sim.core import layout as L

# --- the observation layout --------------------------------------------------------------------
O_HAND, O_TABLE, O_BASE, O_TOP, O_SIZE, O_HAND_SIZES = 0, 52, 104, 112, 120, 128
O_STOCK, O_TO_ACT, O_DEALER, O_TURN_ACTIONS, O_DREW, O_SEAT, O_PLAYERS = range(136, 143)
OBS_SIZE = 143

#: name -> slice of the observation vector
OBS = {
    "hand": slice(O_HAND, O_HAND + 52),
    "table": slice(O_TABLE, O_TABLE + 52),
    "base": slice(O_BASE, O_BASE + 8),
    "top": slice(O_TOP, O_TOP + 8),
    "size": slice(O_SIZE, O_SIZE + 8),
    "hand_sizes": slice(O_HAND_SIZES, O_HAND_SIZES + L.MAX_SEATS),
    "stock": slice(O_STOCK, O_STOCK + 1),
    "to_act": slice(O_TO_ACT, O_TO_ACT + 1),
    "dealer": slice(O_DEALER, O_DEALER + 1),
    "turn_actions": slice(O_TURN_ACTIONS, O_TURN_ACTIONS + 1),
    "drew": slice(O_DREW, O_DREW + 1),
    "seat": slice(O_SEAT, O_SEAT + 1),
    "players": slice(O_PLAYERS, O_PLAYERS + 1),
}
_BOUNDS = {  # name: (low, high)
    "hand": (0, 2), "table": (0, 2), "base": (-1, 51), "top": (-1, 51), "size": (0, 13),
    "hand_sizes": (-1, 104), "stock": (0, 104), "to_act": (-1, L.MAX_SEATS - 1),
    "dealer": (0, L.MAX_SEATS - 1), "turn_actions": (0, 127), "drew": (-1, 51),
    "seat": (0, L.MAX_SEATS - 1), "players": (2, L.MAX_SEATS),
}
OBS_LOW = np.zeros(OBS_SIZE, dtype=np.int8)
OBS_HIGH = np.zeros(OBS_SIZE, dtype=np.int8)
for _name, _sl in OBS.items():
    OBS_LOW[_sl], OBS_HIGH[_sl] = _BOUNDS[_name]


def split_observation(observation) -> dict[str, np.ndarray]:
    """An observation vector (or the ``observe()`` dict) cut into its named parts
    (one-element parts as plain ints)."""
    if isinstance(observation, dict):
        observation = observation["observation"]
    obs = np.asarray(observation)
    return {k: (int(obs[sl][0]) if sl.stop - sl.start == 1 else obs[sl]) for k, sl in OBS.items()}


@nb.njit(cache=True)
def fill_observation(st, seat, out):
    """Write what ``seat`` may see of round state ``st`` into the int8 vector ``out``."""
    out[:] = 0
    h0 = st[L.HAND + 2 * seat]
    h1 = st[L.HAND + 2 * seat + 1]
    for c in range(52):
        out[O_HAND + c] = ((h0 >> c) & 1) + ((h1 >> c) & 1)
    for p in range(8):
        m = st[L.PILE_MASK + p]
        for c in range(52):
            if (m >> c) & 1:
                out[O_TABLE + c] += 1
        out[O_BASE + p] = st[L.PILE_BASE + p]
        out[O_TOP + p] = st[L.PILE_TOP + p]
        out[O_SIZE + p] = st[L.PILE_SIZE + p]
    players = st[L.PLAYERS]
    for r in range(L.MAX_SEATS):
        out[O_HAND_SIZES + r] = st[L.HAND_N + (seat + r) % players] if r < players else -1
    out[O_STOCK] = st[L.STOCK_LEN] - st[L.STOCK_POS]
    done = st[L.DONE] != 0
    out[O_TO_ACT] = -1 if done else (st[L.SEAT] - seat) % players
    out[O_DEALER] = (st[L.DEALER] - seat) % players
    own = (not done) and st[L.SEAT] == seat
    out[O_TURN_ACTIONS] = min(st[L.TURN_ACTIONS], 127) if own else 0
    out[O_DREW] = st[L.DREW] if own else -1
    out[O_SEAT] = seat
    out[O_PLAYERS] = players




def vector_from_view(view, out=None) -> np.ndarray:
    """The observation vector of the seat to act, from its :class:`~kc_sim.play.table.view.SeatView`
    (what a Python agent is given), equal to :func:`fill_observation` on the round's state for
    that seat: so a policy trained on the environments plays as an agent from the view alone."""
    out = np.zeros(OBS_SIZE, dtype=np.int8) if out is None else out
    hands = np.array([view.hand_mask, view.hand_mask2], dtype=np.uint64)
    out[O_HAND:O_HAND + 52] = ((hands[:, None] >> _CARD_BITS) & 1).sum(axis=0)
    piles = (np.array(view.pile_masks, dtype=np.uint64)[:, None] >> _CARD_BITS) & 1
    out[O_TABLE:O_TABLE + 52] = piles.sum(axis=0)
    out[O_BASE:O_BASE + 8] = view.bases
    out[O_TOP:O_TOP + 8] = view.tops
    out[O_SIZE:O_SIZE + 8] = piles.sum(axis=1)
    seat, players, sizes = view.seat, view.players, view.hand_sizes
    out[O_HAND_SIZES:O_HAND_SIZES + L.MAX_SEATS] = [sizes[(seat + r) % players] if r < players else -1
                                                    for r in range(L.MAX_SEATS)]
    drew = view.drew
    out[O_STOCK:] = (view.stock_size, 0, (view.dealer - seat) % players, min(view.turn_actions, 127),
                     -1 if drew is None else drew, seat, players)
    return out


_CARD_BITS = np.arange(52, dtype=np.uint64)
