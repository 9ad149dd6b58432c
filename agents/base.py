"""Old import path, kept working: the agent interfaces now live in :mod:`kc_sim.play.agents.interface`."""

from kc_sim.play.agents.interface import AgentOption, AgentSpec, PythonAgent, SeatView

__all__ = ["AgentOption", "AgentSpec", "PythonAgent", "SeatView"]
