"""Moved to kc_sim.play.driver.seat (issue 34); kept for imports that name this path."""

from kc_sim.play.driver.seat import (  # noqa: F401
    ACTION_HELP,
    as_action,
    made,
    SeatedAgents,
    SeatFault,
    short_repr,
)
