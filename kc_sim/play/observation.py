"""Public import path (docs/design.md, Import paths); the code is in kc_sim.play.table.view (issue 34)."""

from kc_sim.play.table.view import (  # noqa: F401
    ACTION_TEXT,
    fill_view,
    freeze,
    mask_cards,
    pile_cards,
    SeatView,
    unpackers,
    V_DEALER,
    V_DREW,
    V_HAND,
    V_HAND2,
    V_HAND_IDS,
    V_HAND_N,
    V_LEGAL,
    V_NHAND,
    V_NLEGAL,
    V_PILE_BASE,
    V_PILE_MASK,
    V_PILE_TOP,
    V_PLAYERS,
    V_SEAT,
    V_STOCK,
    V_TURN_ACTIONS,
    view_buffer,
    VIEW_SIZE,
)

__all__ = ["SeatView", "fill_view", "VIEW_SIZE"]
