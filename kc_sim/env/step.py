"""The environment step, written once (as pgx's ``Env.step``): every environment adapter
(the batched env and the Gymnasium envs over it, the PettingZoo AEC env, the OpenSpiel
game) moves a round with :func:`env_step` and shows a seat its position with :func:`observe`.

The rule, in short:

* a finished round takes no step: status ``FINISHED``, nothing changes;
* an illegal action changes nothing: status ``ILLEGAL``; what follows is the adapter's
  convention, written once in each adapter (table below);
* otherwise the action is applied (a stop closes the turn, drawing under ``draw=end``, and
  opens the next player's); on the step that ends the round every seat's reward is minus
  its penalty (docs/rules.md, Scoring), on every other step 0.

An illegal action, by adapter (each follows its library's convention):

=============================  ==========================================================
adapter                        an illegal action ...
=============================  ==========================================================
``BatchEnv.step``              raises :class:`IllegalActionError` before any env is stepped
``KcVectorEnv.step``           raises :class:`IllegalActionError` (it steps a BatchEnv)
``KcEnv(illegal="raise")``     raises :class:`IllegalActionError`
``KcEnv(illegal="lose")``      ends the round with reward -1, the worst (Gymnasium's checker
                               steps unmasked random actions)
``aec.raw_env``                raises :class:`IllegalActionError` saying why
``aec.env`` (wrapped)          PettingZoo's ``TerminateIllegalWrapper``: the round ends, the
                               offender gets ``illegal_reward`` (default minus
                               :func:`forfeit_reward`'s bound), the others 0
OpenSpiel ``apply_action``     raises :class:`IllegalActionError` saying why
=============================  ==========================================================

:class:`IllegalActionError` is :class:`kc_sim.play.table.game.IllegalActionError`, a ``ValueError``.
"""

from __future__ import annotations

import numba as nb

from kc_sim.core import layout as L
from kc_sim.core.legal import is_legal, legal_mask
from kc_sim.core.step import apply, stop
from kc_sim.env.obs_vector import fill_observation
from kc_sim.play.table.game import IllegalActionError  # noqa: F401 - the adapters' one exception, re-exported

__all__ = ["STEPPED", "FINISHED", "ILLEGAL", "INFO_SIZE", "I_CLOSED", "I_TURN_DREW", "I_DRAWER", "I_DRAWN",
           "IllegalActionError", "env_step", "observe", "forfeit_reward"]

#: env_step's status: the action was applied
STEPPED = 0
#: the round was already over: nothing applied
FINISHED = 1
#: the action is not legal: nothing applied
ILLEGAL = 2

#: what env_step writes into ``info`` (int64[INFO_SIZE]): whether the action closed a turn
#: (a stop, or the last card of a hand), the card drawn in that closed turn (-1: none; what a
#: game record's turn says it drew), and the one draw this step made: the seat and the card
#: (-1, -1 if none; under draw=end the closer draws, under start/if_stuck the next player)
I_CLOSED, I_TURN_DREW, I_DRAWER, I_DRAWN = 0, 1, 2, 3
INFO_SIZE = 4


@nb.njit(cache=True)
def env_step(st, a, rewards, info):
    """Step round ``st`` with action id ``a`` of the seat to act; returns STEPPED, FINISHED
    or ILLEGAL (see the module doc). ``rewards`` (float, at least ``players`` long) is set to
    0, or to minus each seat's penalty on the step that ends the round; ``info`` (int64[4]) as
    ``I_*`` say."""
    for i in range(rewards.shape[0]):
        rewards[i] = 0
    info[I_CLOSED] = 0
    info[I_TURN_DREW] = -1
    info[I_DRAWER] = -1
    info[I_DRAWN] = -1
    if st[L.DONE]:
        return FINISHED
    if not is_legal(st, a):
        return ILLEGAL
    if a == L.STOP:
        pos, closer = st[L.STOCK_POS], st[L.SEAT]
        info[I_CLOSED] = 1
        info[I_TURN_DREW] = stop(st)
        if st[L.STOCK_POS] > pos:
            # a stop draws once at most: the next player as its turn opens (its DREW set;
            # draw=start or if_stuck), else the closer (draw=end)
            info[I_DRAWER] = st[L.SEAT] if not st[L.DONE] and st[L.DREW] >= 0 else closer
            info[I_DRAWN] = st[L.STOCK + pos]
    else:
        apply(st, a)
        if st[L.DONE]:                        # out: the turn closes with the round, no draw
            info[I_CLOSED] = 1
            info[I_TURN_DREW] = st[L.DREW]
    if st[L.DONE]:
        for s in range(st[L.PLAYERS]):
            rewards[s] = -st[L.PENALTY + s]
    return STEPPED


@nb.njit(cache=True)
def observe(st, seat, obs, mask):
    """What ``seat`` sees of round ``st``: the observation vector (:mod:`kc_sim.env.obs_vector`)
    into ``obs`` and, when it is that seat's turn, its legal actions into ``mask`` (all 0 for
    other seats and once the round is over)."""
    fill_observation(st, seat, obs)
    if st[L.DONE] or st[L.SEAT] != seat:
        mask[:] = 0
    else:
        legal_mask(st, mask)


def forfeit_reward(rules) -> float:
    """The reward of a seat whose illegal action ends the round (the AEC env's default
    ``illegal_reward``): minus the penalty of a hand holding every card of the deck(s),
    worse than any real round (:attr:`kc_sim.game.rules.RuleSet.max_penalty`)."""
    return -float(rules.max_penalty)
