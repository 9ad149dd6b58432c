"""``kc-sim play`` and ``kc-sim replay`` (registered by ``kc_sim.cli``).

Both raise :class:`~kc_sim.errors.UserError` for bad input; the command line prints its
message on one line and exits 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from kc_sim.cli.options import RulesOpt
from kc_sim.errors import UserError
from kc_sim.judge.settings import DEFAULT_BUDGET
from kc_sim.play.agents.names import parse_agent_list

__all__ = ["play", "replay", "render"]

def _interactive() -> bool:
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def play(
    agents: Annotated[str, typer.Option(
        "--agents", help="one name per seat, comma-separated, in seat order: 'human' for a person at this "
        "terminal, else an agent (built-in name, package.module:Name or path/to/file.py:Name)")] = "human,greedy",
    rules: RulesOpt = "classic",
    seed: Annotated[Optional[int], typer.Option(
        "--seed", help="deal seed (default: a random one, printed so the deal can be played again)")] = None,
    match: Annotated[bool, typer.Option(
        "--match", help="play a whole match under the rules' match switch (default: one round)")] = False,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="JSON Lines file for the game records (a folder: a new file in it; "
        "default results/play/play-<time>-seed<seed>.jsonl)")] = None,
    analyse: Annotated[Optional[str], typer.Option(
        "--analyse", help="at each round's end: 'ask' whether to analyse it (the default in a terminal with a "
        "human seat), 'yes' (always, without asking) or 'no' (the default otherwise)")] = None,
):
    """Play Kings in the Corner in the terminal against agents. Enter a move by its number or
    its text (7H>E, N>E, stop); 'help' explains, 'quit' or end of input stops. The game
    records are saved and their path printed. At a round's end (in a terminal) it offers
    the analysis of your decisions and luck (kc-sim analyse)."""
    # lazy: kc_sim.ui loads the compiled core, which kc-sim --help does not need
    from kc_sim.ui.terminal import play_session

    names = parse_agent_list(agents)
    if len(names) < 2:
        raise UserError(f"bad --agents {agents!r}: name one player per seat, at least two "
                        "(e.g. --agents human,greedy)")
    if analyse is None:
        analyse = "ask" if _interactive() and any(n.lower() == "human" for n in names) else "no"
    play_session(names, rules=rules, seed=seed, match=match, out=out, input_fn=input, echo=typer.echo,
                 analyse=analyse)


def _judge(budget: int):
    """``write_replay_html``'s judge: the round analysed with the defaults of kc-sim analyse."""
    def judge(path, k):
        from kc_sim.judge.analyse import analyse_file   # lazy: numba
        from kc_sim.ui.judged import judged_round

        return judged_round(analyse_file(path, rounds=[k], budget=budget))
    return judge


def replay(
    file: Annotated[Path, typer.Argument(help="game records (JSON Lines), e.g. from kc-sim play or kc-sim record")],
    round: Annotated[int, typer.Option(
        "--round", help="which record of the file to replay, counting from 0")] = 0,
    pause: Annotated[Optional[bool], typer.Option(
        "--pause/--no-pause", help="wait for Enter between turns (default: when run in a terminal)")] = None,
    reveal: Annotated[bool, typer.Option(
        "--reveal", help="show every hand at every turn (default: the hand of the seat to play)")] = False,
    html: Annotated[Optional[Path], typer.Option(
        "--html", help="write the round as one self-contained HTML page to step through in a browser "
        "(works offline, opened from disk) instead of replaying it here")] = None,
    analyse: Annotated[bool, typer.Option(
        "--analyse", help="with --html: judge the round first (kc-sim analyse: every seat's decisions and luck) and "
        "draw its evaluation graph and each decision's best action on the page")] = False,
    budget: Annotated[int, typer.Option(
        "--budget", help="with --analyse: most worlds per decision and per luck value")] = DEFAULT_BUDGET,
):
    """Step through a recorded round turn by turn with the table picture of kc-sim play, and
    check that it ends with the recorded result (exit 1 if it does not). With --html, write
    a browser replay instead; with --analyse too, the round judged on it (evaluation graph,
    each decision's best action on the board: docs/analysis.md)."""
    # lazy: see play
    from kc_sim.ui.replay import run_replay, write_replay_html

    if analyse and html is None:
        raise UserError("--analyse draws the analysis on the replay page: give --html OUT.html too")
    if html is not None:
        path, doc = write_replay_html(file, round, html, judge=_judge(budget) if analyse else None)
        typer.echo(f"replay page written to {path}: {len(doc['turn_starts'])} turns, "
                   f"{len(doc['steps']) - 1} decisions; {doc['result']}")
        if doc["matches"] is False:
            raise typer.Exit(1)
        return
    if pause is None:
        pause = _interactive()
    res = run_replay(file, round, pause=input if pause else None, reveal=reveal, echo=typer.echo)
    if res.matches is False:
        raise typer.Exit(1)


def render(
    file: Annotated[Path, typer.Argument(help="game records (JSON Lines), e.g. from kc-sim play or kc-sim record")],
    out: Annotated[Path, typer.Option("--out", "-o", help="SVG file to write")],
    round: Annotated[int, typer.Option(
        "--round", help="which record of the file, counting from 0")] = 0,
    turn: Annotated[Optional[int], typer.Option(
        "--turn", help="draw the table as turn T starts (turns count from 1; default: the end of the record)")] = None,
    hands: Annotated[str, typer.Option(
        "--hands", help="whose hands are face up: 'all', 'to-play' (the seat to act), or a seat number "
        "(that seat as the observer)")] = "all",
):
    """Draw one position of a recorded round as an SVG picture: the cross and corners with
    every pile's cards, the stock size, the seats with their hands."""
    # lazy: see play
    from kc_sim.ui.replay import write_position_svg

    path, doc, pos = write_position_svg(file, round, out, turn=turn, hands=hands)
    typer.echo(f"position written to {path}: {pos['status']}")
