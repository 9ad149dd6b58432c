"""``kc-sim analyse`` (registered by ``kc_sim.cli``): recorded rounds judged decision by
decision, and the luck of the cards (docs/analysis.md). Bad input, a hostile or invalid
record file included, is a :class:`~kc_sim.errors.UserError`: one line, exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from kc_sim.errors import UserError
from kc_sim.judge.settings import DEFAULT_BUDGET, DEFAULT_EVALUATOR, LABELS
from kc_sim.support.notice import notice

__all__ = ["analyse"]

_LABELS = ", ".join(f"{name} from {least:g}" for name, least in reversed(LABELS))


def _say_round(report: dict, seconds: float) -> None:
    """A line on stderr as each round is judged (in a terminal): an analysis takes seconds a round."""
    notice(f"record {report['record']}: {len(report['decisions'])} decisions judged in {seconds:.1f} s")


def _judge(file: Path, rounds, sample, options: dict):
    """(the records judged: the file, or the run folder's record file; the report)."""
    # lazy: numba and the compiled core; kc-sim --help must not load them
    records = file
    if file.is_dir():
        from kc_sim.analysis.judged import run_records

        records = run_records(file)
    if sample is not None or file.is_dir():
        from kc_sim.judge.sample import analyse_sample

        return records, analyse_sample(records, sample, source=str(file), **options)
    from kc_sim.judge.analyse import analyse_file

    return records, analyse_file(file, rounds=rounds or None, **options)


def analyse(
    file: Annotated[Path, typer.Argument(help="game records (JSON Lines) from kc-sim record, kc-sim play or a "
                                         "tournament's records; or a run folder (its saved records, with --sample)")],
    rounds: Annotated[Optional[List[int]], typer.Option(
        "--round", help="a record of the file to judge, counting from 0 (repeat for more; default: all)")] = None,
    seats: Annotated[Optional[List[int]], typer.Option(
        "--seat", help="a seat whose decisions and luck are judged (repeat for more; default: all)")] = None,
    evaluator: Annotated[str, typer.Option(
        "--evaluator", help="the compiled agent that plays every seat in the rollouts")] = DEFAULT_EVALUATOR,
    budget: Annotated[int, typer.Option(
        "--budget", help="most worlds per decision (and per luck value); a decision stops earlier once the action "
        "played is told apart from the best")] = DEFAULT_BUDGET,
    sample: Annotated[Optional[int], typer.Option(
        "--sample", help="judge N records drawn at random (seeded by --seed) and sum up per agent with intervals "
        "clustered by round (default with a run folder: every saved record)")] = None,
    seed: Annotated[int, typer.Option("--seed", help="seed of the worlds, the rollouts' random numbers and "
                                      "--sample's draw")] = 0,
    seen: Annotated[str, typer.Option(
        "--seen", help="'seat': judge by what each seat knew (hidden cards resampled); 'all': every card known "
        "(hindsight, the double-dummy view)")] = "seat",
    luck: Annotated[bool, typer.Option("--luck/--no-luck", help="measure the luck of the deal and of every draw")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object (kc-sim/analysis/1) instead of "
                                          "tables")] = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="processes that judge, a round each at a time (the "
                                      "figures are the same whatever --jobs)")] = 1,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="also write one self-contained HTML page: a replay per judged round with its evaluation "
        "graph (win probability of each judged seat along the round, decisions marked by label, draws by luck) "
        "and each judged decision's best action drawn on the board")] = None,
):
    if seen not in ("seat", "all"):
        raise UserError(f"bad --seen {seen!r}: expected 'seat' (what each seat knew) or 'all' (every card known)")
    if out is not None and out.is_dir():
        raise UserError(f"bad --out {out}: a folder; give the HTML file to write")
    if sample is not None and rounds:
        raise UserError("bad --round with --sample: --sample draws the rounds itself; give one or the other")
    if sample is not None and sample < 1:
        raise UserError(f"bad --sample {sample}: expected 1 or more rounds")
    options = dict(seats=seats or None, evaluator=evaluator, budget=budget, seed=seed, hindsight=seen == "all",
                   luck=luck, on_round=_say_round if sys.stderr.isatty() else None)
    from kc_sim.analysis.judged import judging_pool

    try:
        with judging_pool(jobs) as spread:
            records, report = _judge(file, rounds, sample, {**options, **spread})
    except KeyboardInterrupt:
        raise KeyboardInterrupt("interrupted; nothing was written (an analysis is printed and saved when it "
                                "ends)") from None
    if as_json:
        typer.echo(json.dumps(report))
    else:
        from kc_sim.judge.text import print_report  # lazy: rich

        print_report(report)
    if out is not None:
        from kc_sim.ui.judged import write_analysis_html

        path, n = write_analysis_html(records, report, out)
        # on stderr under --json: stdout holds the one JSON object
        typer.echo(f"analysis page written to {path}: {n} round(s), a replay with its evaluation graph each",
                   err=as_json)


analyse.__doc__ = (
    "Judge the decisions of recorded rounds: each legal action rolled out to the round's end in worlds consistent "
    "with what the seat knew, the action played against the best (loss in points of win probability, 95% "
    f"interval), labels ({_LABELS} points), error rate and accuracy per seat; the luck of the deal and of every "
    "draw; each round's result split into expectation, luck, decisions and the rest. On a run folder (or with "
    "--sample N): N rounds of its saved records drawn at random, each agent's error rate, accuracy, labels and "
    "luck with 95% intervals clustered by round (docs/analysis.md).")
