"""Gymnasium environments for single-agent training against kc-sim agents, over the batched
compiled core (:class:`kc_sim.env.batch.BatchEnv`).

One seat learns (``seat``, default 0); the other seats are compiled kc-sim agents
(``opponents``: one name for every other seat, a comma list in seat order, or
``{seat: name}``) that play inside the compiled step, so they cost no Python.

    from kc_sim.env.gym_env import KcVectorEnv

    envs = KcVectorEnv(256, players=2, opponents="greedy")
    obs, info = envs.reset(seed=1)
    obs, reward, terminated, truncated, info = envs.step(actions)   # actions: int[256]
    envs.action_masks()                                              # bool[256, 449]

:class:`KcVectorEnv` is a ``gymnasium.vector.VectorEnv`` with ``AutoresetMode.SAME_STEP``: the
step that ends a round returns its reward and ``terminated``, and already the next round's
observation and mask (round k of env i is dealt from ``derive(seed_i, k)``, as in
BatchEnv). ``info["final_info"]`` then holds, per env, the round's ``penalties`` and
``round_seed``. The learner's observation after the round is not kept (``final_obs`` is
absent): a round ends only by termination, never truncation, so nothing needs to
bootstrap from it. :class:`KcEnv` is the one-round-per-episode ``gymnasium.Env`` of the same
game, for Gymnasium's ``check_env`` and for code that wants a plain Env.

The action mask (the legal action ids of the seat to act) is given the way sb3-contrib's
MaskablePPO looks for it, an ``action_masks()`` method, and in ``info["action_mask"]``.
An illegal action raises :class:`~kc_sim.play.table.game.IllegalActionError` (a ``ValueError``;
the step is :mod:`kc_sim.env.step`'s, through the batched env); :class:`KcEnv` can instead end
the round as a loss, ``illegal="lose"``, which is what lets Gymnasium's checker step it with
unmasked random actions.

``gymnasium.make("kc_sim/KingsInTheCorner-v1", players=2, opponents="greedy")`` makes a
:class:`KcEnv` (registered when this module is imported; the version is
:data:`kc_sim.env.versions.ENV_VERSION`).

Rewards (``reward=``), given on the step that ends a round:

- ``"win"`` (default): (opponents finished ahead of − opponents finished behind) /
  (players − 1), by penalty; in 2 players +1 for a win, −1 for a loss, 0 for a tie;
- ``"margin"``: (the opponents' mean penalty − the learner's) / the rule set's largest
  possible penalty;
- ``"penalty"``: minus the learner's penalty / that largest penalty;
- ``"shaped"``: ``"win"`` plus potential-based shaping (Ng, Harada and Russell, 1999) with
  the potential Φ = (the opponents' mean hand penalty − the learner's) / that largest
  penalty, 0 once the round is over: every step gets Φ(after) − Φ(before), so shedding a
  card pays at once, and so does what the opponents shed in between, at the learner's
  next step. Over a round the shaping sums to −Φ(the deal), a constant of the deal,
  so the best policy is the same as under ``"win"``; only the credit comes sooner.

Observations (``observation=``): ``"planes"`` (default, :mod:`kc_sim.env.obs_planes`, float32
1,575), ``"planes_opens"`` (the planes and what each action opens, float32 2,024) or
``"vector"`` (:mod:`kc_sim.env.obs_vector`, int8 143).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from kc_sim.core import layout as L
from kc_sim.core.rng import derive
from kc_sim.core.step import hand_penalty
from kc_sim.env.batch import BatchEnv
from kc_sim.env.spaces import observation_space
from kc_sim.env.step import IllegalActionError
from kc_sim.env.versions import GYM_ID
from kc_sim.errors import UserError
from kc_sim.play.agents.names import parse_agent_list

__all__ = ["KcEnv", "KcVectorEnv", "REWARDS", "observation_space", "opponent_seats"]

REWARDS = ("win", "margin", "penalty", "shaped")
N_ACTIONS = L.N_ACTIONS


def opponent_seats(opponents, players: int, seat: int) -> dict[int, str]:
    """``{seat: agent name}`` for every seat but the learner's, from one name (all of them),
    a comma list in seat order (skipping the learner's seat) or a dict."""
    if not 0 <= seat < players:
        raise UserError(f"bad seat {seat}: the learner's seat is from 0 to {players - 1}")
    others = [s for s in range(players) if s != seat]
    if isinstance(opponents, dict):
        if sorted(opponents) != others:
            raise UserError(f"bad opponents {opponents!r}: expected a name for each of seats {others}")
        return {int(s): str(n) for s, n in opponents.items()}
    names = parse_agent_list(opponents, "opponents")
    if len(names) == 1:
        names = names * len(others)
    if len(names) != len(others):
        raise UserError(f"bad opponents {opponents!r}: give one name, or {len(others)} (one per other seat)")
    return dict(zip(others, names))


class KcVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` rounds, one learner seat, compiled opponents; see the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 64, players: int = 2, rules="classic", opponents="random",
                 seat: int = 0, observation: str = "planes", reward: str = "win", copy: bool = True):
        if reward not in REWARDS:
            raise UserError(f"bad reward {reward!r}: expected one of {', '.join(REWARDS)}")
        self.single_observation_space = observation_space(observation)
        self.opponents = opponent_seats(opponents, int(players), int(seat))
        self.batch = BatchEnv(num_envs, players, rules, opponents=self.opponents, auto_reset=True,
                              observation=observation)
        self.num_envs, self.players, self.seat = self.batch.batch_size, self.batch.players, int(seat)
        self.rules, self.reward_kind, self.copy = self.batch.rules, reward, bool(copy)
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, N_ACTIONS))
        self._scale = 1.0 / self.rules.max_penalty
        self._rng = np.random.default_rng()

    def _potential(self) -> np.ndarray:
        """Φ of every env's current round: the opponents' mean hand penalty minus the
        learner's, scaled (the env's own reward, so it may count hidden cards)."""
        st, seat, others = self.batch.state, self.seat, [s for s in range(self.players) if s != self.seat]
        return np.array([sum(hand_penalty(x, s) for s in others) / len(others) - hand_penalty(x, seat)
                         for x in st]) * self._scale

    def _reward(self, rewards: np.ndarray) -> np.ndarray:
        """The learner's reward from the batch's per-seat rewards (minus each penalty)."""
        own = rewards[:, self.seat:self.seat + 1]
        if self.reward_kind == "shaped":
            win = self._win(rewards, own)
            phi = self._potential()
            term = self.batch.out.terminated
            shaped = np.where(term, -self._phi, phi - self._phi)    # Φ(terminal) = 0
            self._phi = phi                                          # a new round's Φ after a reset
            return (win + shaped).astype(np.float32)
        if self.reward_kind == "penalty":
            return (own[:, 0] * self._scale).astype(np.float32)
        if self.reward_kind == "margin":
            others = (rewards[:, :self.players].sum(axis=1) - own[:, 0]) / (self.players - 1)
            return ((own[:, 0] - others) * self._scale).astype(np.float32)
        return self._win(rewards, own)

    def _win(self, rewards, own) -> np.ndarray:
        ahead = (rewards < own).sum(axis=1) - (rewards > own).sum(axis=1)   # others' rewards are -penalty
        return (ahead / (self.players - 1)).astype(np.float32)

    def _out(self, o):
        obs, mask = o.observation, o.legal_action_mask.astype(bool)
        info = {"action_mask": mask, "round_seed": self.batch.round_seeds.copy()}
        return (obs.copy() if self.copy else obs), info

    def reset(self, *, seed=None, options=None):
        """Deal a round in every env. ``seed`` S deals env i from ``derive(S, i)``;
        ``options={"round_seeds": int[num_envs]}`` gives the round seeds themselves; with
        neither, seeds come from this env's generator (fresh entropy unless seeded before)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        seeds = (options or {}).get("round_seeds")
        if seeds is None:
            seeds = int(seed) if seed is not None else int(self._rng.integers(0, 2 ** 63 - 1))
        o = self.batch.reset(seeds)
        if self.reward_kind == "shaped":
            self._phi = self._potential()
        return self._out(o)

    def step(self, actions):
        prev = self.batch.round_seeds.copy()
        o = self.batch.step(actions)
        reward = self._reward(o.rewards)
        terminated = o.terminated.copy()
        obs, info = self._out(o)
        if terminated.any():
            info["final_info"] = {"penalties": -o.rewards.astype(np.int64), "round_seed": prev}
            info["_final_info"] = terminated
        return obs, reward, terminated, np.zeros(self.num_envs, dtype=bool), info

    def action_masks(self) -> np.ndarray:
        """bool[num_envs, 449]: the legal actions of each env's seat to act (sb3-contrib's hook)."""
        return self.batch.out.legal_action_mask.astype(bool)

    def sample(self) -> np.ndarray:
        """A uniformly random legal action per env."""
        return self.batch.sample().copy()


class KcEnv(gymnasium.Env):
    """One round per episode, one learner seat, compiled opponents (``gymnasium.Env``).

    ``reset(seed=S)`` deals round ``derive(S, 0)`` and later resets ``derive(S, k)``;
    ``options={"round_seed": s}`` deals round seed ``s`` (a round the opponents end before
    the learner acts is skipped for ``derive(s, 1)``, and so on). ``illegal="raise"`` (default)
    raises on an illegal action; ``illegal="lose"`` ends the round with the worst reward
    (−1) and ``info["illegal"] = True``."""

    metadata = {"render_modes": []}

    def __init__(self, players: int = 2, rules="classic", opponents="random", seat: int = 0,
                 observation: str = "planes", reward: str = "win", illegal: str = "raise"):
        if illegal not in ("raise", "lose"):
            raise UserError(f"bad illegal {illegal!r}: expected raise or lose")
        self.vec = KcVectorEnv(1, players, rules, opponents, seat, observation, reward, copy=True)
        self.vec.batch.auto_reset = False
        self.illegal = illegal
        self.observation_space = self.vec.single_observation_space
        self.action_space = self.vec.single_action_space
        self._base, self._episode, self._over = 0, 0, True

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self._base, self._episode = int(seed), 0
        elif self._episode == 0 and self._base == 0:
            self._base = int(self.np_random.integers(0, 2 ** 63 - 1))
        round_seed = (options or {}).get("round_seed")
        if round_seed is None:
            round_seed = derive(np.int64(self._base), np.int64(self._episode))
            self._episode += 1
        first, k = int(round_seed), 0
        while True:          # a round the opponents end before the learner acts is skipped
            obs, info = self.vec.reset(options={"round_seeds": np.array([round_seed], dtype=np.int64)})
            if not self.vec.batch.state[0, L.DONE]:
                break
            k += 1
            round_seed = int(derive(np.int64(first), np.int64(k)))
        self._over = False
        return obs[0], {"action_mask": info["action_mask"][0], "round_seed": int(round_seed)}

    def step(self, action):
        if self._over:
            raise UserError("the round is over: call reset()")
        try:
            obs, reward, terminated, _, info = self.vec.step(np.array([action], dtype=np.int64))
        except IllegalActionError:
            if self.illegal == "raise":
                raise
            self._over = True                 # nothing was stepped: the round ends here, lost
            obs = self.vec.batch.out.observation[0].copy()
            return obs, -1.0, True, False, {"action_mask": np.zeros(N_ACTIONS, dtype=bool), "illegal": True}
        self._over = bool(terminated[0])
        return obs[0], float(reward[0]), self._over, False, {"action_mask": info["action_mask"][0]}

    def action_masks(self) -> np.ndarray:
        """bool[449]: the legal actions now (sb3-contrib's hook)."""
        return self.vec.action_masks()[0]


gymnasium.register(id=GYM_ID, entry_point=KcEnv)
