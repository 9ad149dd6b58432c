"""Kings in the Corner as a PettingZoo AEC environment (needs ``pip install kc-sim[rl]``).

    from kc_sim.env import aec as kc_env

    e = kc_env.env(players=2, rules="classic")       # wrapped, like PettingZoo's classic envs
    e.reset(seed=42)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        action = None if terminated or truncated else e.action_space(agent).sample(obs["action_mask"])
        e.step(action)

``env(players=2, rules="classic", render_mode=None, illegal_reward=None)`` returns the
raw environment :class:`raw_env` wrapped in PettingZoo's ``TerminateIllegalWrapper``,
``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``. ``rules`` is any rule set
kc-sim takes (``classic``, ``draw_first``, ``classic,draw=start,decks=2``...).

Agents and turns
    ``possible_agents`` are ``player_0 .. player_{n-1}``, one per seat. One episode is one
    round. ``reset(seed=S)`` deals episode k (k = 0, 1, ... counting the resets since the
    last seeded reset) from the round seed ``kc_sim.core.rng.derive(S, k)``, with the
    dealer drawn from that round seed as everywhere in kc-sim (``reset()`` without a seed
    after a seeded reset deals the next round of the same sequence; without any seed the
    sequence starts from a random seed). ``options={"round_seed": R}`` deals from round
    seed R directly (``"dealer": d`` fixes the dealer), e.g. to replay a recorded round.
    A turn is several actions: the same agent stays selected until it plays ``stop``
    (448); then the next seat clockwise is selected. (With draw=start/if_stuck the draw
    happens when the turn opens.)

Actions
    ``Discrete(449)`` with the ids of docs/formats.md: ``c * 8 + p`` places card c on pile p,
    ``416 + s * 8 + p`` moves the whole side pile s onto pile p, ``448`` stops.
    The raw env raises :class:`kc_sim.play.table.game.IllegalActionError` (a ValueError) on an illegal
    action; the wrapped env ends the round instead, the offender getting
    ``illegal_reward`` (default: minus the penalty of a hand holding every card of the
    deck, 88 with classic scoring: worse than any real round) and the others 0.

Observations
    ``observe(agent)`` returns ``{"observation": int8[143], "action_mask": int8[449]}``.
    The mask holds the legal actions of the agent to act (all zeros for the others and
    once the round is over). The observation holds only what that seat may see,
    seats counted *relative* to the observer (0 = itself, 1 = the next seat clockwise...):

    ======  =========  ==========================================================
    index   name       value
    ======  =========  ==========================================================
    0-51    hand       copies of card c (docs/formats.md card id) in the own hand, 0-2
    52-103  table      copies of card c on the table (any pile), 0-2
    104-111 base       base card id of pile p (N E S W NE SE SW NW), -1 if empty
    112-119 top        top card id of pile p, -1 if empty
    120-127 size       cards in pile p, 0-13
    128-135 hand_sizes cards in the hand of relative seat r (r = 0 the observer),
                       -1 for r >= players
    136     stock      cards left in the stock, 0-104
    137     to_act     relative seat to act, -1 once the round is over
    138     dealer     relative seat of the dealer
    139     turn_acts  place/move actions made so far in this turn by the observer
                       (0 when it is not its turn), at most 127
    140     drew       card the observer drew this turn (draw=start / if_stuck), -1 if none
    141     seat       the observer's absolute seat
    142     players    number of players
    ======  =========  ==========================================================

    ``OBS`` maps these names to slices and :func:`split_observation` cuts an observation
    into them. The order of the stock and other hands never appear.

    ``env(..., observation="planes")`` gives instead the learnable encoding of
    :mod:`kc_sim.env.obs_planes` (float32[1575]; ``"planes_opens"``: float32[2024], with what
    each action opens; the planes: one-hot tops, bases and drawn card, what
    fits on each pile, scaled counts, the rule switches), computed from this vector.

Rewards
    0 at every step but the last; when the round ends every agent gets minus its
    penalty for the round (docs/rules.md, Scoring: 10 per king and 1 per other card with
    ``scoring=kings10``; face values with ``scoring=face``), so the winner gets 0.
    ``infos[agent]`` then holds ``{"penalty", "winner", "end"}`` (winner as a seat or None,
    end ``out`` or ``blocked``). Rounds always end (no truncation).

Rendering
    ``render_mode="ansi"`` makes ``render()`` return the table as text from the point of
    view of the agent to act (``kc_sim.ui.render``); ``"human"`` prints it.

Agents as policies
    :func:`policy_from_agent` turns any kc-sim agent (built-in, ``module:Name``,
    ``file.py:Name``; compiled or Python) into a callable ``policy(observation, env) ->
    action`` that plays it inside the environment, exactly as kc-sim's runner would
    (same seeds, same play). It reads the env's round through the same seat-restricted
    views agents get everywhere in kc-sim, so it ignores ``observation``::

        from kc_sim.env.aec import env, policy_from_agent
        e = env(players=2)
        policies = {"player_0": policy_from_agent("random"), "player_1": policy_from_agent("greedy")}
        e.reset(seed=7)
        for agent in e.agent_iter():
            obs, reward, terminated, truncated, info = e.last()
            e.step(None if terminated or truncated else policies[agent](obs, e))
"""

