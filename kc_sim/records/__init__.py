"""Game records as data (docs/formats.md): building them from played rounds and writing and
reading JSON Lines (:mod:`kc_sim.records.format`), checking them against the reference engine
(:mod:`kc_sim.records.check`), and the limits and cleaning that keep text from files data
(:mod:`kc_sim.records.untrusted`). Pictures of positions are :mod:`kc_sim.picture`; model
files are :mod:`kc_sim.net.model_file`."""
