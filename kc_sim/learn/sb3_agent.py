"""``sb3:path/model.zip``: a policy trained by ``kc-sim train`` (or an sb3 MaskablePPO/PPO MLP
model converted with :func:`import_sb3`) as a kc-sim agent, wherever agents are named.

At each decision the agent builds its seat's observation from what it is shown (the
:class:`~kc_sim.play.table.view.SeatView`, :func:`kc_sim.env.obs_vector.vector_from_view`,
then the planes if the model was trained on them) and plays the most probable legal
action of the policy network (the deterministic choice). A model written by ``kc-sim
train`` carries its weights as a kc-sim model file inside the zip (a JSON header and NumPy
arrays, :mod:`kc_sim.net.model_file`), so the agent needs neither torch nor sb3 and
nothing in the file is unpickled or run. A zip without that part (any other sb3 model) is
refused: sb3's own loader unpickles, which runs code. :func:`import_sb3` converts an sb3
model that you trust.
"""

from __future__ import annotations

import zipfile
from functools import lru_cache
from pathlib import Path

import numpy as np

from kc_sim.env.obs_planes import OBSERVATIONS, SIZES, encode_into
from kc_sim.env.obs_vector import OBS_SIZE, vector_from_view
from kc_sim.net.encodings import check_encoding, encoding_id
from kc_sim.errors import UserError
from kc_sim.game.actions import N_ACTIONS
from kc_sim.game.rules import parse_rules
from kc_sim.learn.policy_net import PolicyNet
from kc_sim.play.agents.interface import AgentSpec, PythonAgent
from kc_sim.net.model_file import HEADER_ENTRY, holds_model
from kc_sim.records.untrusted import preview

__all__ = ["SB3Agent", "load", "load_net", "import_sb3"]


@lru_cache(maxsize=8)
def load_net(path: str) -> PolicyNet:
    """The policy network of the model file ``path`` (read once per process), through the
    checked model-file reader: nothing in the file is unpickled or run."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise UserError(f"bad agent 'sb3:{path}': no such file (expected sb3:path/to/model.zip, "
                        "a model written by kc-sim train)")
    if not holds_model(p) and zipfile.is_zipfile(p):
        raise UserError(f"bad agent 'sb3:{path}': a zip without kc-sim's part ({HEADER_ENTRY}); kc-sim plays only "
                        "models written by kc-sim train, since sb3's own loader unpickles and so can run code from "
                        "the file (for an sb3 model you trust: kc_sim.learn.sb3_agent.import_sb3)")
    try:
        net = PolicyNet.read_from(p)
    except UserError as e:
        raise UserError(f"bad agent 'sb3:{path}': {e}") from None
    kind = net.meta.get("observation", "planes")
    if kind not in OBSERVATIONS:
        raise UserError(f"bad agent 'sb3:{path}': unknown observation {preview(kind)}: expected one of "
                        f"{', '.join(OBSERVATIONS)}")
    if check_encoding(net.meta.get("encoding", kind), f"'sb3:{path}'") != kind:
        raise UserError(f"bad agent 'sb3:{path}': its encoding {preview(net.meta.get('encoding'))} is not its "
                        f"observation {kind!r}")
    size, actions = net.weights[0].shape[1], net.weights[-1].shape[0]
    if size != SIZES[kind] or actions != N_ACTIONS:
        raise UserError(f"bad agent 'sb3:{path}': a network from {size} inputs to {actions} actions, but the "
                        f"{kind} observation has {SIZES[kind]} values and kc-sim {N_ACTIONS} actions")
    return net


def import_sb3(src, dst) -> Path:
    """Write the actor of the sb3 MaskablePPO/PPO model ``src`` into ``dst`` as a model kc-sim
    plays (``sb3:dst``). **This runs sb3's loader, which unpickles ``src`` and so runs any code
    it holds: use it only on a file you trust.** Needs the train extra."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(src, device="cpu")
    size = model.observation_space.shape[0]
    kind = {n: k for k, n in SIZES.items()}.get(size)
    if kind is None:
        raise UserError(f"{src}: its observations have {size} values, not one of kc-sim's encodings "
                        f"({', '.join(f'{k} {n}' for k, n in SIZES.items())})")
    dst = Path(dst)
    model.save(dst)
    PolicyNet.from_sb3(model, {"observation": kind, "encoding": encoding_id(kind)}).write_into(dst)
    return dst


class SB3Agent(PythonAgent):
    """A trained policy network: the most probable legal action in the seat's observation."""

    path = ""

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.net = load_net(self.path)
        self.kind = self.net.meta.get("observation", "planes")
        self._vec = np.zeros(OBS_SIZE, dtype=np.int8)
        self._mask = np.zeros(self.net.weights[-1].shape[0], dtype=bool)
        self._planes = np.zeros(SIZES[self.kind], dtype=np.float32)
        self._rules = None

    def act(self, obs):
        legal = obs.legal
        if len(legal) == 1:
            return legal[0]
        v = vector_from_view(obs, self._vec)
        if self.kind != "vector":
            if self._rules is not obs.rules:
                self._rules = obs.rules
                self._codes = parse_rules(obs.rules).codes()
            v = encode_into(v, self._codes, self.kind, self._planes)
        z = self.net.logits(v)
        idx = np.fromiter(legal, dtype=np.int64, count=len(legal))
        return int(idx[int(np.argmax(z[idx]))])


def load(rest: str, name: str) -> AgentSpec:
    """The loader of ``sb3:`` names (entry point ``kc_sim.agent_loaders``)."""
    if not rest:
        raise UserError(f"bad agent {name!r}: expected sb3:path/to/model.zip")
    net = load_net(rest)
    cls = type("SB3Agent", (SB3Agent,), {"path": rest, "name": name,
                                          "__doc__": f"trained policy {Path(rest).name}"})
    steps = net.meta.get("steps")
    what = (f"MaskablePPO policy ({net.meta.get('observation', 'planes')} observation"
            + (f", {steps:,} steps vs {net.meta.get('opponents')}" if steps else "") + ")")
    return AgentSpec(name, what, factory=cls, source=name)
