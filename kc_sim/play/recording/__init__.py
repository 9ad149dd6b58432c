"""Game records of rounds played here: a :class:`~kc_sim.play.table.game.Game` that logs its
turns, one round played between any agents and returned as its record
(:mod:`kc_sim.play.recording.recorded`), and ``kc-sim record``
(:mod:`kc_sim.play.recording.command`). Its names load on first use.

    from kc_sim.play.recording import RecordedRound, record_round
"""

from kc_sim.support.lazy import lazy_exports

# lazy: see kc_sim.support.lazy
_EXPORTS = {
    "RecordedRound": "kc_sim.play.recording.recorded",
    "record_compiled_round": "kc_sim.play.recording.recorded",
    "record_round": "kc_sim.play.recording.recorded",
    "record_row": "kc_sim.play.recording.recorded",
    "record_rounds": "kc_sim.play.recording.command",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
