"""The ``net`` agent: the action-scoring network that ships with kc-sim, played compiled.

The model is data inside the package (``agents/models/net.zip``, a ``kc-sim/action-net``
file, :mod:`kc_sim.net.model`), read through the same checked loader as any
``net:path/model.zip``: a JSON header and float32 arrays, nothing unpickled. Its weights go
into one of the network policy's slots (:mod:`kc_sim.net.policy`), so it plays in the
compiled round loop like the other built-ins, with no search at play time: each decision
scores every legal action by its features (:mod:`kc_sim.net.features`) and plays the best.

How the shipped model was made (the command, seed, code version, budget and curves) and what
it reaches against every built-in: results/README.md, "The shipped network".
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import as_file, files

from kc_sim.core.policy import MEM_SIZE
from kc_sim.net.features import WS_SIZE
from kc_sim.net.model import NetModel, read_net
from kc_sim.net.policy import load_slot, slot_policy
from kc_sim.play.agents.interface import AgentSpec

#: the shipped model, inside this package
MODEL = "models/net.zip"
#: the memory words the policy reads prepared each round: ``mem[0]`` and the features' workspace
MEM_WORDS = 1 + WS_SIZE
assert MEM_WORDS <= MEM_SIZE


def shipped_model() -> NetModel:
    """The shipped model, read and checked from the package data."""
    with as_file(files("agents") / MODEL) as path:
        return read_net(path)


@lru_cache(maxsize=1)
def shipped_slot() -> tuple[int, NetModel]:
    """The slot holding the shipped model's weights in this process (loaded once), and the model."""
    net = shipped_model()
    return load_slot(net.params), net


def _spec() -> AgentSpec:
    k, net = shipped_slot()
    t = net.header.get("training", {})
    what = (f"the network kc-sim ships ({net.h1} hidden units, {t.get('recipe', 'trained')}, "
            f"{t.get('steps', 0) / 1e6:.0f}M steps), no search: compiled, fast")
    return AgentSpec("net", what, policy=slot_policy(k), source="net", mem_words=MEM_WORDS)


#: the registered agent (entry point ``net``)
SPEC = _spec()
