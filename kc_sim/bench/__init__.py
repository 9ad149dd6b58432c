"""``kc-sim bench``: speed of the core, the agents, whole tournaments and memory at scale."""
