"""The analysis report (:func:`kc_sim.judge.analyse.analyse_file`) as tables for a terminal
(rich): a header naming the evaluator and the view, then per round the seats' figures, the
result split and the labelled decisions, and with several rounds the totals per seat."""

from __future__ import annotations

import shutil
import sys

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

__all__ = ["render"]


def _num(x, digits=1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _ci(pair) -> str:
    return f"[{pair[0]:+.1f}, {pair[1]:+.1f}]"


def header(report: dict) -> str:
    view = ("HINDSIGHT: every card known (the double-dummy view; not what the seats could know)"
            if report["view"] == "hindsight" else "what each seat knew (hidden cards resampled)")
    luck = "" if report["luck"] else "; luck not measured (--no-luck)"
    return (f"{report['file']}: {len(report['rounds'])} round(s) judged by {report['evaluator']} (its compiled "
            f"policy plays every seat in the rollouts), {view}; at most {report['budget']} worlds per decision, "
            f"seed {report['seed']}{luck}. Win probability and losses in points (0-100).")


def _seat_table(title: str, seats: dict, names: dict) -> Table:
    t = Table(title=title, title_justify="left")
    for col in ("seat", "agent", "decisions", "judged", "error rate", "accuracy %", "blunders", "mistakes",
                "inaccuracies", "luck"):
        t.add_column(col, justify="left" if col == "agent" else "right")
    for s, row in seats.items():
        labels = row["labels"]
        luck = row.get("luck")
        luck = luck["total"] if isinstance(luck, dict) else luck
        t.add_row(s, names.get(s, ""), str(row["decisions"]), str(row["judged"]), _num(row["error_rate"], 2),
                  _num(row["accuracy"]), str(labels["blunder"]), str(labels["mistake"]), str(labels["inaccuracy"]),
                  "-" if luck is None else f"{luck:+.1f}")
    return t


def _split_table(title: str, seats: dict, names: dict) -> Table | None:
    rows = [(s, row["split"]) for s, row in seats.items() if row.get("split")]
    if not rows:
        return None
    t = Table(title=title, title_justify="left")
    for col in ("seat", "agent", "result", "= expectation", "+ luck", "+ decisions", "+ rest"):
        t.add_column(col, justify="left" if col == "agent" else "right")
    for s, sp in rows:
        t.add_row(s, names.get(s, ""), _num(sp["result"]), _num(sp["expectation"]), f"{sp['luck']:+.1f}",
                  f"{sp['decisions']:+.1f}", f"{sp['rest']:+.1f}")
    return t


def _decisions_table(rnd: dict) -> Table | None:
    marked = [d for d in rnd["decisions"] if d["label"]]
    if not marked:
        return None
    t = Table(title="labelled decisions", title_justify="left")
    for col in ("turn", "seat", "played", "win", "best", "win ", "loss [95% CI]", "label", "worlds"):
        t.add_column(col, justify="right" if col not in ("played", "best", "label") else "left")
    for d in marked:
        win = {c["action"]: c["win"] for c in d["candidates"]}
        t.add_row(str(d["turn"]), str(d["seat"]), d["chosen"], _num(win.get(d["chosen"])), d["best"],
                  _num(win.get(d["best"])), f"{d['loss']:.1f} {_ci(d['loss_ci'])}", d["label"], str(d["worlds"]))
    return t


def render(report: dict) -> Group:
    """Every table of the report, in order."""
    parts = [Text(header(report))]
    for rnd in report["rounds"]:
        names = {str(s): n for s, n in enumerate(rnd["players"])}
        if rnd["end"] == "unfinished":
            result = "unfinished"
        else:
            who = f"seat {rnd['winner']} went out" if rnd["winner"] is not None else "blocked"
            result = f"{rnd['end']}: {who}, penalties {' '.join(map(str, rnd['penalties']))}"
        parts.append(Text(f"\nrecord {rnd['record']} (line {rnd['line']}), seed {rnd['seed']}, match {rnd['match']}, "
                          f"round {rnd['round']}: {result}", style="bold"))
        parts.append(_seat_table("decisions and luck", rnd["seats"], names))
        for table in (_split_table("the result split (points)", rnd["seats"], names), _decisions_table(rnd)):
            if table is not None:
                parts.append(table)
    if len(report["rounds"]) > 1:
        parts.append(Text("\nall rounds", style="bold"))
        parts.append(_seat_table("per seat, every round", report["seats"], {}))
        split = _split_table("the result split, summed", report["seats"], {})
        if split is not None:
            parts.append(split)
    return Group(*parts)


def print_report(report: dict, file=None) -> None:
    """Print :func:`render` to ``file`` (stdout), 120 columns when it is not a terminal."""
    out = file or sys.stdout
    width = shutil.get_terminal_size().columns if out.isatty() else 120
    Console(file=out, highlight=False, width=width).print(render(report))
