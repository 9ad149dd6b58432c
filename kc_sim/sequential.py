"""Anytime-valid confidence sequences and the stopping rule of ``--until decided``.

Moved to kc_sim.stats.sequential (issue 34); kept for imports that name this path.
"""

from kc_sim.stats.sequential import *  # noqa: F401,F403
