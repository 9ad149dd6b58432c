"""A trained policy network evaluated with NumPy alone: the actor of an sb3(-contrib) MLP
policy, its weights copied out of torch.

Playing as a kc-sim agent or in the training's evaluations, the policy takes the most
probable *legal* action (masked argmax of the actor's logits), which is what
``MaskablePPO.predict(obs, action_masks=mask, deterministic=True)`` returns. Evaluating the
small MLP in NumPy avoids torch's per-call overhead (tens of microseconds for one
observation) and lets ``sb3:model.zip`` agents play in processes that never import torch:
``kc-sim train`` stores the weights inside the model's zip (``kc_sim_policy.npz``) beside the
settings it was trained with (``kc_sim.json``).
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field

import numpy as np

__all__ = ["PolicyNet", "ACTIVATIONS", "NPZ_NAME", "META_NAME"]

NPZ_NAME = "kc_sim_policy.npz"
META_NAME = "kc_sim.json"
ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0, out=x),
}


@dataclass
class PolicyNet:
    """Dense layers ``weights[k]`` (out x in, float32) and ``biases[k]``, the activation
    after every layer but the last, the last giving one logit per action id."""

    weights: list
    biases: list
    activation: str = "tanh"
    meta: dict = field(default_factory=dict)
    #: the opens head (:mod:`kc_sim.learn.opens_policy`): logits += opens_weight * obs[opens]
    opens_weight: float = 0.0

    @classmethod
    def from_sb3(cls, model, meta=None) -> "PolicyNet":
        """The actor of an sb3 ``ActorCriticPolicy`` with a flattening feature extractor and
        an MLP of Linear layers and one activation kind (sb3's default MlpPolicy)."""
        import torch.nn as nn

        policy = model.policy
        if type(policy.features_extractor).__name__ not in ("FlattenExtractor", "OpensExtractor"):
            raise ValueError(f"unsupported feature extractor {type(policy.features_extractor).__name__}")
        layers, kinds = [], set()
        for m in list(policy.mlp_extractor.policy_net) + [policy.action_net]:
            if isinstance(m, nn.Linear):
                layers.append(m)
            elif isinstance(m, nn.Tanh):
                kinds.add("tanh")
            elif isinstance(m, nn.ReLU):
                kinds.add("relu")
            else:
                raise ValueError(f"unsupported layer {type(m).__name__} in the policy network")
        if len(kinds) > 1:
            raise ValueError(f"mixed activations {sorted(kinds)} in the policy network")
        w = [m.weight.detach().cpu().numpy().astype(np.float32).copy() for m in layers]
        b = [m.bias.detach().cpu().numpy().astype(np.float32).copy() for m in layers]
        head = 0.0
        if hasattr(policy, "opens_weight"):          # the opens head, in logits per unit of opens
            from kc_sim.learn.opens_policy import OPENS_SCALE
            head = OPENS_SCALE * float(policy.opens_weight.detach().cpu().item())
        return cls(w, b, kinds.pop() if kinds else "tanh", dict(meta or {}), head)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """float32[B, actions] for observations float[B, n] (or one observation [n])."""
        x = obs = np.asarray(obs, dtype=np.float32)
        act = ACTIVATIONS[self.activation]
        last = len(self.weights) - 1
        for k, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = x @ w.T
            x += b
            if k < last:
                x = act(x)
        if self.opens_weight:
            x += self.opens_weight * obs[..., -x.shape[-1]:]
        return x

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The masked argmax action per row (int64[B]); ``mask`` bool/int [B, actions]."""
        z = self.logits(obs)
        z = np.where(np.asarray(mask, dtype=bool), z, -np.inf)
        return z.argmax(axis=-1).astype(np.int64)

    # --- inside a model zip -------------------------------------------------------------------
    def write_into(self, path) -> None:
        """Add the weights and settings to an existing zip (an sb3 model file)."""
        buf = io.BytesIO()
        arrays = {f"w{k}": w for k, w in enumerate(self.weights)} | {f"b{k}": b for k, b in enumerate(self.biases)}
        np.savez(buf, **arrays)
        with zipfile.ZipFile(path, "a") as z:
            z.writestr(NPZ_NAME, buf.getvalue())
            z.writestr(META_NAME, json.dumps(self.meta | {"activation": self.activation,
                                                          "opens_weight": self.opens_weight}, indent=1))

    @classmethod
    def read_from(cls, path) -> "PolicyNet | None":
        """The net stored by :meth:`write_into`, or None if the zip has none."""
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if NPZ_NAME not in names:
                return None
            meta = json.loads(z.read(META_NAME)) if META_NAME in names else {}
            with np.load(io.BytesIO(z.read(NPZ_NAME))) as f:
                n = len([k for k in f.files if k.startswith("w")])
                w = [f[f"w{k}"] for k in range(n)]
                b = [f[f"b{k}"] for k in range(n)]
        return cls(w, b, meta.pop("activation", "tanh"), meta, float(meta.pop("opens_weight", 0.0)))
