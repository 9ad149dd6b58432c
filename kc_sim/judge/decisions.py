"""Judging one decision: every legal candidate rolled out in the same worlds, the loss of the
action played against the best, a label.

For each candidate ``a`` of a decision the judge estimates, over worlds consistent with what
the seat knew (:mod:`kc_sim.judge.rollouts`), the seat's probability of winning the round if
it plays ``a`` and the evaluator plays every seat afterwards, ``Q(a)``, and its expected
penalty difference (its penalty minus the others' mean). The *best* candidate is the one of
highest estimated ``Q``; a candidate's *loss* is ``Q(best) - Q(a)``, in points of win
probability (1 point = 0.01), with a paired 95% Student interval over the worlds (the same
worlds and random numbers for every candidate: the differences are paired per world). The
loss of the action played, which the labels, error rates and result split use, is
cross-fitted (:func:`cross_fitted_loss`): the best is picked on half the worlds and measured
on the other half, so that noise alone does not make a loss.

Worlds are spent in batches (:data:`BATCH`); the judge stops once the action played is told
apart from the best (after :data:`MIN_WORLDS` worlds, the :data:`STOP_LEVEL` interval of its
loss lies above 0; when it *is* the best, that of the runner-up's loss does), once that
interval is narrower than :data:`EQUAL_WITHIN` points either side (the two are as good as
equal; at once when they had the same outcome in every world), or when the budget of
worlds is spent. A forced decision (one legal action) costs no rollout: loss 0.

Labels (points of win probability lost; only a loss whose interval lies above 0 is
labelled, so noise never makes an error): :data:`LABELS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from kc_sim.errors import UserError
from kc_sim.game.actions import action_text
from kc_sim.judge.rollouts import KNOWN, VIEW, candidate_batch
from kc_sim.judge.settings import LABELS
from kc_sim.stats.intervals import t_of

__all__ = ["BATCH", "EQUAL_WITHIN", "LABELS", "Judged", "cross_fitted_loss", "judge_decision", "label_of", "paired"]

#: worlds per batch (the stopping rule is checked between batches)
BATCH = 32
#: the stopping rule tells two candidates apart only after this many worlds, and at this
#: level: it looks at the figures after every batch, and a 95% interval looked at again and
#: again would tell apart by chance more often than one time in twenty (and stop on a
#: first batch's extreme, which the loss would then report)
MIN_WORLDS = 96
STOP_LEVEL = 0.99
#: the stopping rule's margin: an interval narrower than this many points either side of
#: the loss ends the decision (more worlds would only tell apart what hardly differs)
EQUAL_WITHIN = 1.0


def label_of(loss: float, lo: float) -> str:
    """The label of a loss of ``loss`` points whose interval starts at ``lo``: ``""`` when the
    loss is under 3 points or not told apart from 0 (``lo <= 0``)."""
    if lo <= 0:
        return ""
    for name, least in LABELS:
        if loss >= least:
            return name
    return ""


def paired(x: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of the paired differences ``x`` with its two-sided Student interval at ``level``
    (the mean twice when every difference is equal, or with one world)."""
    n = len(x)
    m = float(np.mean(x))
    if n < 2:
        return m, m, m
    sd = float(np.std(x, ddof=1))
    if sd == 0.0:
        return m, m, m
    h = t_of(level, n - 1) * sd / math.sqrt(n)
    return m, m - h, m + h


@dataclass
class Judged:
    """A judged decision. Win probabilities and losses in points (0-100)."""

    seat: int
    turn: int
    index: int
    chosen: int
    forced: bool
    worlds: int = 0
    best: int = -1
    #: per candidate: action id, win points, its loss against the best with the interval,
    #: the expected penalty difference
    candidates: list[dict] = field(default_factory=list)
    loss: float = 0.0
    loss_lo: float = 0.0
    loss_hi: float = 0.0
    label: str = ""
    #: the stopping rule ended it (told apart, or as good as equal) before the budget ran out
    settled: bool = False

    def as_dict(self) -> dict:
        return {
            "seat": self.seat, "turn": self.turn + 1, "decision": self.index, "chosen": action_text(self.chosen),
            "best": action_text(self.best), "forced": self.forced, "worlds": self.worlds,
            "loss": round(self.loss, 3), "loss_ci": [round(self.loss_lo, 3), round(self.loss_hi, 3)],
            "label": self.label, "settled": self.settled,
            "candidates": [{**c, "action": action_text(c["action"])} for c in self.candidates],
        }


