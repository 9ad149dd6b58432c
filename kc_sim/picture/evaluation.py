"""What the replay viewer draws of an analysis (``kc-sim analyse``'s report, format
``kc-sim/analysis/1``): the points of the evaluation graph and each judged decision's best
action, as a small dict embedded in the page (``data-role=eval``) or sent by kc-sim serve.

A point is one seat's win probability (points, 0-100) at one *step* of the replay (step
``d``: the position before decision ``d``, :func:`kc_sim.play.seeing.replay_doc`):

* ``deal`` at step 0: the value of the position after the deal, with the deal's luck;
* ``decision`` at the decision's step: the value of the action played (its candidate's
  estimated win probability), with the label, the loss (cross-fitted, what the labels use)
  and its interval, the best action and the best's win probability. Forced decisions (one
  legal action, not rolled out) have no point;
* ``draw`` at the step right after the card came: the value after the draw, with its luck.

Only figures and action texts go in (no candidates' lists): the page stays light. Seat names
come from the replay document, which cleans them; the script escapes every text it shows.
"""

from __future__ import annotations

__all__ = ["evaluation_data"]


def _decision(d: dict) -> dict | None:
    if d["forced"] or not d["candidates"]:
        return None
    win = {c["action"]: c["win"] for c in d["candidates"]}
    return {"kind": "decision", "step": d["decision"], "seat": d["seat"], "turn": d["turn"], "win": win[d["chosen"]],
            "played": d["chosen"], "best": d["best"], "best_win": win[d["best"]], "loss": d["loss"],
            "loss_ci": d["loss_ci"], "label": d["label"], "worlds": d["worlds"]}


def _luck(x: dict, kind: str) -> dict:
    return {"kind": kind, "step": x.get("step", 0) if kind == "draw" else 0, "seat": x["seat"], "win": x["after"],
            "before": x["before"], "luck": x["luck"], "luck_ci": x["luck_ci"],
            **({"card": x["card"], "turn": x["turn"]} if kind == "draw" else {})}


def evaluation_data(report: dict, rnd: dict) -> dict:
    """The graph's data of round ``rnd`` (one of ``report["rounds"]``): the evaluator and its
    settings, the seats judged and every point in step order (per step: the deal, then the
    draw, then the decision)."""
    points = [p for p in map(_decision, rnd["decisions"]) if p is not None]
    luck = rnd.get("luck") or {}
    points += [_luck(x, "deal") for x in luck.get("deal", ())]
    points += [_luck(x, "draw") for x in luck.get("draws", ())]
    order = {"deal": 0, "draw": 1, "decision": 2}
    points.sort(key=lambda p: (p["step"], order[p["kind"]], p["seat"]))
    return {
        "evaluator": report["evaluator"], "view": report["view"], "budget": report["budget"],
        "labels": dict(report["labels"]), "seats": sorted(int(s) for s in rnd["seats"]), "points": points,
    }