from __future__ import annotations

import itertools
import secrets

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
    from gymnasium.utils import EzPickle
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError as _e:  # pragma: no cover - depends on the installed extras
    raise ImportError(f"kc_sim.env.aec needs PettingZoo ({_e}): install the extra with pip install 'kc-sim[rl]'") from _e

from kc_sim.core import layout as L
from kc_sim.core.rng import derive
from kc_sim.env.obs_planes import OBSERVATIONS, encode
from kc_sim.env.obs_vector import (  # noqa: F401 - OBS, OBS_SIZE and split_observation are part of this API
    OBS,
    OBS_HIGH,
    OBS_LOW,
    OBS_SIZE,
    split_observation,
)
from kc_sim.env.spaces import observation_space
from kc_sim.env.step import (
    I_CLOSED,
    I_TURN_DREW,
    ILLEGAL,
    INFO_SIZE,
    IllegalActionError,
    env_step,
    forfeit_reward,
    observe,
)
from kc_sim.env.versions import AEC_NAME
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.table.game import Game, why_illegal
from kc_sim.play.recording.recorded import RecordedRound
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.seat import SeatedAgents
from kc_sim.ui.render import render_table

__all__ = ["env", "raw_env", "policy_from_agent", "AgentPolicy", "split_observation", "OBS", "OBS_SIZE",
           "N_ACTIONS", "max_penalty"]

N_ACTIONS = L.N_ACTIONS

def max_penalty(rules) -> int:
    """:attr:`RuleSet.max_penalty <kc_sim.game.rules.RuleSet.max_penalty>` of ``rules``: a
    bound on any round's penalty (88 per deck with scoring=kings10, 340 with scoring=face)."""
    return parse_rules(rules).max_penalty


_EPISODES = itertools.count(1)


class raw_env(AECEnv, EzPickle):
    """One round of Kings in the Corner per episode; see the module docstring for the
    observation layout, actions, rewards and seeding."""

    metadata = {
        "render_modes": ["human", "ansi"],
        "name": AEC_NAME,
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, players: int = 2, rules: str | RuleSet = "classic", render_mode: str | None = None,
                 observation: str = "vector"):
        EzPickle.__init__(self, players, rules, render_mode, observation)
        super().__init__()
        if observation not in OBSERVATIONS:
            raise UserError(f"bad observation {observation!r}: expected {', '.join(OBSERVATIONS)}")
        self.observation = observation
        self.rules = parse_rules(rules)
        try:
            players = int(players)
        except (TypeError, ValueError):
            raise UserError(f"bad player count {players!r}: expected an integer") from None
        self.rules.check_players(players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise UserError(f"bad render_mode {render_mode!r}: expected one of "
                            f"{', '.join(self.metadata['render_modes'])} or None")
        self.players = players
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": observation_space(observation),
                "action_mask": spaces.Box(low=0, high=1, shape=(N_ACTIONS,), dtype=np.int8),
            })
            for a in self.possible_agents
        }
        self.round: RecordedRound | None = None
        self._rewards = np.zeros(L.MAX_SEATS, dtype=np.float64)
        self._info = np.zeros(INFO_SIZE, dtype=np.int64)
        self.round_seed: int | None = None
        self.episode_id = 0
        self._base_seed: int | None = None
        self._k = 0

    # --- spaces ------------------------------------------------------------------------------
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    @property
    def game(self) -> Game | None:
        """The current round's :class:`~kc_sim.play.table.game.Game` (the full state: not for agents)."""
        return None if self.round is None else self.round.game

    # --- episode -------------------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        options = dict(options or {})
        if seed is not None:
            self._base_seed = int(seed) % (1 << 63)
            self._k = 0
        elif self._base_seed is None:
            self._base_seed = secrets.randbits(63)
        if "round_seed" in options:
            round_seed = int(options["round_seed"])
        else:
            round_seed = int(derive(self._base_seed, self._k))
            self._k += 1
        dealer = options.get("dealer")
        self.round_seed = round_seed
        self.round = RecordedRound(Game(self.players, self.rules, round_seed,
                                        dealer=None if dealer is None else int(dealer)))
        self.episode_id = next(_EPISODES)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.round.game.seat]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent):
        obs = np.zeros(OBS_SIZE, dtype=np.int8)
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        observe(self.round.game.state, self.agent_name_mapping[agent], obs, mask)
        if self.observation != "vector":
            obs = encode(obs, self.rules, self.observation)
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        g = self.round.game
        a = int(action)
        if env_step(g.state, a, self._rewards, self._info) == ILLEGAL:
            text = action_text(a) if 0 <= a < N_ACTIONS else str(a)
            raise IllegalActionError(f"illegal action {text} for {agent}: {why_illegal(g, a)}")
        self.round.log(a, bool(self._info[I_CLOSED]), int(self._info[I_TURN_DREW]))
        self.rewards = {p: float(self._rewards[self.agent_name_mapping[p]]) for p in self.agents}
        if g.over:
            penalties = g.penalties
            for p in self.agents:
                s = self.agent_name_mapping[p]
                self.terminations[p] = True
                self.infos[p] = {"penalty": int(penalties[s]), "winner": g.winner, "end": g.end}
        else:
            self.agent_selection = self.possible_agents[g.seat]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # --- output ------------------------------------------------------------------------------
    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.round is None:
            return None
        text = render_table(self.round.game, names=self.possible_agents, reveal=self.round.game.over)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self):
        pass

    def record(self, names=None) -> dict:
        """The game record (docs/formats.md) of the current round so far (``result.end`` is
        ``unfinished`` until it ends); ``names`` by seat default to the agent names."""
        if self.round is None:
            raise UserError("no round yet: call reset() first")
        return self.round.record(list(names) if names is not None else self.possible_agents)


