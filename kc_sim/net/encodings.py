"""The observation encodings and their versions: what a stored model names as its inputs.

Each observation encoding has its own version (``ENCODINGS``), raised whenever a value it
gives changes. A trained model stores the encoding it was trained on as ``name/version``
(:func:`encoding_id`); loading it calls :func:`check_encoding`, so a model never plays on
inputs that mean something else than they did in training.
"""

from __future__ import annotations

from kc_sim.errors import UserError

__all__ = ["ENCODINGS", "encoding_id", "check_encoding"]

#: each observation encoding's version: ``vector`` (int8[143], :mod:`kc_sim.env.obs_vector`),
#: ``planes`` and ``planes_opens`` (:mod:`kc_sim.env.obs_planes`), ``actions`` (per-action
#: features, :mod:`kc_sim.net.features`)
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
