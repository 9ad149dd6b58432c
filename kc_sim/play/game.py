"""Public import path (docs/design.md, Import paths); the code is in kc_sim.play.table.game (issue 34)."""

from kc_sim.play.table.game import (  # noqa: F401
    Game,
    IllegalActionError,
    why_illegal,
)

__all__ = ["Game", "IllegalActionError", "why_illegal"]
