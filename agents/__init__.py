"""The built-in agents of kc-sim, each registered in the entry-point group ``kc_sim.agents``
(see ``pyproject.toml``). They depend on :mod:`kc_sim` only; kc-sim finds them by name
through :mod:`kc_sim.play.registry`, never by importing this package.

The interfaces (:class:`~kc_sim.play.agent.PythonAgent`, :class:`~kc_sim.play.agent.AgentSpec`)
and :func:`~kc_sim.play.registry.load_agent` are re-exported here for old import paths."""

from kc_sim.play.agent import AgentSpec, PythonAgent
from kc_sim.play.observation import SeatView
from kc_sim.play.registry import builtin_agents, builtin_names, load_agent

__all__ = ["AgentSpec", "PythonAgent", "SeatView", "builtin_agents", "builtin_names", "load_agent"]
