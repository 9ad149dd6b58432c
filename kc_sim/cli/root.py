"""The ``kc-sim`` command. Bad input ends with one line on stderr and exit code 2."""

from __future__ import annotations

import functools
import gc
import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

# typer (>= 0.16, as declared) vendors click and does not re-export these exceptions
from typer._click import exceptions as click_exceptions

from kc_sim.cli import analysis as cli_analysis
from kc_sim.cli import leaderboard as cli_leaderboard
from kc_sim.cli import learn as cli_learn
from kc_sim.cli import play as cli_play
from kc_sim.cli import power as cli_power
from kc_sim.cli import tournament as cli_tournament
from kc_sim.cli.options import RulesOpt
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="kc-sim: a fast simulation harness for Kings in the Corner.",
)


def _agent_names(agents: str, players: int) -> list[str]:
    # lazy: kc_sim.play loads the compiled core, which kc-sim --help does not need
    from kc_sim.play.registry import parse_agent_list

    names = parse_agent_list(agents)
    if len(names) == 1:
        names = names * players
    if len(names) != players:
        raise UserError(f"--agents names {len(names)} agents for {players} players: give one name, or one per seat")
    return names


@app.command()
def record(
    out: Annotated[Path, typer.Option("-o", "--out", help="JSON Lines file to write")],
    players: Annotated[int, typer.Option(help="players per round")] = 2,
    rounds: Annotated[int, typer.Option(help="number of rounds")] = 10,
    seed: Annotated[int, typer.Option(help="run seed; round i is dealt from a seed derived from it")] = 0,
    rules: RulesOpt = "classic",
    agents: Annotated[str, typer.Option(help="agent name for every seat, or one per seat, comma-separated")] = "random",
):
    """Play rounds and write their game records (JSON Lines, FORMATS of kc-sim/game/1)."""
    # lazy, as in every command: each loads only what it uses
    from kc_sim.play.recording import record_rounds

    rs = parse_rules(rules)
    rs.check_players(players)
    if rounds < 1:
        raise UserError(f"bad --rounds {rounds}: expected a positive number")
    path = record_rounds(out, _agent_names(agents, players), rounds, seed, rs)
    typer.echo(f"wrote {rounds} game records to {path}")


@app.command()
def check(file: Annotated[Path, typer.Argument(help="game records (JSON Lines) to replay through the reference")]):
    """Replay game records through the reference rules; exit 0 if all valid, 1 otherwise."""
    # lazy: see record
    from kc_sim.records.check import check_file

    n, problems = check_file(file)
    for p in problems:
        typer.echo(str(p))
    bad = len({(p.record) for p in problems})
    typer.echo(f"{n} records checked: {n - bad} valid, {bad} invalid")
    raise typer.Exit(1 if problems else 0)


@app.command("agents")
def list_agents():
    """List the registered agents (the built-ins and any installed package's), one line each,
    then the name forms that loaders make (a trained model, OpenSpiel's IS-MCTS); an entry that
    cannot be imported is listed with the reason."""
    # lazy: see record
    from kc_sim.play.registry import (
        broken_agents,
        builtin_agents,
        builtin_labels,
        loader_prefixes,
    )

    specs = builtin_agents()
    for name, label in builtin_labels().items():
        typer.echo(f"{label:28s} {specs[name].description}")
    for name, why in broken_agents().items():
        typer.echo(f"{name:28s} (cannot be loaded) {why}")
    for form, what in loader_prefixes().values():
        typer.echo(f"{form:28s} {what}")


