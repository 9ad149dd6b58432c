"""Moved to kc_sim.support.lazy (issue 34); kept for imports that name this path."""

from kc_sim.support.lazy import lazy_exports  # noqa: F401
