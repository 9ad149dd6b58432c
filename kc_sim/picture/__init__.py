"""Pictures of a position for people: the SVG of a table (:mod:`kc_sim.picture.svg`) and the
self-contained browser replay page that draws the same picture step by step
(:mod:`kc_sim.picture.replay_page`, its script ``replay.js``, which kc-sim serve serves
too), and what that page draws of an analysis: the evaluation graph's points
(:mod:`kc_sim.picture.evaluation`, from a ``kc-sim analyse`` report, a plain dict).

Both read plain dicts of card texts (a *position*; ``kc_sim.play.table.position`` builds one
from a ``Game``), so they need nothing from the engine, and they sit low in the layers
(above :mod:`kc_sim.records`, whose limits on untrusted text clean the names they show), so
the play layer (``Game._repr_svg_``, replays into positions), the terminal UI and the HTML
report all import them downward."""
