"""Luck-adjusted estimates on a run folder: every pair's finishes-ahead score and mean
penalty difference, adjusted by control variates at the draws (issue 37 item 5).

The control variates are the draw martingale sums of :mod:`kc_sim.core.draw_luck`, which a
run played with ``--luck`` keeps in its parts (``luck_<feature>_<s>``): per round, for the
seat of agent ``a`` minus the seat of agent ``b``, the sums of ``f(c) - mean of f over the
stock`` at each card drawn. Their expectation is exactly 0, so
the cross-fitted regression adjustment of :mod:`kc_sim.stats.variates` (with ``mu = 0``
and nothing to estimate about it) stays unbiased whatever the fitted coefficients. The
observation is the deal (every seating of a deal is one observation, as for the
unadjusted intervals): ``y`` the pair's mean score (or penalty difference) over the
deal's rounds, ``x`` the mean of the per-round differences of the sums. The interval is
the deal-clustered one of the adjusted mean; the factor ``var(plain) / var(adjusted)``
is the number of times fewer rounds the adjusted estimate needs for the same width.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kc_sim.core.rows import LUCK_FEATURES
from kc_sim.errors import UserError
from kc_sim.runs import RunReader
from kc_sim.runs.schema import AGENT, LUCK, PENALTY, seat_arrays, seat_names
from kc_sim.stats.pairs import ahead
from kc_sim.stats.variates import FOLDS, Adjusted, FoldStats, adjusted_mean

__all__ = ["PairLuck", "pair_luck", "run_luck_adjusted", "format_luck", "luck_html"]


@dataclass
class PairLuck:
    """One pair's luck-adjusted estimates: ``a`` against ``b``."""

    a: str
    b: str
    rounds: int
    score: Adjusted        # finishes-ahead score of a over b (ties half)
    penalty: Adjusted      # mean penalty of a minus b's in the same round

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "rounds": self.rounds,
                "score": self.score.to_dict(), "penalty": self.penalty.to_dict()}


class _DealTotals:
    """One pair's deals streamed into the cross-fitted statistics (score and penalty), part
    by part, so memory does not grow with the run: per deal the rounds and the sums of the
    score, the penalty difference and the features. A part holds every round of its deals
    for one line-up; a deal the pair meets in ``need`` line-ups (several parts) is held until
    all of them are read (``need`` 0: unknown, held to the end)."""

    def __init__(self, n_features: int, need: int, folds: int):
        self.need = need if need else 10**9
        self.score, self.penalty = FoldStats(n_features, folds), FoldStats(n_features, folds)
        self.rounds = 0
        self.held: dict[int, tuple[np.ndarray, int]] = {}     # deal -> (sums, parts seen)

    def add(self, group, score, pen, x):
        deals, inv = np.unique(group, return_inverse=True)
        D = len(deals)
        sums = np.column_stack([np.bincount(inv, minlength=D).astype(np.float64), np.bincount(inv, score, D),
                                np.bincount(inv, pen, D)] + [np.bincount(inv, x[:, j], D) for j in range(x.shape[1])])
        self.rounds += len(group)
        if self.need > 1:
            deals, sums = self._complete(deals, sums)
        self._fold(deals, sums)

    def _complete(self, deals, sums):
        """The deals whose every line-up is now read (their sums over the parts); the rest held."""
        done = []
        for d, row in zip(deals.tolist(), sums):
            total, seen = self.held.get(d, (0.0, 0))
            total, seen = total + row, seen + 1
            if seen >= self.need:
                self.held.pop(d, None)
                done.append((d, total))
            else:
                self.held[d] = (total, seen)
        return np.array([d for d, _ in done], np.int64), np.array([t for _, t in done]).reshape(len(done), sums.shape[1])

    def _fold(self, deals, sums):
        if len(deals):
            n = sums[:, :1]
            X = sums[:, 3:] / n
            self.score.add(deals, sums[:, 1] / n[:, 0], X)
            self.penalty.add(deals, sums[:, 2] / n[:, 0], X)

    def finish(self) -> tuple[Adjusted, Adjusted] | None:
        """The adjusted score and penalty difference (None: too few deals for the folds)."""
        if self.held:
            self._fold(np.array(list(self.held), np.int64), np.array([t for t, _ in self.held.values()]))
            self.held = {}
        if self.score.n.sum() < 2 * self.score.folds:
            return None
        mu = np.zeros(self.score.F)
        return adjusted_mean(self.score, mu), adjusted_mean(self.penalty, mu)


def pair_luck(deals, y_score, y_pen, X, folds: int = FOLDS) -> tuple[Adjusted, Adjusted]:
    """The cross-fitted adjusted estimates of the score and the penalty difference from
    per-deal means (the features' expectation is exactly 0)."""
    out = []
    for y in (y_score, y_pen):
        stats = FoldStats(X.shape[1], folds)
        stats.add(deals, y, X)
        out.append(adjusted_mean(stats, np.zeros(X.shape[1])))
    return out[0], out[1]


