"""``net:path/model.zip``: an action-scoring network trained by ``kc-sim train`` as a compiled
kc-sim agent, wherever agents are named (tournaments, bench-agent, play, ``BatchEnv`` opponents).

The model file is data (:mod:`kc_sim.net.model_file`: a JSON header and ``.npy`` arrays,
nothing unpickled) of format ``kc-sim/action-net``, version 1:

* header: ``encoding`` (the ``actions`` encoding it was trained on, e.g. ``actions/1``; a model
  trained on another version is refused), ``h1``, ``h2`` (hidden sizes), ``players``, ``rules``
  (what it was trained for; it plays any table, but was measured on this one) and ``training``
  (the recipe's settings and figures, for people);
* arrays: ``params`` (float32, the vector :mod:`kc_sim.net.policy` evaluates) and, for
  ``kc-sim train --resume``, the training's own state (``value.*``: the baseline network).

Loading checks the format, the version, the encoding, that the parameters make a network of
the declared sizes and that every weight is finite; then the weights go into one of the
network policy's slots and the agent is that slot's compiled policy: it plays in the compiled
round loop, needs neither torch nor any learning library, and loads in every worker process
from the file by its name.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from kc_sim.net.encodings import check_encoding, encoding_id
from kc_sim.errors import UserError
from kc_sim.net.policy import load_slot, param_size, slot_policy
from kc_sim.play.agents.interface import AgentSpec
from kc_sim.net.model_file import Model, read_model, write_model
from kc_sim.records.untrusted import preview

__all__ = ["FORMAT", "VERSION", "NetModel", "read_net", "write_net", "load"]

FORMAT = "kc-sim/action-net"
VERSION = 1
PREFIX = "net"


class NetModel:
    """A network model: its ``params`` vector, ``header`` and any ``extra`` arrays."""

    def __init__(self, params: np.ndarray, header: dict, extra: dict | None = None):
        self.params = np.ascontiguousarray(params, dtype=np.float32)
        self.header = dict(header)
        self.extra = dict(extra or {})

    @property
    def h1(self) -> int:
        return int(self.params[0])

    @property
    def h2(self) -> int:
        return int(self.params[1])


def write_net(path, params: np.ndarray, *, players: int, rules: str, training: dict | None = None,
              extra: dict | None = None) -> str:
    """Write a network model to ``path`` (atomically); returns the file's SHA-256."""
    params = np.ascontiguousarray(params, dtype=np.float32)
    header = {"encoding": encoding_id("actions"), "h1": int(params[0]), "h2": int(params[1]),
              "players": int(players), "rules": str(rules), "training": dict(training or {})}
    arrays = {"params": params} | {k: np.ascontiguousarray(v) for k, v in (extra or {}).items()}
    return write_model(path, Model(FORMAT, VERSION, header, arrays))


def read_net(path) -> NetModel:
    """The network model in ``path``, checked (see the module doc); a one-line UserError otherwise."""
    m = read_model(path, format=FORMAT, versions=(VERSION,))
    h = m.header
    if check_encoding(h.get("encoding"), str(path)) != "actions":
        raise UserError(f"{path}: trained on the {preview(h.get('encoding'))} encoding: expected actions/N")
    p = m.arrays.get("params")
    sizes = (h.get("h1"), h.get("h2"))
    ok_sizes = all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 4096 for v in sizes) and sizes[0] >= 1
    if not ok_sizes:
        raise UserError(f"{path}: hidden sizes {preview(sizes)}: expected integers h1 >= 1 and h2 >= 0")
    want = param_size(*sizes)
    if p is None or p.dtype != np.float32 or p.shape != (want,):
        got = "none" if p is None else f"{p.dtype} {list(p.shape)}"
        raise UserError(f"{path}: params {got}: expected float32 [{want}] for hidden sizes {sizes[0]}, {sizes[1]}")
    if p[0] != sizes[0] or p[1] != sizes[1] or not np.all(np.isfinite(p)):
        raise UserError(f"{path}: params do not match the header's sizes or hold a non-finite weight")
    for k in ("players", "rules"):
        if k not in h:
            raise UserError(f"{path}: header without {k!r}")
    extra = {k: v for k, v in m.arrays.items() if k != "params"}
    return NetModel(p, h, extra)


@lru_cache(maxsize=None)
def _slot_of(path: str) -> tuple[int, NetModel]:
    """Load the model file once per process into a slot of its own."""
    net = read_net(path)
    return load_slot(net.params), net


def load(rest: str, name: str) -> AgentSpec:
    """The loader of ``net:`` names (entry point ``kc_sim.agent_loaders``)."""
    if not rest:
        raise UserError(f"bad agent {name!r}: expected net:path/to/model.zip (a model written by kc-sim train)")
    p = Path(rest).expanduser()
    if not p.is_file():
        raise UserError(f"bad agent {name!r}: no such file {rest!r} (expected net:path/to/model.zip, a model "
                        "written by kc-sim train)")
    try:
        k, net = _slot_of(str(p.resolve()))
    except UserError as e:
        raise UserError(f"bad agent {name!r}: {e}") from None
    t = net.header.get("training", {})
    what = (f"action-scoring network {net.h1}x{net.h2 or '-'} ({net.header.get('players')} players, "
            f"{t.get('recipe', 'trained')}{', ' + str(t.get('steps')) + ' steps' if t.get('steps') else ''})")
    return AgentSpec(name, what, policy=slot_policy(k), source=name)
