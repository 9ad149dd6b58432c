"""Moved to :mod:`kc_sim.runs.schema` (issue 34); kept for imports that name this path."""

from kc_sim.runs.schema import *  # noqa: F401,F403
from kc_sim.runs.schema import compact_matches, compact_rounds, seat_agents  # noqa: F401
