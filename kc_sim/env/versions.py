"""The names and versions of kc-sim's environments and encodings: what other programs and
stored models refer to.

As PettingZoo names its environments ``tictactoe_v3`` and pgx bumps ``env.version``, the
environments carry one version, ``ENV_VERSION``, in every name they are registered under:

* PettingZoo: ``metadata["name"]`` = ``kings_in_the_corner_v1`` (:mod:`kc_sim.env.aec`);
* Gymnasium: ``gymnasium.make("kc_sim/KingsInTheCorner-v1")`` (:mod:`kc_sim.env.gym_env`);
* OpenSpiel: ``pyspiel.load_game("python_kings_in_the_corner_v1")`` (:mod:`kc_sim.env.openspiel_game`).

The version goes up when an environment behaves differently for the same seeds and actions
(rewards, observations, turn order, what an illegal action does).

The observation encodings' own versions, which stored models name, live with the models
(:mod:`kc_sim.net.encodings`).

History
    * v0 (kc-sim 0.1, ``kc_sim.ui.env``): ``kings_in_the_corner_v0``; the OpenSpiel game was
      ``python_kings_in_the_corner``. The batched and Gymnasium envs raised a plain
      ``ValueError`` on an illegal action.
    * v1: the environments in their own package, one step for every adapter
      (:mod:`kc_sim.env.step`); an illegal action raises
      :class:`~kc_sim.play.table.game.IllegalActionError` (a ``ValueError``) in every adapter that
      raises; versioned names. Rounds, observations and rewards are those of v0.
"""

from __future__ import annotations

__all__ = ["ENV_VERSION", "AEC_NAME", "GYM_ID", "OPENSPIEL_NAME"]

#: the environments' version (see the module doc)
ENV_VERSION = 1
AEC_NAME = f"kings_in_the_corner_v{ENV_VERSION}"
GYM_ID = f"kc_sim/KingsInTheCorner-v{ENV_VERSION}"
OPENSPIEL_NAME = f"python_kings_in_the_corner_v{ENV_VERSION}"
