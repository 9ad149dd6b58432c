"""OpenSpiel's IS-MCTS as a kc-sim agent: ``openspiel:ismcts`` and ``openspiel:ismcts:N``.

    kc-sim tournament --agents openspiel:ismcts:50,planner --players 2 --rounds 20 --jobs 1 --out /tmp/os

At every decision the agent turns its seat's view into a state of the pyspiel game of
:mod:`kc_sim.env.openspiel_game` (the cards it cannot see dealt at random) and asks
``open_spiel.python.algorithms.ismcts.ISMCTSBot`` for the action. The bot redraws the
hidden cards for every simulation (``resample_from_infostate``), grows one tree over the
information states it meets, and plays the most visited action.

* ``N`` is the number of simulations per decision (default :data:`DEFAULT_SIMULATIONS`,
  100: about 30 ms a decision on the 2-core development machine, about a second a
  two-player round). A decision with one legal action costs no search.
* Leaves are valued by random rollouts played to the end of the round by kc-sim's
  compiled ``random`` agent (a uniformly random placement or pile move, stop only when
  none is left), :data:`ROLLOUTS` per leaf: OpenSpiel's own RandomRolloutEvaluator would
  step every rollout action through the Python state (in a profile of this agent a whole
  compiled rollout took about 6 us, one legal-actions-and-apply step of the Python state
  about 40 us), and its uniform choice stops a turn at
  random. Values are minus the round penalty (the game's returns), the
  exploration constant :data:`UCT_C` is scaled to them.
* Reproducible: the bot's generator and the rollouts' seeds come from the agent's
  ``rng``, which the runner seeds from the round seed and seat.

The view (:class:`kc_sim.play.table.view.SeatView`) shows the position but no history,
so the search sees no more than the position: the count of idle turns in a row (which
ends a round blocked once the stock is empty) is estimated (:meth:`ISMCTSAgent.idle_turns`).
"""

from __future__ import annotations

import functools

import numba as nb
import numpy as np

from kc_sim.core import layout as L
from kc_sim.core.loop import MAX_DECISIONS, seed_policies
from kc_sim.core.policy import MEM_SIZE, random_policy
from kc_sim.core.rng import derive
from kc_sim.core.step import apply
from kc_sim.errors import UserError
from kc_sim.play.agents.interface import AgentSpec, PythonAgent

DEFAULT_SIMULATIONS = 100
MAX_SIMULATIONS = 1_000_000
ROLLOUTS = 4
UCT_C = 10.0
KNOWN = "openspiel:ismcts (IS-MCTS, 100 simulations per decision) or openspiel:ismcts:N (N simulations, 1 to 1000000)"


@nb.njit(cache=True)
def random_rollouts(st0, n, seed, mem, totals):
    """Play ``n`` copies of round state ``st0`` to their end, every seat by kc-sim's
    compiled ``random`` agent (its generators seeded from ``seed`` and the rollout number),
    and subtract each seat's penalty from ``totals``; the round loop's own step and cap."""
    players = st0[L.PLAYERS]
    for k in range(n):
        st = st0.copy()
        seed_policies(mem, derive(seed, k), players)
        for _ in range(MAX_DECISIONS):
            if st[L.DONE]:
                break
            seat = st[L.SEAT]
            apply(st, random_policy(st, seat, mem[seat]))
        for s in range(players):
            totals[s] -= st[L.PENALTY + s]


def _evaluator_class():
    """The rollout evaluator, a subclass of OpenSpiel's ``mcts.Evaluator`` (made on first use,
    so importing this module needs no OpenSpiel)."""
    from open_spiel.python.algorithms import mcts

    class CompiledRolloutEvaluator(mcts.Evaluator):
        """Values a state by the mean return of ``rollouts`` random rounds played to the end
        by kc-sim's compiled ``random`` agent for every seat (:func:`random_rollouts`); the
        prior is uniform over the legal actions."""

        def __init__(self, rollouts: int, random_state: np.random.RandomState):
            self.rollouts = rollouts
            self.random_state = random_state
            self.mem = np.zeros((L.MAX_SEATS, MEM_SIZE), dtype=np.int64)

        def evaluate(self, state):
            if state.is_terminal():
                return np.array(state.returns())
            st = state.kc_game.state
            totals = np.zeros(int(st[L.PLAYERS]), dtype=np.int64)
            random_rollouts(st, self.rollouts, int(self.random_state.randint(1 << 62)), self.mem, totals)
            return totals / self.rollouts

        def prior(self, state):
            legal = state.legal_actions()
            return [(a, 1.0 / len(legal)) for a in legal]

    return CompiledRolloutEvaluator


