"""``sb3:path/model.zip``: a policy trained by ``kc-sim train`` (or any sb3 MaskablePPO/PPO
MLP model over kc-sim's observations) as a kc-sim agent, wherever agents are named.

At each decision the agent builds its seat's observation from what it is shown (the
:class:`~kc_sim.play.observation.SeatView`, :func:`kc_sim.env.obs_vector.vector_from_view`,
then the planes if the model was trained on them) and plays the most probable legal
action of the policy network (the deterministic choice). A model written by ``kc-sim
train`` carries its weights as NumPy arrays, so the agent needs neither torch nor sb3;
another sb3 model is read once with sb3 (the ``train`` extra) and its actor copied out.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from kc_sim.env.obs_planes import OBSERVATIONS, SIZES, encode_into
from kc_sim.env.obs_vector import OBS_SIZE, vector_from_view
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.learn.policy_net import PolicyNet
from kc_sim.play.agent import AgentSpec, PythonAgent

__all__ = ["SB3Agent", "load", "load_net"]


@lru_cache(maxsize=8)
def load_net(path: str) -> PolicyNet:
    """The policy network of the model file ``path`` (read once per process)."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise UserError(f"bad agent 'sb3:{path}': no such file (expected sb3:path/to/model.zip, "
                        "a model written by kc-sim train)")
    try:
        net = PolicyNet.read_from(p)
    except Exception as e:  # not a zip, or a damaged one
        raise UserError(f"bad agent 'sb3:{path}': not an sb3 model file ({type(e).__name__}: {e})") from None
    if net is None:
        try:
            from sb3_contrib import MaskablePPO
        except ImportError:
            raise UserError(f"agent 'sb3:{path}' has no kc-sim weights inside; reading it with sb3 needs the "
                            "train extra: pip install 'kc-sim[train]'") from None
        model = MaskablePPO.load(p, device="cpu")
        size = model.observation_space.shape[0]
        kind = {n: k for k, n in SIZES.items()}.get(size)
        if kind is None:
            raise UserError(f"bad agent 'sb3:{path}': its observations have {size} values, not one of kc-sim's "
                            f"encodings ({', '.join(f'{k} {n}' for k, n in SIZES.items())})")
        net = PolicyNet.from_sb3(model, {"observation": kind})
    if net.meta.get("observation", "planes") not in OBSERVATIONS:
        raise UserError(f"bad agent 'sb3:{path}': unknown observation {net.meta.get('observation')!r}")
    return net


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
