"""Playing rounds and matches between agents, built on :mod:`kc_sim.core`:

* the agent interfaces (:class:`PythonAgent`, :class:`AgentSpec`, ``kc_sim.play.agent``) and
  their registry (:func:`load_agent`, ``kc_sim.play.registry``);
* the Python step API (:class:`Game`, ``kc_sim.play.game``) and what a seat may see
  (:class:`SeatView`, ``kc_sim.play.observation``);
* the seat driver (``kc_sim.play.seat``), a match driven from Python (``kc_sim.play.match``)
  and the runner (:func:`play_rounds`, :func:`play_matches`, ``kc_sim.play.runner``) with its
  Python loop (``kc_sim.play.python_loop``) and faults (``kc_sim.play.faults``);
* game records of rounds played here (:func:`record_round`, ``kc_sim.play.recorded``).

    from kc_sim.play import play_rounds
    rows = play_rounds(["greedy", "random"], range(1000), "classic")
"""

from kc_sim._lazy import lazy_exports

# lazy: see kc_sim._lazy
_EXPORTS = {
    "AgentFault": "kc_sim.play.faults",
    "AgentSpec": "kc_sim.play.agent",
    "Game": "kc_sim.play.game",
    "IllegalActionError": "kc_sim.play.game",
    "PythonAgent": "kc_sim.play.agent",
    "SeatView": "kc_sim.play.observation",
    "load_agent": "kc_sim.play.registry",
    "play_matches": "kc_sim.play.runner",
    "play_rounds": "kc_sim.play.runner",
    "record_round": "kc_sim.play.recorded",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