@functools.lru_cache(maxsize=None)
def _game(players: int, rules_spec: str):
    """The pyspiel game for these players and rules (one per process)."""
    from kc_sim.env import openspiel_game

    return openspiel_game.load(players, rules_spec)


class ISMCTSAgent(PythonAgent):
    """OpenSpiel's IS-MCTS bot with ``simulations`` simulations per decision (see the module docstring)."""

    name = "openspiel:ismcts"

    def __init__(self, simulations: int = DEFAULT_SIMULATIONS, seed: int = 0):
        super().__init__(seed)
        self.simulations = int(simulations)
        self._last = None          # (pile masks, hand sizes) when this seat last stopped

    def new_round(self, seat, players, rules, seed):
        super().new_round(seat, players, rules, seed)
        self._last = None

    def idle_turns(self, obs) -> int:
        """Idle turns in a row before this decision, as far as the view tells: once the
        stock is empty, if nothing changed on the table or in the hands since this seat
        stopped, every other seat passed idle (players - 1); otherwise 0 (some seat acted
        since, though the later ones may have passed: the view does not say)."""
        if obs.stock_size or obs.turn_actions or self._last is None:
            return 0
        return obs.players - 1 if self._last == (obs.pile_masks, obs.hand_sizes) else 0

    def act(self, obs):
        legal = obs.legal
        if len(legal) == 1:
            action = legal[0]
        else:
            from open_spiel.python.algorithms.ismcts import (
                ISMCTSBot,
                ISMCTSFinalPolicyType,
            )

            from kc_sim.env.openspiel_game import state_from_view

            game = _game(obs.players, obs.rules.spec())
            rs = np.random.RandomState(self.rng.getrandbits(32))
            state = state_from_view(game, obs, idle=self.idle_turns(obs), rng=self.rng)
            bot = ISMCTSBot(game, _evaluator_class()(ROLLOUTS, rs), UCT_C, self.simulations, random_state=rs,
                            final_policy_type=ISMCTSFinalPolicyType.MAX_VISIT_COUNT)
            # the worlds drawn from the bot's own seeded generator (its default sampler is unseeded)
            bot.set_resampler(lambda s, player: s.resample_from_infostate(player, rs.uniform))
            action = int(bot.step(state))
        if action == L.STOP:
            self._last = (obs.pile_masks, obs.hand_sizes)
        return action


def _spec(simulations: int, name: str, source: str) -> AgentSpec:
    return AgentSpec(
        name=name,
        description=f"OpenSpiel IS-MCTS, {simulations} simulations per decision, compiled random rollouts",
        factory=functools.partial(ISMCTSAgent, simulations),
        source=source,
    )


def load(rest: str, name: str) -> AgentSpec:
    """The agent ``openspiel:<rest>`` (the registry's loader hook): ``ismcts`` or ``ismcts:N``."""
    algo, colon, option = rest.partition(":")
    if algo.strip().lower() != "ismcts":
        raise UserError(f"unknown OpenSpiel agent {name!r}: known are {KNOWN}")
    if not colon:
        # shown with its budget: results drop a last part that reads as a Python name
        # (kc_sim.play.agents.names.short_name), which would leave a bare "ismcts"
        return _spec(DEFAULT_SIMULATIONS, f"openspiel:ismcts:{DEFAULT_SIMULATIONS}", name)
    option = option.strip()
    if not option.isdigit() or not 1 <= int(option) <= MAX_SIMULATIONS:
        raise UserError(f"bad simulation budget in {name!r}: expected {KNOWN}")
    return _spec(int(option), name, name)
