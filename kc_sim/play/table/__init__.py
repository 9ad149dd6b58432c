"""One round at the table, played one action at a time from Python: the step API
(:mod:`kc_sim.play.table.game`: ``Game``, ``why_illegal``), what a seat may see
(:mod:`kc_sim.play.table.view`: ``SeatView``, the compiled ``fill_view``), and a game's
position as the picture draws it (:mod:`kc_sim.play.table.position`). Users import them as
``kc_sim.play.table.game`` and ``kc_sim.play.table.view``."""
