"""Playing rounds and matches between agents: the agent interfaces and their registry, the
Python step API (:class:`~kc_sim.play.game.Game`), what a seat may see, the seat driver
and the runner. Built on :mod:`kc_sim.core`."""
