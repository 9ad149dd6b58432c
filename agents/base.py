"""Old import path, kept working: the agent interfaces now live in :mod:`kc_sim.play.agent`."""

from kc_sim.play.agent import AgentOption, AgentSpec, PythonAgent, SeatView

__all__ = ["AgentOption", "AgentSpec", "PythonAgent", "SeatView"]