@app.command()
def bench(
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object instead of a table")] = False,
    rounds: Annotated[int, typer.Option(help="rounds for the compiled core")] = 400_000,
    seconds: Annotated[float, typer.Option(help="time given to the reference engine")] = 3.0,
    cold: Annotated[bool, typer.Option(
        help="also time a cold compile, the default tournament command from an empty numba cache, and the 1M-round "
        "command ten times from an empty cache: the first run's play rate vs the tenth's (~1.5 min)")] = False,
    agents: Annotated[bool, typer.Option(
        help="also time every built-in agent in self-play, and planner and sampler at 2 players")] = False,
    tournament: Annotated[bool, typer.Option(
        help="also time the whole 1M-round tournament command, and --jobs 2 vs --jobs 1 (~1 min)")] = False,
    scale: Annotated[bool, typer.Option(
        "--scale", help="also check that nothing grows with the rounds: time and peak memory of a 4-agent "
        "tournament and of leaderboard, plot and report on it at each --scale-rounds size (~2 min)")] = False,
    scale_rounds: Annotated[str, typer.Option(
        "--scale-rounds", help="comma-separated tournament sizes for --scale")] = "1500000,9000000",
    env: Annotated[bool, typer.Option(
        "--env", help="also time the batched environment against the PettingZoo one (needs kc-sim[rl], ~10 s)")] = False,
):
    """Measure rounds per second: compiled core vs the reference (random play, classic, 4 players, one core)."""
    # lazy: see record
    from kc_sim.bench import targets as bench_targets
    from kc_sim.bench.core import run_bench

    try:
        sizes = tuple(int(x) for x in scale_rounds.split(","))
    except ValueError:
        raise UserError(f"bad --scale-rounds {scale_rounds!r}: expected sizes like 1500000,9000000") from None
    if scale and (len(sizes) < 2 or min(sizes) < 1):
        raise UserError(f"bad --scale-rounds {scale_rounds!r}: expected at least two positive sizes")
    figures = run_bench(rounds=rounds, seconds=seconds, cold=cold, agents=agents, tournament=tournament,
                        scale=sizes if scale else None, env=env)
    rows = bench_targets.check(figures)
    if as_json:
        typer.echo(json.dumps({**figures, "targets": rows}))
    else:
        typer.echo(bench_targets.format_figures(figures))
        if rows:
            typer.echo("")
            typer.echo(bench_targets.format_rows(rows))


def _register_commands():
    """Commands that live in their own modules."""
    app.command("tournament")(cli_tournament.tournament)
    app.command("bench-agent")(cli_tournament.bench_agent)
    app.command("warm")(cli_tournament.warm)
    app.command("play")(cli_play.play)
    app.command("replay")(cli_play.replay)
    app.command("render")(cli_play.render)
    app.command("plot")(cli_analysis.plot)
    app.command("report")(cli_analysis.report)
    app.command("run")(cli_analysis.run)
    app.command("leaderboard")(cli_leaderboard.leaderboard)
    app.command("power")(cli_power.power)
    app.command("train")(cli_learn.train)


_register_commands()


class _Interrupted(Exception):
    """Ctrl-C inside a command, carried past typer (which turns a KeyboardInterrupt into a
    silent exit 130) to :func:`main`, which prints it on one line."""


def _interruptible(fn):
    @functools.wraps(fn)
    def command(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt as e:      # a tournament's Interrupted says what was kept
            raise _Interrupted(str(e) or "interrupted; finished work is kept") from None
    return command


for _info in app.registered_commands:
    _info.callback = _interruptible(_info.callback)


def main(argv: Optional[list[str]] = None) -> int:
    """Run the command line and return its exit code; bad input gives one line on stderr and 2."""
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="kc-sim")
    except UserError as e:
        typer.echo(f"kc-sim: error: {e}", err=True)
        return 2
    except _Interrupted as e:
        typer.echo(f"kc-sim: {e}", err=True)
        return 130
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("kc-sim: interrupted", err=True)
        return 130
    except click_exceptions.NoArgsIsHelpError as e:
        typer.echo(e.format_message())
        return 0
    except click_exceptions.ClickException as e:
        typer.echo(f"kc-sim: error: {e.format_message()} (see kc-sim --help)", err=True)
        return 2
    return rv if isinstance(rv, int) else 0


def run() -> None:
    """Console-script entry point. Before exiting, the objects left are frozen out of the
    garbage collector: the interpreter's teardown then skips collecting numba's and LLVM's
    large object graphs, about 0.4 s of every command that played."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
