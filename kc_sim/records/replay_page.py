"""Moved to kc_sim.picture.replay_page (issue 34); kept for imports that name this path."""

from kc_sim.picture.replay_page import (  # noqa: F401
    PAGE_CSS,
    PAGE_SCRIPT,
    json_for_script,
    page_assets,
    replay_block,
    replay_page,
)
