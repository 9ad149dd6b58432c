"""A finished round of the table, judged for the person who played it (``kc-sim analyse``'s
figures, :mod:`kc_sim.judge`): what the page shows after each round and
``GET /api/games/ID/rounds/K/analysis`` returns.

The round's record is the server's own (made by the game, never sent by a client); it is
judged for the human's seat only, without luck (the decisions are what a player can learn
from; luck doubles the time), at :data:`BUDGET` worlds a decision (``kc-sim serve
--analysis-budget``), with the default
evaluator. A round takes a few seconds of one core: the server judges one at a time and
keeps each answer.
"""

from __future__ import annotations

import threading

from kc_sim.judge.analyse import analyse_records
from kc_sim.picture.evaluation import evaluation_data
from kc_sim.play.seeing import replay_doc
from kc_sim.serve.limits import Limits

#: worlds per decision, at most (rollouts stop earlier once the best and the chosen are told apart)
BUDGET = Limits.analysis_budget
#: labelled decisions returned, costliest first
MOST = 5


def analyse_round(record: dict, seat: int, budget: int = BUDGET) -> dict:
    """The analysis of one finished round for ``seat``: the evaluator, the seat's error rate,
    accuracy and label counts, its costliest labelled decisions (what was played, the
    better action, the loss in points of win probability with its 95% interval, the replay
    step), and what the page's replay viewer draws (kc_sim/picture/replay.js): the round's
    replay document (``replay``) and the evaluation graph's data (``graph``)."""
    report = analyse_records([record], source="the round", seats=[seat], budget=budget, luck=False)
    rnd = report["rounds"][0]
    mine = rnd["seats"][str(seat)]
    labelled = sorted((d for d in rnd["decisions"] if d["seat"] == seat and d["label"]),
                      key=lambda d: -d["loss"])[:MOST]
    return {
        "available": True, "evaluator": report["evaluator"], "seat": seat, "budget": budget,
        "decisions": mine["decisions"], "forced": mine["forced"], "error_rate": mine["error_rate"],
        "accuracy": mine["accuracy"], "labels": mine["labels"],
        "costliest": [{"turn": d["turn"], "step": d["decision"], "played": d["chosen"], "better": d["best"],
                       "loss": d["loss"], "loss_ci": d["loss_ci"], "label": d["label"]} for d in labelled],
        "graph": evaluation_data(report, rnd), "replay": replay_doc(record, where="the round"),
    }


def analysis_of(game, k: int, record: dict, busy: threading.Lock, budget: int = BUDGET) -> dict:
    """Round ``k`` of ``game`` (a :class:`~kc_sim.serve.session.TableGame`; ``record`` its
    record) judged for the human's seat: made once, under ``busy`` (one analysis at a time
    on the server), then kept in the game."""
    with game.lock:
        done, seat = game.analyses.get(k), game.your_seats[k]
    if done is None:
        with busy:
            done = analyse_round(record, seat, budget)
        with game.lock:
            game.analyses[k] = done
    return done
