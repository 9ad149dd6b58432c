"""One round at the table, played one action at a time from Python: the step API
(:mod:`kc_sim.play.table.game`: ``Game``, ``why_illegal``), what a seat may see
(:mod:`kc_sim.play.table.view`: ``SeatView``, the compiled ``fill_view``), and a game's
position as the picture draws it (:mod:`kc_sim.play.table.position`). Users import them from the
public paths ``kc_sim.play.game`` and ``kc_sim.play.observation`` (or ``kc_sim.play``), which
stay when these modules move (docs/design.md, Import paths that moved)."""
