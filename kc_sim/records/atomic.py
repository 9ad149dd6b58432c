"""Moved to kc_sim.support.atomic (issue 34); kept for imports that name this path."""

from kc_sim.support.atomic import atomic_file, write_text_atomic  # noqa: F401
