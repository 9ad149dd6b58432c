"""Files kc-sim reads as data: game records (docs/formats.md: building them from played
rounds, writing and reading JSON Lines, checking them against the reference engine), model
files (a JSON header and NumPy arrays, never unpickled), and the limits and cleaning that
keep text from files data (:mod:`kc_sim.records.untrusted`)."""
