"""The agents' side of the play layer: the two agent interfaces and what the registry hands
out (:mod:`kc_sim.play.agents.interface`: ``PythonAgent``, ``AgentSpec``), finding agents by
name (:mod:`kc_sim.play.agents.registry`), and agent names as results show them
(:mod:`kc_sim.play.agents.names`). Users import them as ``kc_sim.play.agents.interface`` and
``kc_sim.play.agents.registry``."""
