"""Presentation of finished runs: one streaming pass over a run folder (``scan``, into a
``run_stats.RunStats``), two runs compared deal by deal (``compare``), the leaderboard
(``leaderboard``), control variates and power on a run folder (``variance``, ``power``),
figures (``plots``), the HTML report (``report``, with ``research`` and ``html``), the coverage
study (``coverage``, ``coverage_model``), experiment files (``experiments``) and numbers with
their intervals as text (``text``). Every number is computed by :mod:`kc_sim.stats`; this
package reads, formats, saves and plots."""
