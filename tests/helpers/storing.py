"""Stand-ins for the run's background import of pyarrow and pandas
(:func:`kc_sim.runs.parts.import_in_background`)."""

from __future__ import annotations


class ImportNotOver:
    """An import still running until the run joins it: every result of the run waits."""

    def __init__(self):
        self.joined = False

    def is_alive(self):
        return not self.joined

    def join(self):
        self.joined = True
