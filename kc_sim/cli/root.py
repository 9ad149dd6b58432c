"""The ``kc-sim`` command. Bad input ends with one line on stderr and exit code 2: :func:`main`
is the single edge where every error of every command becomes that line."""

from __future__ import annotations

import errno
import functools
import gc
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

# typer (>= 0.16, as declared) vendors click and does not re-export these exceptions
from typer._click import exceptions as click_exceptions

import kc_sim.cli.analysis as cli_analysis
import kc_sim.cli.judge as cli_judge
import kc_sim.cli.leaderboard as cli_leaderboard
import kc_sim.cli.learn as cli_learn
import kc_sim.cli.play as cli_play
import kc_sim.cli.power as cli_power
import kc_sim.cli.serve as cli_serve
import kc_sim.cli.tournament as cli_tournament
from kc_sim.cli.options import RulesOpt
from kc_sim.errors import UserError, os_error_text
from kc_sim.game.rules import parse_rules
from kc_sim.play.agents.names import parse_agent_list
from kc_sim.records.untrusted import display_text
from kc_sim.support.atomic import is_temporary_of

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from kc_sim import __version__

        typer.echo(f"kc-sim {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[Optional[bool], typer.Option("--version", callback=_print_version, is_eager=True,
                                                    help="print kc-sim's version and exit")] = None,
):
    """kc-sim: a fast simulation harness for Kings in the Corner."""


def _agent_names(agents: str, players: int) -> list[str]:
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
    from kc_sim.play.recording.command import record_rounds

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
    from kc_sim.play.agents.registry import (
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
        help="also time every built-in agent in self-play, and the planner's, the sampler's and a Python agent's "
        "cost against the core's, in turns")] = False,
    tournament: Annotated[bool, typer.Option(
        help="also time the 1M-round tournament's play phase against its loop in one process, and the whole "
        "command with --jobs 1 and 2 (~2 min)")] = False,
    scale: Annotated[bool, typer.Option(
        "--scale", help="also check that nothing grows with the rounds: time and peak memory of a 4-agent "
        "tournament and of leaderboard, plot and report on it at each --scale-rounds size (~2 min)")] = False,
    scale_rounds: Annotated[str, typer.Option(
        "--scale-rounds", help="comma-separated tournament sizes for --scale")] = "1500000,9000000",
    env: Annotated[bool, typer.Option(
        "--env", help="also time the batched environment against the PettingZoo one (needs kc-sim[rl], ~10 s)")] = False,
    judge: Annotated[bool, typer.Option(
        "--judge", help="also time kc-sim analyse: its rollouts against the core (the same policy, in turns) and "
        "the seconds to judge a 2-player round to +-1 point at every decision (~1 min)")] = False,
):
    """Measure rounds per second: compiled core vs the reference (random play, classic, 4 players, one core);
    the targets judge ratios measured side by side only."""
    try:
        sizes = tuple(int(x) for x in scale_rounds.split(","))
    except ValueError:
        raise UserError(f"bad --scale-rounds {scale_rounds!r}: expected sizes like 1500000,9000000") from None
    if scale and (len(sizes) < 2 or min(sizes) < 1):
        raise UserError(f"bad --scale-rounds {scale_rounds!r}: expected at least two positive sizes")
    # lazy: see record (after the options are checked: a typo costs no import)
    from kc_sim.bench import steadiness
    from kc_sim.bench import targets as bench_targets
    from kc_sim.bench.core import run_bench

    figures = run_bench(rounds=rounds, seconds=seconds, cold=cold, agents=agents, tournament=tournament,
                        scale=sizes if scale else None, env=env, judge=judge)
    rows = bench_targets.check(figures)
    if as_json:
        typer.echo(json.dumps({**figures, "targets": rows}))
    else:
        typer.echo(bench_targets.format_figures(figures))
        if rows:
            typer.echo("")
            typer.echo(bench_targets.format_rows(rows))
        unsteady = steadiness.note(figures)
        if unsteady:
            typer.echo(unsteady)


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
    app.command("analyse")(cli_judge.analyse)
    app.command("leaderboard")(cli_leaderboard.leaderboard)
    app.command("power")(cli_power.power)
    app.command("train")(cli_learn.train)
    app.command("serve")(cli_serve.serve)
    app.command("bench-serve")(cli_serve.bench_serve)


_register_commands()


class _Interrupted(Exception):
    """Ctrl-C inside a command, carried past typer (which turns a KeyboardInterrupt into a
    silent exit 130) to :func:`main`, which prints it on one line."""


#: the options that name a command's output (its file or folder)
OUTPUT_OPTIONS = ("out", "html")
#: write errors that an open file reports without its name
_UNNAMED_WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM)


def check_output(out) -> None:
    """Refuse, before any work, an output path that cannot be written: one whose nearest
    existing part is a file (a path under a file), a folder this user cannot write or on a
    read-only file system, or a device with no space left. Raises the OSError writing would
    raise, named by ``out``. A disk that fills during the command is still reported by the
    write that fails."""
    path = Path(out)
    here = path
    while not here.exists() and here != here.parent:
        here = here.parent
    if here != path and not here.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(out))
    if not os.access(here, os.W_OK):        # the folder to write in, or the existing file to replace
        st = _statvfs(here)
        code = errno.EROFS if st is not None and st.f_flag & os.ST_RDONLY else errno.EACCES
        raise OSError(code, os.strerror(code), str(out))
    st = _statvfs(here if here.is_dir() else here.parent)
    if st is not None and st.f_blocks > 0 and (st.f_bfree if os.geteuid() == 0 else st.f_bavail) == 0:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out))


