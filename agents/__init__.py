"""Agents for kc-sim: the interfaces, the built-in agents and the registry that loads them by name."""

from agents.base import AgentSpec, PythonAgent
from agents.registry import builtin_agents, builtin_names, load_agent
from kc_sim.observation import SeatView

__all__ = ["AgentSpec", "PythonAgent", "SeatView", "builtin_agents", "builtin_names", "load_agent"]