def env(players: int = 2, rules: str | RuleSet = "classic", render_mode: str | None = None,
        illegal_reward: float | None = None, observation: str = "vector"):
    """The environment wrapped as PettingZoo's classic environments are: an illegal action
    ends the round with ``illegal_reward`` for the offender (default ``-max_penalty(rules)``)
    and 0 for the others; out-of-range actions assert; calls out of order are caught.
    ``observation="planes"``: the learnable encoding (:mod:`kc_sim.env.obs_planes`)."""
    e = raw_env(players=players, rules=rules, render_mode=render_mode, observation=observation)
    if illegal_reward is None:
        illegal_reward = forfeit_reward(e.rules)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=illegal_reward)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


# --- kc-sim agents as policies ---------------------------------------------------------------------

class AgentPolicy:
    """A kc-sim agent as a policy for :class:`raw_env` (wrapped or not): call it as
    ``policy(observation, env)`` when one of its seats is selected; it returns an action id.

    With ``seat`` given it plays that seat only; without, it plays whichever seat is
    selected (one memory / one Python agent instance per seat). It follows the env's
    rounds on its own: a new round (any reset) reseeds it exactly as the runner would for
    that round seed, so play through the env equals play through ``kc-sim``."""

    def __init__(self, agent, seat: int | None = None):
        self.spec = load_agent(agent)
        self.name = self.spec.name
        self.seat = None if seat is None else int(seat)
        self._agents: SeatedAgents | None = None     # the seats it plays, by seat, for the env's players
        self._episode: int | None = None             # the episode its round was started for

    def __call__(self, observation, env) -> int:
        raw = env.unwrapped
        if not isinstance(raw, raw_env):
            raise UserError(f"policy {self.name!r}: expected a kc_sim.env.aec environment, got {type(raw).__name__}")
        if raw.round is None:
            raise UserError(f"policy {self.name!r}: the environment has not been reset")
        g = raw.round.game
        if g.over:
            raise UserError(f"policy {self.name!r}: the round is over; step the finished agents with None")
        if self.seat is not None and g.seat != self.seat:
            raise UserError(f"policy {self.name!r} plays seat {self.seat} ({raw.possible_agents[self.seat]}), "
                            f"but {raw.agent_selection} is selected")
        agents = self._agents
        if agents is None or len(agents.specs) != raw.players or agents.rules != raw.rules:
            agents = self._agents = SeatedAgents(
                [self.spec if self.seat in (None, s) else None for s in range(raw.players)], raw.rules)
            agents.new_match()
            self._episode = None
        if self._episode != raw.episode_id:
            agents.new_round(raw.round_seed, range(raw.players))    # one episode is one round
            self._episode = raw.episode_id
        return agents.act(g)


def policy_from_agent(agent, seat: int | None = None) -> AgentPolicy:
    """Any kc-sim agent (name or AgentSpec) as a callable ``policy(observation, env) -> action id``;
    see :class:`AgentPolicy`."""
    return AgentPolicy(agent, seat)