def run_luck_adjusted(run_dir, pairs=None, *, folds: int = FOLDS) -> list[PairLuck]:
    """Every pair's (or ``pairs``', label pairs) luck-adjusted score
    and penalty difference on a run folder of single rounds, reading its parts one at a time."""
    from kc_sim.analysis.variance import pair_indices   # lazy: it loads the deal features

    run_dir = Path(run_dir)
    reader = RunReader.open(run_dir)
    man = reader.manifest
    if man.mode != "rounds" or not man.config.luck:
        raise UserError(f"{run_dir} was not played with --luck: luck-adjusted estimates need a run of single "
                        "rounds with the draw control variates (kc-sim tournament --rounds N --luck)")
    labels, k = man.labels, man.config.players
    pidx = pair_indices(labels, pairs)
    index = {n: i for i, n in enumerate(labels)}
    lineups = man.lineups or None
    need = [sum(1 for lu in lineups if a in lu and b in lu) if lineups else 0 for a, b in pidx]
    totals = [_DealTotals(len(LUCK_FEATURES), nd, folds) for nd in need]
    luck = [seat_names(f"{LUCK}{f}_", k) for f in LUCK_FEATURES]
    cols = ["group"] + seat_names(AGENT, k) + seat_names(PENALTY, k) + [n for names in luck for n in names]
    for t in reader.tables(columns=cols, paths=reader.parts()):
        codes, pen = seat_arrays(t, k, PENALTY, index)
        group = t.column("group").to_numpy().astype(np.int64)
        sums = np.stack([np.column_stack([t.column(n).to_numpy() for n in names]) for names in luck], axis=2)
        dealt = pen >= 0
        for p, (a, b) in enumerate(pidx):
            in_a, in_b = (codes == a) & dealt, (codes == b) & dealt
            both = in_a.any(axis=1) & in_b.any(axis=1)
            if not both.any():
                continue
            pa = np.where(in_a, pen, 0).sum(axis=1)[both]
            pb = np.where(in_b, pen, 0).sum(axis=1)[both]
            x = (np.where(in_a[..., None], sums, 0).sum(axis=1) - np.where(in_b[..., None], sums, 0).sum(axis=1))[both]
            totals[p].add(group[both], ahead(pa, pb).astype(np.float64), (pa - pb).astype(np.float64), x)
    out = []
    for p, (a, b) in enumerate(pidx):
        got = totals[p].finish()
        if got is not None:
            out.append(PairLuck(labels[a], labels[b], totals[p].rounds, *got))
    if not out:
        raise UserError(f"too few deals in {run_dir} for luck-adjusted estimates: expected at least {2 * folds}")
    return out


def _worth(est: Adjusted) -> str:
    return f"{est.factor:5.2f}x" if est.sd > 0 and np.isfinite(est.factor) else " exact"


def format_luck(results: list[PairLuck]) -> str:
    """The luck-adjusted lines a command prints: per pair the adjusted score and penalty
    difference with their 95% intervals (clustered by deal) and the factors."""
    lines = ["luck-adjusted (control variates at the draws, " + ", ".join(LUCK_FEATURES) + "; 95% CI clustered by deal):",
             f"{'pair':34s} {'score [95% CI]':24s} {'worth':>6s}  {'penalty diff [95% CI]':26s} {'worth':>6s}"]
    for r in results:
        s, p = r.score, r.penalty
        slo, shi = s.interval()
        plo, phi = p.interval()
        lines.append(f"{r.a + ' vs ' + r.b:34s} {f'{100 * s.adj:5.1f}% [{100 * slo:5.1f}, {100 * shi:5.1f}]':24s} "
                     f"{_worth(s)}  {f'{p.adj:+6.3f} [{plo:+6.3f}, {phi:+6.3f}]':26s} {_worth(p)}")
    lines.append("worth: var(plain) / var(adjusted), the factor fewer rounds for the same interval width "
                 "(exact: every deal level, nothing to reduce)")
    return "\n".join(lines)


def luck_html(run_dir, manifest) -> list[str]:
    """The report's section of a run played with ``--luck`` (none for other runs): per pair the
    plain and luck-adjusted score and penalty difference with the factors."""
    from kc_sim.analysis.html import esc, table_html   # lazy: only the report needs it

    if manifest is None or manifest.mode != "rounds" or not manifest.config.luck:
        return []
    try:
        results = run_luck_adjusted(run_dir)
    except UserError as e:
        return ["<h2>Luck-adjusted estimates</h2>", f'<p class="note">{esc(str(e))}</p>']
    header = ["pair", "deals", "score [95% CI]", "adjusted [95% CI]", "worth", "penalty diff [95% CI]",
              "adjusted [95% CI]", "worth"]
    rows = []
    for r in results:
        cells = [f"{r.a} vs {r.b}", f"{r.score.deals:,}"]
        for est, pct in ((r.score, True), (r.penalty, False)):
            for adjusted in (False, True):
                m = est.adj if adjusted else est.mean
                lo, hi = est.interval(adjusted=adjusted)
                cells.append(f"{100 * m:.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]" if pct else f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]")
            cells.append(_worth(est).strip())
        rows.append(cells)
    return ["<h2>Luck-adjusted estimates</h2>",
            '<p class="note">Control variates at the draws (run played with --luck): per seat the sums of f(card) '
            "minus the mean of f over the stock at each of its draws (" + esc(", ".join(LUCK_FEATURES)) + "), "
            "expectation 0, in a regression cross-fitted over five folds of deals; intervals 95%, clustered by deal. "
            "Worth: the factor fewer rounds for the same width (docs/analysis.md).</p>",
            table_html(header, rows)]
