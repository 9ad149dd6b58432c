"""Public import path (docs/design.md, Import paths); the code is in kc_sim.play.agents.registry (issue 34)."""

from kc_sim.play.agents.registry import (  # noqa: F401
    BASELINES,
    broken_agents,
    builtin_agents,
    builtin_labels,
    builtin_names,
    GROUP,
    load_agent,
    load_agents,
    LOAD_HELP,
    LOADER_FORMS,
    loader_prefixes,
    LOADERS,
    names_code,
    OWN_DISTRIBUTION,
    parse_agent_list,
    spec_from_object,
    trusted,
)

__all__ = ["BASELINES", "GROUP", "LOADERS", "broken_agents", "builtin_agents", "builtin_labels", "builtin_names", "load_agent", "load_agents", "loader_prefixes", "names_code", "parse_agent_list", "spec_from_object", "trusted"]
