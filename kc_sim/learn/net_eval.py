"""How good a network is, measured as ``kc-sim bench-agent`` measures: the compiled policy
against fixed baselines on fixed deals, in every seating, with intervals clustered by deal.

Deal i is played once with the network in each seat (the baselines in the others), so each
deal gives one number per figure, the mean over its seatings, and the interval is the normal
one over those per-deal means (the deal is the unit of independence). ``win`` is the share of
rounds the network won (went out first, as ``bench-agent``'s win rate), ``score`` the share of
the other seats it finished ahead of by penalty (ties half); ``decided`` the share of the
rounds a seat went out in that the network won, and ``penalty_diff`` its penalty less the
other seats' mean per round (the two measures of "beats" in results/README.md, section 9: a
network may win fewer rounds and still more of those that finish, blocking the others';
the ratio estimator and its interval clustered by deal, :mod:`kc_sim.stats.intervals`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from kc_sim.core.rng import derive
from kc_sim.core.rows import C_PENALTY, C_WINNER
from kc_sim.net.policy import TRAINING_SLOT, load_slot, slot_policy
from kc_sim.play.agents.interface import AgentSpec
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.runner import play_rounds
from kc_sim.stats.intervals import mean_from_sums, rate_from_sums
from kc_sim.stats.pairs import ahead_of

__all__ = ["EvalPoint", "EVAL_SLOT", "evaluate", "deal_seeds"]

#: the policy slot the network under training is evaluated in (loaded models take the others)
EVAL_SLOT = TRAINING_SLOT
#: evaluation deals: derive(seed ^ EVAL_SALT, i), apart from any training deals
EVAL_SALT = 0x6576616C
Z95 = 1.959963984540054


@dataclass(frozen=True)
class EvalPoint:
    baseline: str
    deals: int
    rounds: int
    win: float
    win_lo: float
    win_hi: float
    score: float
    score_lo: float
    score_hi: float
    decided: float
    decided_lo: float
    decided_hi: float
    penalty_diff: float
    penalty_diff_lo: float
    penalty_diff_hi: float

    def row(self) -> dict:
        return asdict(self)


def deal_seeds(seed: int, deals: int) -> np.ndarray:
    """The evaluation's round seeds."""
    base = int(seed) ^ EVAL_SALT
    return np.array([derive(base, i) for i in range(deals)], dtype=np.int64)


def _mean_ci(per_deal: np.ndarray) -> tuple[float, float, float]:
    m = float(per_deal.mean())
    if len(per_deal) < 2:
        return m, float("nan"), float("nan")
    h = Z95 * float(per_deal.std(ddof=1)) / np.sqrt(len(per_deal))
    return m, m - h, m + h


def evaluate(params_or_spec, baselines, players: int = 2, rules="classic", deals: int = 2000,
             seed: int = 0) -> list[EvalPoint]:
    """The network (a parameter vector, loaded into :data:`EVAL_SLOT`, or an AgentSpec) against
    each baseline name, on ``deals`` fixed deals in every seating; see the module doc."""
    if isinstance(params_or_spec, AgentSpec):
        spec = params_or_spec
    else:
        spec = AgentSpec("network", "the network under training",
                         policy=slot_policy(load_slot(params_or_spec, EVAL_SLOT)))
    seeds = deal_seeds(seed, deals)
    out = []
    for name in baselines:
        base = load_agent(name)
        win = np.zeros(deals)
        score = np.zeros(deals)
        decided = np.zeros(deals)
        diff = np.zeros(deals)
        for s in range(players):
            table = [base] * players
            table[s] = spec
            rows = play_rounds(table, seeds, rules)
            pen = rows[:, C_PENALTY:C_PENALTY + players]
            own = pen[:, s:s + 1]
            win += rows[:, C_WINNER] == s
            score += ahead_of((pen > own).sum(axis=1), (pen == own).sum(axis=1) - 1) / (players - 1)
            decided += rows[:, C_WINNER] >= 0
            diff += own[:, 0] - (pen.sum(axis=1) - own[:, 0]) / (players - 1)
        share = rate_from_sums(win, decided)          # sums per deal over its seatings
        pdiff = mean_from_sums(diff, np.full(deals, float(players)), paired=True)
        win /= players
        score /= players
        w = _mean_ci(win)
        sc = _mean_ci(score)
        out.append(EvalPoint(base.name, deals, deals * players, *w, *sc, *share, *pdiff))
    return out
