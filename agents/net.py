"""The ``net`` agent: the action-scoring networks that ship with kc-sim, played compiled.

Two models are data inside the package (:data:`MODELS`, ``kc-sim/action-net`` files,
:mod:`kc_sim.net.model`): one trained at a two-seat table, played there, and one trained at
four seats, played at every table of three or more (what holds at two seats, letting rounds
block rather than feed the other seat, does not carry to four, where a round blocks only when
every seat passes). Each is read through the same checked loader as any
``net:path/model.zip``: a JSON header and float32 arrays, nothing unpickled. Their weights go
into two of the network policy's slots (:mod:`kc_sim.net.policy`) and ``net`` is the compiled
policy that picks the slot by the table's seats, so it plays in the compiled round loop like
the other built-ins, with no search at play time: each decision scores every legal action by
its features (:mod:`kc_sim.net.features`) and plays the best.

How the shipped models were made (the command, seed, code version, budget and curves) and what
they reach against every built-in: results/README.md, "The shipped network".
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import as_file, files

from kc_sim.core.policy import MEM_SIZE
from kc_sim.net.features import WS_SIZE
from kc_sim.net.model import NetModel, read_net
from kc_sim.net.policy import load_slot, slot_policy
from kc_sim.play.agents.interface import AgentSpec

#: the shipped models, inside this package: the one played at a two-seat table, and the one
#: played at three seats or more
MODELS = {"two": "models/net.zip", "more": "models/net4.zip"}
#: the memory words the policy reads prepared each round: ``mem[0]`` and the features' workspace
MEM_WORDS = 1 + WS_SIZE
assert MEM_WORDS <= MEM_SIZE


def shipped_model(table: str = "two") -> NetModel:
    """The shipped model for ``table`` (a key of :data:`MODELS`), read and checked from the package data."""
    with as_file(files("agents") / MODELS[table]) as path:
        return read_net(path)


@lru_cache(maxsize=1)
def shipped_slots() -> tuple[tuple[int, int], dict[str, NetModel]]:
    """The slots holding the shipped models' weights in this process (loaded once): (two seats,
    more), and the models by table."""
    nets = {table: shipped_model(table) for table in MODELS}
    return (load_slot(nets["two"].params), load_slot(nets["more"].params)), nets


def _spec() -> AgentSpec:
    slots, nets = shipped_slots()
    two, more = nets["two"], nets["more"]
    t = two.header.get("training", {})
    what = (f"the network kc-sim ships ({two.h1} hidden units, {t.get('recipe', 'trained')}, "
            f"{t.get('steps', 0) / 1e6:.0f}M steps; another trained at {more.header['players']} seats plays "
            f"tables of 3 and more), no search: compiled, fast")
    return AgentSpec("net", what, policy=slot_policy(*slots), source="net", mem_words=MEM_WORDS)


#: the registered agent (entry point ``net``)
SPEC = _spec()
