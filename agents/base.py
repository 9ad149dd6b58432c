"""Old import path, kept working: import the agent interfaces from :mod:`kc_sim.play.agent` (their
public path; the code is in :mod:`kc_sim.play.agents.interface`)."""

from kc_sim.play.agents.interface import AgentOption, AgentSpec, PythonAgent, SeatView

__all__ = ["AgentOption", "AgentSpec", "PythonAgent", "SeatView"]
