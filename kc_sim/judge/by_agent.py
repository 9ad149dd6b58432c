"""An analysis report summed up per agent (not per seat), with 95% intervals clustered by round.

Over many rounds an agent sits in different seats against different opponents; its strength
figure is its own decisions' losses wherever it sat. The decisions of one round are not
independent (one bad card makes several hard decisions; one long round gives many easy
ones), so every interval treats the *round* as the unit: per agent and round, the sums
(loss, judged decisions, decisions not told apart from the best, luck, seats held) are taken,
and each figure is a ratio of sums over the rounds with its cluster-robust (CR1) standard error
and Student's quantile on the rounds minus one (:func:`kc_sim.stats.intervals.mean_from_sums`
with ``paired``, which leaves out the skewness correction of the tournament tables: with the
tens of rounds a sample holds, that correction swung the bounds far out of the figures' range):

* ``error_rate``: the loss summed over the round / the judged decisions of the round;
* ``loss_per_round``: the loss summed over the round / the seats the agent held in it
  (both are losses, which cannot be below 0, so their lower bounds are kept at 0 or above:
  a decision's cross-fitted loss is unbiased and can come out negative, and with few rounds
  Student's interval reached below 0);
* ``accuracy``: the decisions not told apart from the best / the judged decisions (percent;
  its bounds kept within 0 and 100);
* ``luck``: the luck (deal and draws) / the seats held (only when luck was measured).

Label counts are totals. An agent in two seats of one round (self-play) contributes both
seats to that round's sums.
"""

from __future__ import annotations

import math

import numpy as np

from kc_sim.judge.settings import LABELS
from kc_sim.stats.intervals import mean_from_sums

__all__ = ["agent_figures"]

_FIELDS = ("loss", "judged", "good", "luck", "seats", "decisions", "won")


def _interval(S, N, scale: float = 1.0, share: bool = False, positive: bool = False) -> list | None:
    """``[mean, lo, hi]`` of the ratio of sums over rounds, rounded; None with no
    observation; the bounds None with fewer than two rounds. A ``share`` (accuracy) has its
    bounds kept within 0 and 1 (the t interval of a share near 1 reaches past it); a
    ``positive`` figure (a loss) has its bounds kept at 0 or above (the point estimate, unbiased,
    is left as it is). Cutting an interval to the values the figure can take loses no coverage."""
    S, N = np.asarray(S, float), np.asarray(N, float)
    if N.sum() <= 0:
        return None
    m, lo, hi = mean_from_sums(S, N, paired=True)
    if (share or positive) and not math.isnan(lo):
        lo, hi = max(lo, 0.0), max(hi, 0.0)
    if share and not math.isnan(hi):
        hi = min(hi, 1.0)
    fix = (lambda x: None if x is None or math.isnan(x) else round(scale * x, 3))
    return [fix(m), fix(lo), fix(hi)]


def _round_sums(rnd: dict, luck: bool) -> dict:
    """Per agent name, the sums of one analysed round (:data:`_FIELDS` and the labels)."""
    out: dict[str, dict] = {}
    for s, seat in rnd["seats"].items():
        name = rnd["players"][int(s)]
        acc = out.setdefault(name, {**{f: 0.0 for f in _FIELDS}, **{lab: 0 for lab, _ in LABELS}})
        mine = [d for d in rnd["decisions"] if d["seat"] == int(s) and not d["forced"]]
        acc["loss"] += sum(d["loss"] for d in mine)
        acc["judged"] += len(mine)
        acc["good"] += sum(1 for d in mine if d["loss_ci"][0] <= 0)
        acc["decisions"] += seat["decisions"]
        acc["seats"] += 1
        acc["won"] += 1 if rnd["winner"] == int(s) else 0
        if luck and isinstance(seat.get("luck"), dict):
            acc["luck"] += seat["luck"]["total"]
        for lab, _ in LABELS:
            acc[lab] += seat["labels"][lab]
    return out


def agent_figures(report: dict) -> dict:
    """Per agent name (as the records name the players), over the rounds of an analysis
    report (:func:`kc_sim.judge.analyse.analyse_records`): ``rounds``, ``seats``,
    ``decisions``, ``judged``, ``wins``, ``error_rate``, ``loss_per_round``, ``accuracy`` and
    ``luck`` as ``[mean, lo, hi]`` (95%, clustered by round; module doc) and ``labels``."""
    luck = bool(report.get("luck"))
    rows: dict[str, list[dict]] = {}
    for rnd in report["rounds"]:
        for name, sums in _round_sums(rnd, luck).items():
            rows.setdefault(name, []).append(sums)
    out = {}
    for name in sorted(rows):
        r = rows[name]
        col = {f: np.array([x[f] for x in r]) for f in _FIELDS}
        out[name] = {
            "rounds": len(r), "seats": int(col["seats"].sum()), "decisions": int(col["decisions"].sum()),
            "judged": int(col["judged"].sum()), "wins": int(col["won"].sum()),
            "error_rate": _interval(col["loss"], col["judged"], positive=True),
            "loss_per_round": _interval(col["loss"], col["seats"], positive=True),
            "accuracy": _interval(col["good"], col["judged"], 100.0, share=True),
            "luck": _interval(col["luck"], col["seats"]) if luck else None,
            "labels": {lab: int(sum(x[lab] for x in r)) for lab, _ in LABELS},
        }
    return out
