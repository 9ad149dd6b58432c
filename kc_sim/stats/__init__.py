"""Statistics: the one statistics engine of kc-sim, clustered by deal. The bottom layer: it
imports nothing of kc-sim but :mod:`kc_sim.errors`.

* :mod:`kc_sim.stats.intervals`: the interval formulas (cluster-robust standard error
  from per-deal sums, Student's quantile on the deals minus one, Hall's skewness
  correction; rates kept inside [0, 1]): every interval kc-sim prints or writes;
* :mod:`kc_sim.stats.sums`: per-batch sums of named values (:class:`Sums`), flat in
  memory at any number of rounds, and the batch width;
* :mod:`kc_sim.stats.pairs`: the pairs of seats of a round and the finishes-ahead score;
* :mod:`kc_sim.stats.tally`: the tally of a tournament (:class:`Tally`), filled by the
  workers chunk by chunk, and the summary tables;
* :mod:`kc_sim.stats.run_stats`: everything the figures and the report show of a run
  (:class:`RunStats`: the tally's figures, positions, lengths, ends, histograms), with
  :mod:`kc_sim.stats.hist` (histograms of integer values);
* :mod:`kc_sim.stats.paired`: the per-deal paired score of two agents, the observation of
  :mod:`kc_sim.stats.sequential` (anytime-valid confidence sequences, ``--until decided``),
  :mod:`kc_sim.stats.variates` (control variates) and :mod:`kc_sim.stats.power`;
* the leaderboard: :mod:`kc_sim.stats.bradley_terry` (the fit), :mod:`kc_sim.stats.bootstrap`
  (intervals over deals), :mod:`kc_sim.stats.metagame` (shares, cycles, fit test, Nash
  averaging) and :mod:`kc_sim.stats.ratings` (the leaderboard table; pandas).

numpy only at import (pandas is imported by the functions that build tables): workers import
this.
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
from kc_sim.stats.pairs import ahead, ahead_of, seat_pairs
from kc_sim.stats.run_stats import RunStats
from kc_sim.stats.sums import MAX_BATCHES, Deals, Sums, batch_width, deal_index
from kc_sim.stats.tally import (
    Tally,
    seat_columns,
    summarize,
    tally_matches,
    tally_rounds,
)

__all__ = ["MAX_BATCHES", "Z95", "Deals", "RunStats", "Sums", "Tally", "ahead", "ahead_of", "batch_width", "beat_from_sums",
           "cluster_mean", "cluster_rate", "cluster_sums", "deal_index", "difference_of_independent", "mean_from_sums",
           "no_variation", "pair_deal_scores", "rate_from_sums", "se_from_sums", "seat_columns", "seat_pairs", "summarize",
           "t_of", "tally_matches", "tally_rounds", "wilson_scalar", "z_of"]
