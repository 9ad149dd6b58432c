"""Reading finished runs: streaming tallies, the leaderboard, figures, the HTML report
and experiment files."""
