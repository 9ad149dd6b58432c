"""The ``kc-sim`` command: one module per command group, no logic the library needs."""

from kc_sim.cli.root import app, main, run

__all__ = ["app", "main", "run"]
