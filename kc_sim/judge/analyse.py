"""``kc-sim analyse``: every decision and draw of recorded rounds judged, as one report (a dict
that ``--json`` prints as it is and the terminal shows as tables).

The steps: read and check the records (:func:`kc_sim.judge.positions.read_checked`), replay
each into decisions and draws (:func:`~kc_sim.judge.positions.replay`), judge the chosen
seats' decisions (:func:`kc_sim.judge.decisions.judge_decision`) and, unless asked not to,
their luck (:mod:`kc_sim.judge.luck`); then sum up per seat and split each finished round's
result (docs/analysis.md defines every figure).

Random numbers: decision ``d`` of record ``i`` is judged on worlds dealt from
``derive(derive(seed, i), d)``, so one decision's figures do not depend on which other
records, seats or decisions were asked for.
"""

from __future__ import annotations

import time
from typing import Callable

from kc_sim.core.rng import derive
from kc_sim.errors import UserError
from kc_sim.judge.decisions import BATCH, EQUAL_WITHIN, judge_decision
from kc_sim.judge.luck import deal_luck, draw_luck
from kc_sim.judge.positions import check_one, read_checked, replay
from kc_sim.judge.settings import DEFAULT_BUDGET, DEFAULT_EVALUATOR, LABELS, MAX_BUDGET
from kc_sim.play.agents.registry import load_agent

__all__ = ["DEFAULT_BUDGET", "DEFAULT_EVALUATOR", "FORMAT", "analyse_file", "analyse_records", "check_records",
           "seat_summary"]

#: the report's format name (``--json``)
FORMAT = "kc-sim/analysis/1"
#: seeds of the luck figures' worlds, apart from the decisions' (which count from 0)
_DRAW_STREAM, _DEAL_STREAM = 1 << 20, 1 << 21


def evaluator_policy(name: str):
    """``(label, compiled policy)`` of the agent ``name``; a Python agent is refused (the
    rollouts run in compiled code)."""
    spec = load_agent(name)
    if not spec.compiled:
        raise UserError(f"bad --evaluator {name!r}: a Python agent; the rollouts need a compiled agent "
                        "(greedy, planner, net, ...: kc-sim agents lists them)")
    return spec.name, spec.policy


def seat_summary(judged: list) -> dict:
    """A seat's decisions summed up: counts, label counts, the error rate (mean loss per
    non-forced decision, points of win probability), the total loss and the accuracy (the
    share of non-forced decisions whose action was the best or not told apart from it)."""
    free = [j for j in judged if not j.forced]
    labels = {name: sum(1 for j in free if j.label == name) for name, _ in LABELS}
    total = sum(j.loss for j in free)
    good = sum(1 for j in free if j.loss_lo <= 0)
    return {
        "decisions": len(judged), "forced": len(judged) - len(free), "judged": len(free),
        "error_rate": round(total / len(free), 3) if free else None,
        "total_loss": round(total, 3), "labels": labels,
        "accuracy": round(100.0 * good / len(free), 1) if free else None,
    }


def _round_report(r, seats, policy, *, seed, budget, hindsight, luck, progress) -> tuple[dict, list]:
    rseed = derive(seed, r.index)
    judged = []
    for d in r.decisions:
        if d.seat in seats:
            judged.append(judge_decision(d, policy, seed=derive(rseed, d.index), budget=budget, hindsight=hindsight))
            progress(1)
    out = {
        "record": r.index, "line": r.line, "seed": r.rec["seed"], "match": r.rec["match"], "round": r.rec["round"],
        "players": r.names, "end": r.end, "winner": r.winner, "penalties": r.penalties,
        "decisions": [j.as_dict() for j in judged],
        "seats": {},
    }
    deals, draws = {}, []
    if luck:
        for s in seats:
            deals[s] = deal_luck(r.start, s, policy, seed=derive(rseed, _DEAL_STREAM + s), worlds=budget)
        for i, dr in enumerate(r.draws):
            if dr.seat in seats:
                draws.append(draw_luck(dr, policy, seed=derive(rseed, _DRAW_STREAM + i), worlds=budget))
                progress(1)
        out["luck"] = {"deal": [deals[s].as_dict() for s in seats], "draws": [x.as_dict() for x in draws]}
    for s in seats:
        mine = [j for j in judged if j.seat == s]
        summary = {"name": r.names[s], **seat_summary(mine)}
        if luck:
            drawn = sum(x.luck for x in draws if x.seat == s)
            summary["luck"] = {"deal": round(deals[s].luck, 3), "draws": round(drawn, 3),
                               "total": round(deals[s].luck + drawn, 3)}
            if r.end != "unfinished":
                result = 100.0 if r.winner == s else 0.0
                expect, lucky, lost = deals[s].before, deals[s].luck + drawn, -summary["total_loss"]
                summary["split"] = {"result": result, "expectation": round(expect, 3), "luck": round(lucky, 3),
                                    "decisions": round(lost, 3), "rest": round(result - expect - lucky - lost, 3)}
        out["seats"][str(s)] = summary
    return out, judged


def _totals(judged_by_seat: dict, rounds: list) -> dict:
    """Per seat over every round analysed: the decision figures of :func:`seat_summary` and
    the sums of luck and of each part of the result split."""
    out = {}
    for s, judged in sorted(judged_by_seat.items()):
        t = seat_summary(judged)
        mine = [r["seats"][str(s)] for r in rounds if str(s) in r["seats"]]
        t["rounds"] = len(mine)
        if mine and "luck" in mine[0]:
            t["luck"] = round(sum(m["luck"]["total"] for m in mine), 3)
            splits = [m["split"] for m in mine if "split" in m]
            t["split"] = {k: round(sum(x[k] for x in splits), 3) for k in
                          ("result", "expectation", "luck", "decisions", "rest")} if splits else None
        out[str(s)] = t
    return out


