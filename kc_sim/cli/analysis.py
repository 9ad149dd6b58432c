"""``kc-sim plot``, ``kc-sim report`` and ``kc-sim run`` (registered by ``kc_sim.cli``).

All three raise :class:`~kc_sim.errors.UserError` for bad input (a missing run folder,
a folder that is not a run, a missing or malformed experiment file, a bad scale); the
command line prints its message on one line and exits 2.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Optional

import typer

from kc_sim.errors import UserError

__all__ = ["plot", "print_markdown", "report", "run"]

RunDirArg = Annotated[Path, typer.Argument(help="a run folder written by kc-sim tournament (or kc-sim run)")]


def plot(
    run_dir: RunDirArg,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="folder for the PNG files (default RUN_DIR/figures)")] = None,
):
    """Draw the figures of a run as PNG files: head-to-head matrix, penalty per agent,
    win rate by seat, round length, end reasons (each with a caption line)."""
    # lazy: numpy, pyarrow, matplotlib; kc-sim --help must not
    from kc_sim.analysis.plots import plot_all

    if out is not None and out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file: give a folder for the figures")
    paths = plot_all(run_dir, out)
    for name, path in paths.items():
        typer.echo(f"  {name:13s} {path}")
    typer.echo(f"{len(paths)} figures written to {next(iter(paths.values())).parent}")


def report(
    run_dir: RunDirArg,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="HTML file to write (default RUN_DIR/report.html)")] = None,
    replays: Annotated[int, typer.Option(
        "--replays", help="sample deals per line-up shown as step-through replays (0: none)")] = 1,
    run_agents: Annotated[bool, typer.Option(
        "--run-agents", help="replay agents the run names by a file or module (code: only for a run you trust; "
        "without it, their sample rounds are left out)")] = False,
    analyse: Annotated[int, typer.Option(
        "--analyse", help="judge N rounds drawn at random from the run's saved records (tournament --records K) "
        "and add each agent's error rate, accuracy and luck (seconds per round; 0: no decision analysis)")] = 0,
    analyse_seed: Annotated[int, typer.Option(
        "--analyse-seed", help="seed of --analyse's draw and of its rollouts")] = 0,
    analyse_jobs: Annotated[int, typer.Option(
        "--analyse-jobs", help="processes that judge --analyse's rounds (the same figures whatever the number)")] = 1,
):
    """Write one self-contained HTML report of a run: configuration, tables with 95%
    intervals, every figure embedded (also written to RUN_DIR/figures), and replays of
    sample rounds; with --analyse N, the agents' error rates over N of its saved rounds
    (also printed)."""
    from kc_sim.analysis.report import write_report  # lazy: as in plot

    if replays < 0:
        raise UserError(f"bad --replays {replays}: expected 0 or more sample deals per line-up")
    if analyse < 0:
        raise UserError(f"bad --analyse {analyse}: expected 0 (none) or more rounds to judge")
    judged = None
    if analyse > 0:
        from kc_sim.analysis.judged import analyse_run, judging_pool
        from kc_sim.judge.text import print_report

        with judging_pool(analyse_jobs, "--analyse-jobs") as spread:
            judged = analyse_run(run_dir, analyse, seed=analyse_seed, **spread)
        print_report(judged)
    path = write_report(run_dir, out, replays=replays, run_agents=run_agents, judged=judged)
    typer.echo(f"report written to {path}")


def run(
    experiment_file: Annotated[Path, typer.Argument(help="an experiment file, e.g. experiments/seat_advantage.toml")],
    scale: Annotated[float, typer.Option(
        "--scale", help="multiply every run's rounds, matches or max_rounds, and its repeats, by this, e.g. "
        "0.01 for a quick look; "
        "the default output folder then gets a _scale<s> suffix")] = 1.0,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="worker processes (default: every core)")] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="output folder: one run folder per run plus findings.md "
        "(default results/experiments/<name>)")] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="draw each run's figures")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress, only where the findings went")] = False,
):
    """Run an experiment file: play its tournaments (resuming what is done) and write
    findings.md with the numbers and their 95% intervals; prints the findings (rendered
    for the terminal; the file is markdown)."""
    # lazy: as in plot
    from kc_sim.analysis.experiments import load_experiment, run_experiment

    exp = load_experiment(experiment_file)
    words = ["kc-sim", "run", str(experiment_file)]
    if scale != 1:
        words += ["--scale", f"{scale:g}"]
    if out is not None:
        words += ["--out", str(out)]
    log = (lambda msg: None) if quiet else (lambda msg: typer.echo(msg, err=True))
    res = run_experiment(exp, scale=scale, jobs=jobs, out=out, plots=plots, quiet=quiet,
                         command=shlex.join(words), log=log)
    if not quiet:
        print_markdown(res.markdown)
    typer.echo(f"{exp.name}: {len(res.run_dirs)} runs in {res.seconds:.1f} s; findings in {res.findings}")


def print_markdown(text: str) -> None:
    """Markdown rendered for a terminal (rich: headings, bold, drawn tables whose long words
    fold onto the next line rather than being cut, paragraphs wrapped at word boundaries to
    the terminal's width); printed as it is (the markdown of findings.md) when the output is
    not a terminal, e.g. redirected to a file."""
    import sys

    if not sys.stdout.isatty():
        typer.echo(text)
        return
    from rich.console import Console  # lazy: only kc-sim run prints markdown
    from rich.markdown import Markdown, TableElement

    class FoldingTable(TableElement):
        def __rich_console__(self, console, options):
            rows = ([self.header.row] if self.header is not None and self.header.row is not None else []) + (
                list(self.body.rows) if self.body is not None else [])
            for row in rows:
                for cell in row.cells:
                    cell.content.overflow = "fold"
            yield from super().__rich_console__(console, options)

    class Rendered(Markdown):
        elements = {**Markdown.elements, "table_open": FoldingTable}

    import shutil

    # the terminal's own size: rich assumes 80 x 25 where TERM=dumb unless given both
    size = shutil.get_terminal_size()
    Console(highlight=False, width=size.columns, height=size.lines).print(Rendered(text))
