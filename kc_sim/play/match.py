"""Moved to kc_sim.play.driver.match (issue 34); kept for imports that name this path."""

from kc_sim.play.driver.match import (  # noqa: F401
    Match,
    MATCH_KINDS,
    MatchRound,
)