def _statvfs(path):
    """``os.statvfs(path)``, or None where the system has none or it fails."""
    try:
        return os.statvfs(path)
    except (AttributeError, OSError):
        return None


def _guarded(fn):
    """A command's callback: its output path checked first (:func:`check_output`), Ctrl-C
    carried to :func:`main`, and a write error named by the command's output path when the
    error names no file (a full disk is found by a write to an open file, which does not
    know its name) or only the output's hidden temporary file."""
    @functools.wraps(fn)
    def command(*args, **kwargs):
        try:
            for k in OUTPUT_OPTIONS:
                if kwargs.get(k) is not None:
                    check_output(kwargs[k])
            return fn(*args, **kwargs)
        except KeyboardInterrupt as e:      # a tournament's Interrupted says what was kept
            raise _Interrupted(str(e) or "interrupted; finished work is kept") from None
        except OSError as e:
            out = next((kwargs[k] for k in OUTPUT_OPTIONS if kwargs.get(k) is not None), None)
            if out is not None and (e.filename is None and e.errno in _UNNAMED_WRITE_ERRORS
                                    or is_temporary_of(e.filename, out)):
                raise OSError(e.errno, e.strerror or str(e), str(out)) from None
            raise
    return command


for _info in app.registered_commands:
    _info.callback = _guarded(_info.callback)


def one_line(text: str, limit: int = 2000) -> str:
    """``text`` as one printable line of at most ``limit`` characters: whitespace runs
    (newlines included) become one space, other control characters ``?``."""
    flat = " ".join(str(text)[:limit * 4].split())
    return display_text(flat, limit)


def _error_line(e: BaseException) -> tuple[str, int]:
    """The one line and exit code for an exception that reached the command line's edge."""
    if isinstance(e, UserError):
        return f"error: {e}", 2
    if isinstance(e, OSError):
        return f"error: {os_error_text(e)}", 2
    if isinstance(e, RecursionError):
        return ("error: the input is nested too deeply to process (RecursionError): expected a file as kc-sim "
                "writes it"), 2
    if isinstance(e, MemoryError):
        return ("error: out of memory: the input or the run is too large for this machine; give a smaller input "
                "(a smaller file, fewer rounds or jobs)"), 2
    if isinstance(e, json.JSONDecodeError):
        return f"error: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}): expected JSON as kc-sim writes it", 2
    detail = " ".join(str(e).split()) or "(no message)"
    where = _origin(e)
    if where:
        return (f"error: {type(e).__name__}: {detail} (raised at {where}: code outside kc-sim, such as an "
                f"agent's, to fix there; {TRACEBACK_VAR}=1 shows the traceback)"), 2
    return (f"error: {type(e).__name__}: {detail} (unexpected: if an agent raised it, its code needs fixing, "
            f"otherwise please report it with what {TRACEBACK_VAR}=1 shows)"), 2


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _origin(e: BaseException) -> str | None:
    """``file:line in function`` of the deepest frame of ``e``'s traceback that is neither
    kc-sim's nor Python's or an installed library's (an agent file, say), or None."""
    installed = tuple({os.path.abspath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    found, tb = None, e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        path = os.path.abspath(code.co_filename)
        if not path.startswith((_PACKAGE + os.sep, *installed)) and not code.co_filename.startswith("<"):
            found = f"{code.co_filename}:{tb.tb_lineno} in {code.co_name}"
        tb = tb.tb_next
    return found


#: set to 1 to get the traceback of an unexpected error instead of its one line
TRACEBACK_VAR = "KC_SIM_TRACEBACK"


def main(argv: Optional[list[str]] = None) -> int:
    """Run the command line and return its exit code. This is the one edge where errors meet
    the user: bad input (:class:`UserError`), files that cannot be read or written (OSError:
    permission, read-only, full disk, a path under a file), input too deep or too large
    (RecursionError, MemoryError), malformed JSON, and any other exception (an agent's
    constructor that raised) each become one line on stderr and exit code 2."""
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="kc-sim")
    except _Interrupted as e:
        typer.echo(f"kc-sim: {one_line(str(e))}", err=True)
        return 130
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("kc-sim: interrupted", err=True)
        return 130
    except click_exceptions.NoArgsIsHelpError as e:
        typer.echo(e.format_message())
        return 0
    except click_exceptions.ClickException as e:
        typer.echo(f"kc-sim: error: {one_line(e.format_message())} (see kc-sim --help)", err=True)
        return 2
    except BrokenPipeError:            # the reader of stdout went away (kc-sim ... | head)
        _quiet_stdout()
        return 141
    except Exception as e:
        if os.environ.get(TRACEBACK_VAR) == "1" and not isinstance(e, UserError):
            raise
        line, code = _error_line(e)
        _say(f"kc-sim: {one_line(line)}")
        return code
    return rv if isinstance(rv, int) else 0


def _say(line: str) -> None:
    """One line on stderr, even when stderr itself fails (a closed or full stream)."""
    try:
        typer.echo(line, err=True)
    except (OSError, ValueError):
        pass


def _quiet_stdout() -> None:
    """Send what is left of stdout nowhere, so the interpreter's last flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def run() -> None:
    """Console-script entry point. Before exiting, the objects left are frozen out of the
    garbage collector: the interpreter's teardown then skips collecting numba's and LLVM's
    large object graphs, about 0.4 s of every command that played."""
    code = main()
    try:
        sys.stdout.flush()             # a full disk or closed pipe under stdout: one line, not a traceback at exit
    except BrokenPipeError:
        _quiet_stdout()
        code = code or 141
    except OSError as e:
        _quiet_stdout()
        _say(f"kc-sim: error: cannot write the output: {os_error_text(e)}")
        code = 2
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
