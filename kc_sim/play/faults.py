"""Moved to kc_sim.play.driver.faults (issue 34); kept for imports that name this path."""

from kc_sim.play.driver.faults import (  # noqa: F401
    agent_fault,
    AgentFault,
    DEFAULT_FAULT_DIR,
    first_failing,
    hook_fault,
    raises,
    SeatFault,
    unreproduced,
)
