"""MaskablePPO's MLP policy with one more term in each action's logit: a learned weight times
what the action opens (``observation="planes_opens"``, :mod:`kc_sim.env.obs_planes`).

A plain MLP has one output per action id and would have to learn, for each of the 449 ids
separately, that the value in its own ``opens`` slot matters to it. Adding
``OPENS_SCALE * opens_weight * opens[a]`` to logit ``a`` shares that one lesson across all actions (the
same idea as an action-feature head), while the MLP still reads the whole observation.
``kc-sim train --observation planes_opens`` uses this policy; ``PolicyNet`` evaluates it
in NumPy (the weight is stored with the others).
"""

from __future__ import annotations

import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from kc_sim.env.obs_planes import PLANES_SIZE

__all__ = ["OPENS_SCALE", "OpensExtractor", "OpensPolicy"]

#: the head's weight is learned in these units: Adam moves every parameter by about the
#: learning rate per step, and a useful weight is tens of logits per unit of opens, far more
#: than a learning rate of 1e-4 per step could reach in a few thousand updates
OPENS_SCALE = 64.0


class OpensExtractor(BaseFeaturesExtractor):
    """The observation as it is (flat), keeping its ``opens`` block for the policy's head."""

    def __init__(self, observation_space: spaces.Box):
        super().__init__(observation_space, int(observation_space.shape[0]))
        self.opens = None

    def forward(self, obs: th.Tensor) -> th.Tensor:
        obs = obs.float().flatten(1)
        self.opens = obs[:, PLANES_SIZE:]
        return obs


class OpensPolicy(MaskableActorCriticPolicy):
    """``MlpPolicy`` whose logits get ``opens_weight * opens`` added."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("features_extractor_class", OpensExtractor)
        super().__init__(*args, **kwargs)
        self.opens_weight = th.nn.Parameter(th.zeros(1))
        self.optimizer = self.optimizer_class(self.parameters(), lr=self.optimizer.param_groups[0]["lr"],
                                              **self.optimizer_kwargs)

    def _get_action_dist_from_latent(self, latent_pi: th.Tensor):
        logits = self.action_net(latent_pi) + OPENS_SCALE * self.opens_weight * self.pi_features_extractor.opens
        return self.action_dist.proba_distribution(action_logits=logits)
