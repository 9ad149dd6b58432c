"""The agents' side of the play layer: the two agent interfaces and what the registry hands
out (:mod:`kc_sim.play.agents.interface`: ``PythonAgent``, ``AgentSpec``), finding agents by
name (:mod:`kc_sim.play.agents.registry`), and agent names as results show them
(:mod:`kc_sim.play.agents.names`). Users import them from the public paths ``kc_sim.play.agent``
and ``kc_sim.play.registry`` (or ``kc_sim.play``), which stay when these modules move
(docs/design.md, Import paths that moved)."""
