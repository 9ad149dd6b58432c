"""The Gymnasium spaces of the observation encodings (the PettingZoo and Gymnasium envs share them)."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from kc_sim.env.obs_planes import OBSERVATIONS, PLANES_OPENS_SIZE, PLANES_SIZE
from kc_sim.env.obs_vector import OBS_HIGH, OBS_LOW, OBS_SIZE
from kc_sim.errors import UserError

__all__ = ["observation_space"]


def observation_space(observation: str) -> spaces.Box:
    """The space of one observation of kind ``vector``, ``planes`` or ``planes_opens``."""
    if observation == "planes":
        return spaces.Box(0.0, 1.0, shape=(PLANES_SIZE,), dtype=np.float32)
    if observation == "planes_opens":
        low = np.zeros(PLANES_OPENS_SIZE, dtype=np.float32)
        low[PLANES_SIZE:] = -1.0
        return spaces.Box(low, 1.0, shape=(PLANES_OPENS_SIZE,), dtype=np.float32)
    if observation == "vector":
        return spaces.Box(OBS_LOW, OBS_HIGH, shape=(OBS_SIZE,), dtype=np.int8)
    raise UserError(f"bad observation {observation!r}: expected {', '.join(OBSERVATIONS)}")
