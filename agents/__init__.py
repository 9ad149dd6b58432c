"""The built-in agents of kc-sim, each registered in the entry-point group ``kc_sim.agents``
(see ``pyproject.toml``). They depend on :mod:`kc_sim` only; kc-sim finds them by name
through :mod:`kc_sim.play.agents.registry`, never by importing this package.

The interfaces (:class:`~kc_sim.play.agents.interface.PythonAgent`, :class:`~kc_sim.play.agents.interface.AgentSpec`)
and :func:`~kc_sim.play.agents.registry.load_agent` are re-exported here for old import paths."""

from kc_sim.play.agents.interface import AgentSpec, PythonAgent
from kc_sim.play.table.view import SeatView
from kc_sim.play.agents.registry import builtin_agents, builtin_names, load_agent

__all__ = ["AgentSpec", "PythonAgent", "SeatView", "builtin_agents", "builtin_names", "load_agent"]
