"""The two kinds of agent.

* A **compiled policy** (see ``kc_sim.core.policy``): a numba function with
  ``POLICY_SIG`` that the compiled round loop calls directly, so rounds between
  compiled agents never leave compiled code. Make one with ``compiled_policy``.
* A **Python agent**: a subclass of :class:`PythonAgent`; at each of its decisions it
  receives a :class:`~kc_sim.play.table.view.SeatView` of its own seat (never another hand or
  the stock order) and returns an action id or its text.

:class:`AgentSpec` is what the registry hands out for either kind. See docs/agents.md.
"""

from __future__ import annotations

import abc
import random
from dataclasses import dataclass, field
from typing import Callable

from kc_sim.core.policy import MEM_SIZE
from kc_sim.play.table.view import SeatView

__all__ = ["AgentOption", "AgentSpec", "PythonAgent", "SeatView"]


class PythonAgent(abc.ABC):
    """Base class of agents written in plain Python.

    Override :meth:`act`; the hooks :meth:`new_match` and :meth:`new_round` are optional
    (call ``super().new_round(...)`` if you override it, to keep ``self.rng`` seeded).
    ``self.rng`` is the agent's own ``random.Random``, reseeded for every round from the
    round's seed and the seat (by the runner, even if you override ``new_round``), so play
    never depends on how rounds are split across workers. The runner makes one instance
    per seat, with no arguments.
    """

    #: shown in records and tables when the agent is not loaded by name
    name = "python"

    def __init__(self, seed: int = 0):
        self._rng = None
        self._rng_seed = seed

    # the generator is created and seeded on first use: seeding costs microseconds,
    # and many agents never draw a random number
    @property
    def rng(self) -> random.Random:
        """The agent's own generator, seeded for the current round."""
        r = getattr(self, "_rng", None)
        if r is None:
            r = self._rng = random.Random(getattr(self, "_rng_seed", 0))
        return r

    @rng.setter
    def rng(self, value: random.Random) -> None:
        self._rng = value

    def new_match(self, seat: int, players: int, rules) -> None:
        """Called before the first round of a match (or of a run of single rounds).
        ``seat`` is the agent's match seat, ``rules`` the :class:`~kc_sim.game.rules.RuleSet`."""

    def new_round(self, seat: int, players: int, rules, seed: int) -> None:
        """Called before every round with the round seat, the number of seats in the round
        and this seat's seed for the round; reseeds ``self.rng`` (lazily)."""
        self._rng = None
        self._rng_seed = seed

    def start_round(self, seat: int, players: int, rules, seed: int) -> None:
        """What the runner calls before every round: reseed ``self.rng``, then call
        :meth:`new_round` if a subclass overrides it (the base hook only reseeds)."""
        self._rng = None
        self._rng_seed = seed
        if type(self).new_round is not PythonAgent.new_round:
            self.new_round(seat, players, rules, seed)

    @abc.abstractmethod
    def act(self, obs: SeatView) -> int | str:
        """Return one of ``obs.legal`` (an action id) or its text (``7H>E``, ``N>E``, ``stop``)."""


@dataclass(frozen=True)
class AgentOption:
    """An integer option a registered agent takes after a colon (``sampler:64``): what it
    means, its range, and ``make(value)``, which returns the spec with that option."""

    what: str
    lowest: int
    highest: int
    make: Callable[[int], "AgentSpec"]


@dataclass(frozen=True)
class AgentSpec:
    """A named agent: exactly one of ``policy`` (compiled) or ``factory`` (Python) is set.

    ``source`` is the name it was loaded by (a registered name, ``module:Name`` or
    ``path.py:Name``); specs with a source pickle as that name and reload in the worker
    (see :mod:`kc_sim.play.agents.registry`).

    ``mem_words`` (compiled policies): how much of its memory the policy relies on being
    prepared each round, ``mem[0]`` seeded and ``mem[1:mem_words]`` zeroed; it must write any
    other word before it reads it. The compiled loop honours it for the agents kc-sim ships
    (the trusted ones, :func:`kc_sim.play.agents.registry.trusted`) and prepares all ``MEM_SIZE``
    words for every other policy.
    """

    name: str
    description: str
    policy: object = None                          # a numba policy with POLICY_SIG
    factory: Callable[[], PythonAgent] | None = None
    source: str | None = field(default=None, compare=False)
    option: AgentOption | None = field(default=None, compare=False)
    mem_words: int = field(default=MEM_SIZE, compare=False)

    def __post_init__(self):
        if (self.policy is None) == (self.factory is None):
            raise ValueError("AgentSpec needs exactly one of policy (compiled) or factory (Python)")

    @property
    def compiled(self) -> bool:
        return self.policy is not None
