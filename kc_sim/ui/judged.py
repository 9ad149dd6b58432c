"""Analysed rounds as replay pages: ``kc-sim analyse FILE -o OUT.html`` (one page, a viewer per
judged round) and ``kc-sim replay FILE --html OUT --analyse`` (the replayed round judged).

Each viewer is the replay of :mod:`kc_sim.picture.replay_page` with the evaluation graph and
the judged decisions' best actions (:func:`kc_sim.picture.evaluation.evaluation_data`); the
page is self-contained like any replay page.
"""

from __future__ import annotations

from pathlib import Path

from kc_sim.picture.evaluation import evaluation_data
from kc_sim.picture.replay_page import analysis_page
from kc_sim.play.seeing import replay_doc
from kc_sim.records.check import iter_records
from kc_sim.records.untrusted import display_names
from kc_sim.ui.replay import record_label, write_text

__all__ = ["write_analysis_html", "judged_round"]


def judged_round(report: dict) -> dict:
    """The evaluation data of the only round of ``report`` (an analysis of one record)."""
    return evaluation_data(report, report["rounds"][0])


def write_analysis_html(path, report: dict, out) -> tuple[Path, int]:
    """Write the rounds of ``report`` (``kc-sim analyse``'s, of the records of ``path``) as
    one page, a viewer with its evaluation graph per round, in the report's order; returns
    (path written, rounds on the page)."""
    wanted = {r["record"]: r for r in report["rounds"]}
    docs = {}
    for i, (line, rec) in enumerate(iter_records(path, unfinished_ok=True)):
        if i in wanted:
            title = f"record {i}: {', '.join(display_names(rec['players']))} \u2014 {record_label(rec)}"
            docs[i] = (title, replay_doc(rec, where=f"{path}:{line}", title=title))
    rounds = [(docs[r["record"]][0], docs[r["record"]][1], evaluation_data(report, r)) for r in report["rounds"]]
    seats = sorted({int(s) for r in report["rounds"] for s in r["seats"]})
    intro = (f"{Path(path).name}: {len(rounds)} round(s) judged for seat(s) {', '.join(map(str, seats))} by "
             f"rollouts of {report['evaluator']} (at most {report['budget']} worlds a decision, seed "
             f"{report['seed']})")
    return write_text(out, analysis_page(rounds, title="kc-sim analyse", intro=intro)), len(rounds)
