"""Old import path, kept working: import the registry from :mod:`kc_sim.play.registry` (its
public path; the code is in :mod:`kc_sim.play.agents.registry`)."""

from kc_sim.play.agents.registry import (
    BASELINES,
    builtin_agents,
    builtin_labels,
    builtin_names,
    load_agent,
    spec_from_object,
)

__all__ = ["BASELINES", "builtin_agents", "builtin_labels", "builtin_names", "load_agent", "spec_from_object"]
