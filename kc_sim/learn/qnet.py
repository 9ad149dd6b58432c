"""The action-scoring network in torch, for training: the same function, with the same
parameter layout, as the compiled :mod:`kc_sim.net.policy` (a test holds the two
forward passes equal on random inputs).

:class:`QNet` scores action rows: ``forward(ctx, x)`` takes one context row per action row.
:class:`ValueNet` is a baseline on the context alone (training only; never exported).
Segment helpers work on decisions stored as consecutive action rows (``start``, ``n``).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from kc_sim.net.features import F_ACT, F_CTX
from kc_sim.net.policy import param_size, unpack

__all__ = ["QNet", "ValueNet", "segment_log_softmax"]


class QNet(nn.Module):
    """``q = w_out . relu(relu(ctx Wc + x Wa) W2 + b2) + b_out`` (the second layer only with ``h2``)."""

    def __init__(self, h1: int = 32, h2: int = 0, seed: int = 0):
        super().__init__()
        g = torch.Generator().manual_seed(int(seed))
        self.h1, self.h2 = int(h1), int(h2)
        h = self.h2 or self.h1

        def init(*shape, fan_in):
            return nn.Parameter(torch.randn(*shape, generator=g) * (2.0 / fan_in) ** 0.5)

        self.Wc = init(F_CTX, self.h1, fan_in=F_CTX + F_ACT)
        self.Wa = init(F_ACT, self.h1, fan_in=F_CTX + F_ACT)
        self.W2 = init(self.h1, self.h2, fan_in=max(self.h1, 1))
        self.b2 = nn.Parameter(torch.zeros(self.h2))
        self.w_out = nn.Parameter(torch.randn(h, generator=g) * (1.0 / h) ** 0.5)
        self.b_out = nn.Parameter(torch.zeros(1))

    def forward(self, ctx: torch.Tensor, x: torch.Tensor, seg: torch.Tensor | None = None) -> torch.Tensor:
        """Scores of the action rows ``x``; ``ctx`` holds one row per action row, or, with
        ``seg`` (the decision of each action row), one row per decision (computed once)."""
        hc = ctx @ self.Wc
        if seg is not None:
            hc = hc[seg]
        h = torch.relu(hc + x @ self.Wa)
        if self.h2:
            h = torch.relu(h @ self.W2 + self.b2)
        return h @ self.w_out + self.b_out

    def to_params(self) -> np.ndarray:
        """The flat float32 vector :mod:`kc_sim.net.policy` evaluates."""
        p = np.zeros(param_size(self.h1, self.h2), np.float32)
        p[0], p[1] = self.h1, self.h2
        parts = unpack(p)
        with torch.no_grad():
            for name in parts:
                parts[name][...] = getattr(self, name).detach().cpu().numpy().reshape(parts[name].shape)
        return p

    @classmethod
    def from_params(cls, params: np.ndarray) -> "QNet":
        net = cls(int(params[0]), int(params[1]))
        with torch.no_grad():
            for name, arr in unpack(np.asarray(params, np.float32)).items():
                getattr(net, name).copy_(torch.from_numpy(arr.reshape(getattr(net, name).shape).copy()))
        return net


class ValueNet(nn.Module):
    """A baseline V(ctx): one hidden layer on the decision's context."""

    def __init__(self, hidden: int = 32, seed: int = 0):
        super().__init__()
        torch.manual_seed(int(seed))
        self.net = nn.Sequential(nn.Linear(F_CTX, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, ctx: torch.Tensor) -> torch.Tensor:
        return self.net(ctx).squeeze(-1)


def segment_log_softmax(q: torch.Tensor, seg: torch.Tensor, n_seg: int) -> torch.Tensor:
    """log softmax of ``q`` within each segment (``seg[i]`` the segment of row i)."""
    mx = torch.full((n_seg,), -torch.inf, dtype=q.dtype).scatter_reduce(0, seg, q, reduce="amax")
    z = torch.exp(q - mx[seg])
    tot = torch.zeros(n_seg, dtype=q.dtype).index_add_(0, seg, z)
    return q - mx[seg] - torch.log(tot[seg])
