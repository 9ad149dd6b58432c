"""The names and versions of kc-sim's environments and encodings: what other programs and
stored models refer to.

As PettingZoo names its environments ``tictactoe_v3`` and pgx bumps ``env.version``, the
environments carry one version, ``ENV_VERSION``, in every name they are registered under:

* PettingZoo: ``metadata["name"]`` = ``kings_in_the_corner_v1`` (:mod:`kc_sim.env.aec`);
* Gymnasium: ``gymnasium.make("kc_sim/KingsInTheCorner-v1")`` (:mod:`kc_sim.env.gym_env`);
* OpenSpiel: ``pyspiel.load_game("python_kings_in_the_corner_v1")`` (:mod:`kc_sim.env.openspiel_game`).

The version goes up when an environment behaves differently for the same seeds and actions
(rewards, observations, turn order, what an illegal action does).

Each observation encoding has its own version (``ENCODINGS``), raised whenever a value it
gives changes. A trained model stores the encoding it was trained on as ``name/version``
(:func:`encoding_id`); loading it calls :func:`check_encoding`, so a model never plays on
inputs that mean something else than they did in training.

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

from kc_sim.errors import UserError

__all__ = ["ENV_VERSION", "AEC_NAME", "GYM_ID", "OPENSPIEL_NAME", "ENCODINGS", "encoding_id", "check_encoding"]

#: the environments' version (see the module doc)
ENV_VERSION = 1
AEC_NAME = f"kings_in_the_corner_v{ENV_VERSION}"
GYM_ID = f"kc_sim/KingsInTheCorner-v{ENV_VERSION}"
OPENSPIEL_NAME = f"python_kings_in_the_corner_v{ENV_VERSION}"

#: each observation encoding's version: ``vector`` (int8[143], :mod:`kc_sim.env.obs_vector`),
#: ``planes`` and ``planes_opens`` (:mod:`kc_sim.env.obs_planes`), ``actions`` (per-action
#: features, :mod:`kc_sim.env.obs_actions`)
ENCODINGS = {"vector": 1, "planes": 1, "planes_opens": 1, "actions": 1}


def encoding_id(name: str) -> str:
    """``name/version`` of the encoding ``name`` as it is now, what a model stores."""
    return f"{name}/{ENCODINGS[name]}"


def check_encoding(stored: str, what: str) -> str:
    """The encoding name of a model's stored ``name/version`` (a bare name counts as version
    1, what models written before versions were stored were trained on); a one-line
    UserError, naming ``what`` (the model), if kc-sim no longer has that encoding at that version."""
    name, _, version = str(stored).partition("/")
    if name not in ENCODINGS:
        raise UserError(f"bad model {what}: trained on the unknown observation encoding {stored!r} "
                        f"(kc-sim has {', '.join(encoding_id(n) for n in ENCODINGS)})")
    try:
        v = int(version) if version else 1
    except ValueError:
        raise UserError(f"bad model {what}: bad encoding version in {stored!r} (expected name/number)") from None
    if v != ENCODINGS[name]:
        raise UserError(f"model {what} was trained on the encoding {name}/{v}, but this kc-sim computes "
                        f"{encoding_id(name)}: its inputs would mean something else; retrain it, or use the "
                        "kc-sim version it was trained with")
    return name
