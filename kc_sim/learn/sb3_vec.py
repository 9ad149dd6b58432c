"""The Gymnasium vector env (:class:`kc_sim.env.gym_env.KcVectorEnv`) as a Stable-Baselines3
``VecEnv``, so sb3 and sb3-contrib train on it directly.

SB3 has its own vector-env interface (``step_async``/``step_wait``, infos as one dict per
env, ``terminal_observation`` on a finished env); this adapter translates, and answers
``env_method("action_masks")``, which is how sb3-contrib's MaskablePPO asks a VecEnv for
its masks. Finished rounds report ``info["episode"] = {"r", "l"}`` as sb3's Monitor does,
so ``rollout/ep_rew_mean`` is logged.
"""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from kc_sim.env.gym_env import KcVectorEnv

__all__ = ["SB3VecEnv"]


class SB3VecEnv(VecEnv):
    """``venv`` (a :class:`KcVectorEnv`) behind SB3's ``VecEnv`` interface."""

    def __init__(self, venv: KcVectorEnv, seed: int = 0):
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._seed = int(seed)
        self._actions = None
        self._returns = np.zeros(venv.num_envs, dtype=np.float64)
        self._lengths = np.zeros(venv.num_envs, dtype=np.int64)

    def reset(self):
        obs, _ = self.venv.reset(seed=self._seed)
        self._seed += 1          # a second reset deals other rounds
        self._returns[:] = 0
        self._lengths[:] = 0
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64)

    def step_wait(self):
        obs, reward, terminated, truncated, _ = self.venv.step(self._actions)
        self._returns += reward
        self._lengths += 1
        infos = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(terminated):
            infos[i] = {"episode": {"r": float(self._returns[i]), "l": int(self._lengths[i])},
                        "TimeLimit.truncated": False}
            self._returns[i] = 0
            self._lengths[i] = 0
        return obs, reward, terminated, infos

    def close(self) -> None:
        pass

    def get_attr(self, attr_name, indices=None):
        return [getattr(self.venv, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name, value, indices=None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._get_indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self.venv, attr_name)
