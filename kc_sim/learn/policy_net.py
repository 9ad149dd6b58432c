"""A trained policy network evaluated with NumPy alone: the actor of an sb3(-contrib) MLP
policy, its weights copied out of torch.

Playing as a kc-sim agent or in the training's evaluations, the policy takes the most
probable *legal* action (masked argmax of the actor's logits), which is what
``MaskablePPO.predict(obs, action_masks=mask, deterministic=True)`` returns. Evaluating the
small MLP in NumPy avoids torch's per-call overhead (tens of microseconds for one
observation) and lets ``sb3:model.zip`` agents play in processes that never import torch:
``kc-sim train`` stores the weights and the settings it was trained with inside the model's
zip, as a kc-sim model file (:mod:`kc_sim.net.model_file`: a JSON header and ``.npy``
arrays, read without unpickling) beside sb3's own entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kc_sim.errors import UserError
from kc_sim.net.model_file import Model, read_model, write_model
from kc_sim.records.untrusted import preview

__all__ = ["PolicyNet", "ACTIVATIONS", "FORMAT", "VERSION"]

#: the model-file format of a policy network (:mod:`kc_sim.net.model_file`)
FORMAT = "kc-sim/mlp-policy"
VERSION = 1
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
    def write_into(self, path) -> str:
        """Put the weights and settings into the zip ``path`` as a kc-sim model file of format
        :data:`FORMAT` (the entries of a zip already there, e.g. the sb3 model, are kept);
        returns the file's SHA-256."""
        arrays = {f"w{k}": w for k, w in enumerate(self.weights)} | {f"b{k}": b for k, b in enumerate(self.biases)}
        header = self.meta | {"activation": self.activation, "opens_weight": self.opens_weight}
        return write_model(path, Model(FORMAT, VERSION, header, arrays), base=path if Path(path).is_file() else None)

    @classmethod
    def read_from(cls, path) -> "PolicyNet":
        """The net stored by :meth:`write_into`, checked: dense layers chained in and out,
        float weights, a known activation. Never unpickles (:mod:`kc_sim.net.model_file`);
        anything else is a one-line UserError."""
        m = read_model(path, format=FORMAT, versions=(VERSION,))
        meta = dict(m.header)
        n = len(m.arrays) // 2
        names = {f"{p}{k}" for k in range(n) for p in "wb"}
        if n == 0 or set(m.arrays) != names:
            raise UserError(f"{path}: arrays {sorted(m.arrays)[:8]}: expected the layers w0, b0, w1, b1, ...")
        w = [m.arrays[f"w{k}"] for k in range(n)]
        b = [m.arrays[f"b{k}"] for k in range(n)]
        chained = all(x.dtype.kind == "f" and y.dtype.kind == "f" and x.ndim == 2 and y.shape == (x.shape[0],)
                      and (k == 0 or x.shape[1] == w[k - 1].shape[0]) for k, (x, y) in enumerate(zip(w, b)))
        if not chained:
            raise UserError(f"{path}: layers of shapes {[list(x.shape) for x in w]} / {[list(y.shape) for y in b]}: "
                            "expected float dense layers, each taking what the one before gives")
        activation, head = meta.pop("activation", "tanh"), meta.pop("opens_weight", 0.0)
        if activation not in ACTIVATIONS:
            raise UserError(f"{path}: activation {preview(activation)}: expected one of {', '.join(ACTIVATIONS)}")
        if isinstance(head, bool) or not isinstance(head, (int, float)) or not np.isfinite(head):
            raise UserError(f"{path}: opens_weight {preview(head)}: expected a number")
        return cls([x.astype(np.float32) for x in w], [y.astype(np.float32) for y in b], activation, meta,
                   float(head))
