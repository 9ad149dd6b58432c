"""Public import path of the runner (``from kc_sim.play.runner import play_rounds``, as the
docs of earlier versions write it, and ``record_round``); the code is in
:mod:`kc_sim.play.driver.runner` and :mod:`kc_sim.play.recording.recorded` (issue 34)."""

from kc_sim.play.driver.runner import (  # noqa: F401
    AgentFault,
    loop_name,
    play_matches,
    play_rounds,
    warm,
)
from kc_sim.play.recording.recorded import record_round, record_row  # noqa: F401
