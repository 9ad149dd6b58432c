"""The judge's defaults and limits, in a module that loads nothing (the command line's
options read them without loading numba)."""

#: the evaluator when none is named: the strongest agent fast enough to roll out every
#: candidate of every decision to the round's end (docs/analysis.md, "The evaluator")
DEFAULT_EVALUATOR = "planner"
#: most worlds per decision (and per value of the luck figures) by default
DEFAULT_BUDGET = 256
#: most worlds a --budget may ask for
MAX_BUDGET = 100_000
#: the labels, by the least loss (points of win probability) that earns each, worst first
LABELS = (("blunder", 12.0), ("mistake", 6.0), ("inaccuracy", 3.0))
