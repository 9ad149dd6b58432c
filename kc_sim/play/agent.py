"""Public import path (docs/design.md, Import paths); the code is in kc_sim.play.agents.interface (issue 34)."""

from kc_sim.play.agents.interface import (  # noqa: F401
    AgentOption,
    AgentSpec,
    PythonAgent,
    SeatView,
)

__all__ = ["AgentOption", "AgentSpec", "PythonAgent", "SeatView"]
