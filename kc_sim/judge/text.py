"""The analysis report (:func:`kc_sim.judge.analyse.analyse_file`) as tables for a terminal
(rich): a header naming the evaluator and the view, then per round the seats' figures, the
result split and the labelled decisions, and with several rounds the totals per seat."""

from __future__ import annotations

import shutil
import sys

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

__all__ = ["AGENT_HEADER", "agent_rows", "print_report", "render", "render_sample", "sample_header"]


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


#: the columns of the per-agent table of a sampled analysis
AGENT_HEADER = ["agent", "rounds", "judged", "error rate", "loss per round", "accuracy %", "labels B/M/I",
                "luck per round"]


def _fig(fig, digits: int = 2, sign: str = "") -> str:
    """``[mean, lo, hi]`` as ``m [lo, hi]`` (``-`` for none; the mean alone without bounds)."""
    if fig is None or fig[0] is None:
        return "-"
    if fig[1] is None:
        return f"{fig[0]:{sign}.{digits}f}"
    return f"{fig[0]:{sign}.{digits}f} [{fig[1]:{sign}.{digits}f}, {fig[2]:{sign}.{digits}f}]"


def agent_rows(report: dict) -> list[list[str]]:
    """The per-agent rows (:data:`AGENT_HEADER`) of a sampled analysis, worst error rate first."""
    def key(item):
        er = item[1]["error_rate"]
        return -(er[0] if er and er[0] is not None else -1.0)
    rows = []
    for name, a in sorted(report["agents"].items(), key=key):
        lab = a["labels"]
        rows.append([name, str(a["rounds"]), str(a["judged"]), _fig(a["error_rate"]), _fig(a["loss_per_round"], 1),
                     _fig(a["accuracy"], 1), f"{lab['blunder']}/{lab['mistake']}/{lab['inaccuracy']}",
                     _fig(a["luck"], 1, "+")])
    return rows


def sample_header(report: dict) -> str:
    """One sentence: what was sampled and how it was judged."""
    luck = "" if report["luck"] else "; luck not measured"
    return (f"{report['sample']} of the {report['records']} saved rounds of {report['source']} drawn at random "
            f"(seed {report['seed']}) and judged by {report['evaluator']} (its compiled policy plays every seat "
            f"in the rollouts), at most {report['budget']} worlds per decision{luck}. Losses, error rates and luck "
            "in points of win probability (0-100); 95% intervals clustered by round.")


def render_sample(report: dict) -> Group:
    """A sampled analysis as the per-agent table under its header."""
    t = Table(title="per agent, every sampled round, with 95% intervals (labels: blunders/mistakes/inaccuracies)",
              title_justify="left", box=None, pad_edge=False)
    rows = agent_rows(report)
    # names never cut; a figure whose bounds do not fit (few rounds: wide intervals) wraps, never cut
    t.add_column(AGENT_HEADER[0], no_wrap=True, min_width=max([len(r[0]) for r in rows] + [5]))
    for col in AGENT_HEADER[1:]:
        t.add_column(col, justify="right")
    for row in rows:
        t.add_row(*row)
    return Group(Text(sample_header(report)), t)


def print_report(report: dict, file=None) -> None:
    """Print the report (:func:`render`, or :func:`render_sample` for a sampled analysis) to
    ``file`` (stdout), 120 columns when it is not a terminal."""
    out = file or sys.stdout
    width = shutil.get_terminal_size().columns if out.isatty() else 120
    body = render_sample(report) if "agents" in report and "sample" in report else render(report)
    Console(file=out, highlight=False, width=width).print(body)