def _summarise(actions, win, pen, chosen_i):
    """Best candidate and, for each, its win points, its loss against the best with the
    paired interval and its mean penalty difference, all on every world so far."""
    means = win.mean(axis=0)
    best = int(np.argmax(means))
    if means[chosen_i] >= means[best]:
        best = chosen_i                  # ties go to the action played: no loss from a tie
    rows = []
    for i in range(len(actions)):
        m, lo, hi = paired((win[:, best] - win[:, i]) * 100.0)
        rows.append({"action": int(actions[i]), "win": round(float(means[i]) * 100.0, 3), "loss": round(m, 3),
                     "loss_ci": [round(lo, 3), round(hi, 3)], "penalty_diff": round(float(pen[:, i].mean()), 3)})
    return best, rows


def cross_fitted_loss(win: np.ndarray, chosen_i: int) -> tuple[float, float, float]:
    """The loss of the action played, in points, with its interval, free of the winner's
    curse: the best candidate picked on the even worlds is compared with the action played on
    the odd worlds, and the other way round, and the two halves' per-world differences are
    pooled. (Picking the best and measuring it on the same worlds favours whichever
    candidate was lucky there, so an action as good as the best would show a loss.) With
    fewer than two worlds: the plain loss."""
    n = win.shape[0]
    if n < 2:
        return paired((win.max(axis=1) - win[:, chosen_i]) * 100.0)
    diffs = np.empty(n)
    for fit, use in ((slice(0, None, 2), slice(1, None, 2)), (slice(1, None, 2), slice(0, None, 2))):
        means = win[fit].mean(axis=0)
        best = int(np.argmax(means))
        if means[chosen_i] >= means[best]:
            best = chosen_i
        diffs[use] = win[use, best] - win[use, chosen_i]
    return paired(diffs * 100.0)


def _done(win: np.ndarray, best: int, chosen_i: int) -> bool:
    """The stopping rule (see the module docstring), on every world so far: the action played
    against the best (or, when it is the best, the runner-up against it) told apart at the
    stricter level :data:`STOP_LEVEL` after at least :data:`MIN_WORLDS` worlds, or the
    interval narrower than :data:`EQUAL_WITHIN` either side (at once when every world gave the
    two the same outcome)."""
    k = win.shape[1]
    if k < 2:
        return True
    if chosen_i != best:
        other = chosen_i
    else:
        means = win.mean(axis=0)
        other = max((i for i in range(k) if i != best), key=lambda i: means[i])
    m, lo, hi = paired((win[:, best] - win[:, other]) * 100.0, STOP_LEVEL)
    return (hi - lo) / 2 < EQUAL_WITHIN or (lo > 0 and win.shape[0] >= MIN_WORLDS)


def _precise(win: np.ndarray, chosen_i: int, within: float) -> bool:
    """The precision rule: the cross-fitted loss of the action played is known within
    ``within`` points either side (95%)."""
    _, lo, hi = cross_fitted_loss(win, chosen_i)
    return win.shape[1] < 2 or (hi - lo) / 2 <= within


def judge_decision(dec, policy, *, seed: int, budget: int, hindsight: bool = False, batch: int = BATCH,
                   within: float | None = None) -> Judged:
    """Judge one :class:`~kc_sim.judge.positions.Decision` with the evaluator's compiled
    ``policy``: worlds dealt from ``seed`` (the same for every candidate), at most ``budget``
    of them; ``hindsight``: every card known (one world, the real one; only the policies'
    random numbers differ). ``within``: instead of the stopping rule, spend worlds until the
    loss of the action played is known within that many points either side (the precision
    ``kc-sim bench --judge`` times), or the budget is spent."""
    out = Judged(dec.seat, dec.turn, dec.index, dec.chosen, dec.forced)
    if dec.forced:
        out.best = dec.chosen
        out.candidates = [{"action": dec.chosen, "win": None, "loss": 0.0, "loss_ci": [0.0, 0.0],
                           "penalty_diff": None}]
        out.settled = True
        return out
    actions = np.array(dec.legal, np.int64)
    chosen_i = dec.legal.index(dec.chosen)
    mode = KNOWN if hindsight else VIEW
    wins, pens = [], []
    n = 0
    rows, best = [], chosen_i
    while n < budget:
        count = min(batch, budget - n)
        win, pen, bad = candidate_batch(dec.state, dec.seat, actions, mode, policy, seed, n, count)
        if bad:
            raise UserError(f"the evaluator played an illegal action in {bad} rollout(s) (decision {dec.index}): "
                            "choose a legal compiled agent with --evaluator")
        wins.append(win)
        pens.append(pen)
        n += count
        best, rows = _summarise(actions, np.concatenate(wins), np.concatenate(pens), chosen_i)
        so_far = np.concatenate(wins)
        if _precise(so_far, chosen_i, within) if within is not None else _done(so_far, best, chosen_i):
            out.settled = True
            break
    out.worlds, out.best, out.candidates = n, int(actions[best]), rows
    out.loss, out.loss_lo, out.loss_hi = (round(x, 3) for x in cross_fitted_loss(np.concatenate(wins), chosen_i))
    out.label = label_of(out.loss, out.loss_lo)
    return out
