"""Moved to kc_sim.play.recording.recorded (issue 34); kept for imports that name this path."""

from kc_sim.play.recording.recorded import (  # noqa: F401
    record_compiled_round,
    record_round,
    record_row,
    RecordedRound,
)
