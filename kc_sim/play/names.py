"""Moved to kc_sim.play.agents.names (issue 34); kept for imports that name this path."""

from kc_sim.play.agents.names import (  # noqa: F401
    base_label,
    short_name,
)
