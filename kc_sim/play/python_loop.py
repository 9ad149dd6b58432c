"""Moved to kc_sim.play.driver.python_loop (issue 34); kept for imports that name this path."""

from kc_sim.play.driver.python_loop import (  # noqa: F401
    B_CODES,
    B_LOG,
    B_PYMASK,
    B_TABLE,
    begin,
    BLOCK_SIZE,
    entry_points,
    ILLEGAL,
    LOG_SIZE,
    NOT_ACTION,
    OVER,
    PythonLoop,
    step,
    write_row,
)
