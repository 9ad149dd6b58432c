"""Playing rounds and matches between agents, built on :mod:`kc_sim.core`:

* the agent interfaces (:class:`PythonAgent`, :class:`AgentSpec`, ``kc_sim.play.agents.interface``) and
  their registry (:func:`load_agent`, ``kc_sim.play.agents.registry``);
* the Python step API (:class:`Game`, ``kc_sim.play.table.game``) and what a seat may see
  (:class:`SeatView`, ``kc_sim.play.table.view``);
* the seat driver (``kc_sim.play.driver.seat``), a match driven from Python (``kc_sim.play.driver.match``)
  and the runner (:func:`play_rounds`, :func:`play_matches`, ``kc_sim.play.driver.runner``) with its
  Python loop (``kc_sim.play.driver.python_loop``) and faults (``kc_sim.play.driver.faults``);
* game records of rounds played here (:func:`record_round`, ``kc_sim.play.recording.recorded``).

    from kc_sim.play import play_rounds
    rows = play_rounds(["greedy", "random"], range(1000), "classic")
"""

from kc_sim.support.lazy import lazy_exports

# lazy: see kc_sim.support.lazy
_EXPORTS = {
    "AgentFault": "kc_sim.play.driver.faults",
    "AgentSpec": "kc_sim.play.agents.interface",
    "Game": "kc_sim.play.table.game",
    "IllegalActionError": "kc_sim.play.table.game",
    "PythonAgent": "kc_sim.play.agents.interface",
    "SeatView": "kc_sim.play.table.view",
    "load_agent": "kc_sim.play.agents.registry",
    "play_matches": "kc_sim.play.driver.runner",
    "play_rounds": "kc_sim.play.driver.runner",
    "record_round": "kc_sim.play.recording.recorded",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
