"""Reading finished runs: one streaming pass over a run folder (``scan``, into ``sums`` and
``run_stats``), two runs compared deal by deal (``compare``), the leaderboard, figures
(``plots``), the HTML report, experiment files (``experiments``) and numbers with their
intervals as text (``text``). The interval formulas themselves are in :mod:`kc_sim.stats`."""
