"""``python -m kc_sim.cli``."""

from kc_sim.cli import run

run()