def check_records(records) -> list[tuple[int, int, dict]]:
    """``(index, line, record)`` for game record dicts given by a caller (``records``: dicts,
    or ``(index, dict)`` pairs keeping their numbers in a larger source), each checked against
    the reference as :func:`~kc_sim.judge.positions.read_checked` checks a file's: a record
    that does not replay is a one-line UserError. ``line`` is the record's position from 1."""
    out = []
    for pos, item in enumerate(records):
        i, rec = item if isinstance(item, tuple) else (pos, item)
        if not isinstance(rec, dict):
            raise UserError(f"record {i} is not a game record (a JSON object of kc-sim/game/1)")
        out.append((int(i), pos + 1, check_one(rec, int(i), pos + 1, "records")))
    if not out:
        raise UserError("no game records to analyse")
    return out


def analyse_file(path, *, rounds=None, **options) -> dict:
    """The analysis of the records of ``path`` (``rounds``: record indices from 0, None:
    all) as a report dict (``FORMAT``); ``options`` as :func:`analyse_records`."""
    if rounds is not None and min(rounds) < 0:
        raise UserError(f"bad --round {min(rounds)}: records count from 0")
    _check_options(options)
    return _analyse(read_checked(path, rounds), str(path), **options)


def analyse_records(records, *, source: str = "<records>", **options) -> dict:
    """The analysis of game record dicts (``records``: dicts, or ``(index, dict)`` pairs;
    :func:`check_records`) without a file: what ``kc-sim play``, the run analysis and the
    report call. ``source`` names them in the report's ``file``; ``options`` as
    :func:`_analyse` (seats, evaluator, budget, seed, hindsight, luck, progress, on_round, map_rounds)."""
    _check_options(options)
    return _analyse(check_records(records), source, **options)


def _check_options(options: dict) -> None:
    budget, seed, seats = options.get("budget", DEFAULT_BUDGET), options.get("seed", 0), options.get("seats")
    if not 1 <= budget <= MAX_BUDGET:
        raise UserError(f"bad --budget {budget}: expected 1 to {MAX_BUDGET} worlds")
    if not 0 <= seed < 1 << 63:
        raise UserError(f"bad --seed {seed}: expected 0 to 2**63 - 1")
    if seats is not None and min(seats) < 0:
        raise UserError(f"bad --seat {min(seats)}: seats count from 0")


def _analyse(records, source: str, *, seats=None, evaluator: str = DEFAULT_EVALUATOR, budget: int = DEFAULT_BUDGET,
             seed: int = 0, hindsight: bool = False, luck: bool = True,
             progress: Callable[[int], None] | None = None,
             on_round: Callable[[dict, float], None] | None = None,
             map_rounds: Callable | None = None) -> dict:
    """The analysis of checked ``(index, line, record)`` triples (``seats``: seat numbers,
    None: all) as a report dict (``FORMAT``). ``progress(k)`` is called as k more decisions
    or draws are judged (in this process only), ``on_round(report, seconds)`` as each round
    is done. ``map_rounds(fn, arg_tuples)``, when given, runs :func:`judge_round` over the
    rounds elsewhere (worker processes: ``kc-sim analyse --jobs``) and yields the results in
    the order given; a round's figures depend only on the seed and its index, so where it was
    judged changes nothing."""
    name, _ = evaluator_policy(evaluator)
    replayed = [replay(i, n, rec) for i, n, rec in records]
    if seats is not None and all(max(seats) >= r.players for r in replayed):
        raise UserError(f"bad --seat {max(seats)}: the rounds have {replayed[0].players} seats, counted from 0")
    out = {
        "format": FORMAT, "file": source, "evaluator": name, "view": "hindsight" if hindsight else "seat",
        "budget": budget, "batch": BATCH, "equal_within": EQUAL_WITHIN, "seed": seed,
        "labels": {label: least for label, least in LABELS}, "luck": luck, "rounds": [],
    }
    tasks = [(r, [s for s in range(r.players) if seats is None or s in seats], evaluator, seed, budget, hindsight,
              luck) for r in replayed]
    if map_rounds is None:
        done = (judge_round(*t, progress=progress) for t in tasks)
    else:
        done = map_rounds(judge_round, tasks)
    by_seat: dict[int, list] = {}
    for (_, chosen, *_), (report, judged, seconds) in zip(tasks, done):
        out["rounds"].append(report)
        if on_round is not None:
            on_round(report, seconds)
        for s in chosen:
            by_seat.setdefault(s, []).extend(j for j in judged if j.seat == s)
    out["seats"] = _totals(by_seat, out["rounds"])
    return out


def judge_round(r, seats, evaluator: str, seed: int, budget: int, hindsight: bool, luck: bool,
                progress: Callable[[int], None] | None = None) -> tuple[dict, list, float]:
    """One replayed round's ``seats`` judged with the agent ``evaluator`` (by name, so that a
    worker process loads it itself): (its report, its judged decisions, seconds taken)."""
    started = time.perf_counter()
    report, judged = _round_report(r, seats, evaluator_policy(evaluator)[1], seed=seed, budget=budget,
                                   hindsight=hindsight, luck=luck, progress=progress or (lambda k: None))
    return report, judged, time.perf_counter() - started
