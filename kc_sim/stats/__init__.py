"""Statistics: one interval engine, clustered by deal, and the tally of a tournament.

* :mod:`kc_sim.stats.intervals`: the interval formulas (cluster-robust standard error
  from per-deal sums, Student's quantile on the deals minus one, Hall's skewness
  correction; rates kept inside [0, 1]): every interval kc-sim prints or writes;
* :mod:`kc_sim.stats.sums`: per-batch sums of named values (:class:`Sums`), flat in
  memory at any number of rounds;
* :mod:`kc_sim.stats.tally`: the tally of a tournament (:class:`Tally`), filled by the
  workers chunk by chunk, and the summary tables;
* :mod:`kc_sim.stats.paired`: the per-deal paired score of two agents.

numpy only (pandas is imported by the functions that build tables): workers import this.
"""

from kc_sim.stats.intervals import (
    Z95,
    beat_from_sums,
    cluster_mean,
    cluster_rate,
    cluster_sums,
    difference_of_independent,
    mean_from_sums,
    no_variation,
    rate_from_sums,
    se_from_sums,
    t_of,
    wilson_scalar,
    z_of,
)
from kc_sim.stats.paired import pair_deal_scores
from kc_sim.stats.sums import MAX_BATCHES, Deals, Sums, batch_width, deal_index
from kc_sim.stats.tally import (
    Tally,
    agent_codes,
    seat_columns,
    summarize,
    tally_matches,
    tally_rounds,
)

__all__ = ["MAX_BATCHES", "Z95", "Deals", "Sums", "Tally", "agent_codes", "batch_width", "beat_from_sums",
           "cluster_mean", "cluster_rate", "cluster_sums", "deal_index", "difference_of_independent", "mean_from_sums",
           "no_variation", "pair_deal_scores", "rate_from_sums", "se_from_sums", "seat_columns", "summarize",
           "t_of", "tally_matches", "tally_rounds", "wilson_scalar", "z_of"]
