"""The ``random`` agent: the core's uniformly random legal play (:func:`kc_sim.core.policy.random_policy`)."""

from kc_sim.core.policy import random_policy
from kc_sim.play.agent import AgentSpec

#: the registered agent (entry point ``random``)
SPEC = AgentSpec("random", "a uniformly random legal placement or pile move; stops only when none is left",
                 policy=random_policy, source="random")
