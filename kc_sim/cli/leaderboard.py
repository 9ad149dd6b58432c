"""``kc-sim leaderboard RUN_DIR [RUN_DIR ...]``: a rating for every agent across the rounds
of one or more run folders (see :mod:`kc_sim.analysis.leaderboard`), with the pairwise
meta-game behind it (shares with intervals, intransitive cycles, Bradley-Terry's fit, Nash
averaging: :mod:`kc_sim.stats.metagame`), printed and saved as ``leaderboard.parquet``,
``leaderboard_pairs.parquet``, ``leaderboard_cycles.parquet`` and ``leaderboard.png``; and
the hook that prints it at the end of a tournament with three or more agents."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kc_sim.errors import UserError

#: --bootstrap's default: kc_sim.stats.ratings.DEFAULT_BOOTSTRAP, which imports pandas (too heavy
#: for kc-sim --help, which shows this value); tests/cli/test_cli.py holds the two equal
BOOTSTRAP = 200


def default_out(run_dirs) -> Path:
    """A new folder beside the first run folder: ``leaderboard_<run>+<run>...`` (shortened
    with a checksum past 60 characters), never a run folder itself."""
    import re
    import zlib

    tag = "+".join(Path(d).resolve().name for d in run_dirs)
    tag = re.sub(r"[^A-Za-z0-9_.+#-]+", "_", tag)
    if len(tag) > 60:
        tag = f"{tag[:40]}-{zlib.crc32(tag.encode()):08x}"
    return Path(run_dirs[0]).resolve().parent / f"leaderboard_{tag}"


def check_out(out: Path, run_dirs) -> None:
    """Refuse to write into a run folder (its own files would be overwritten by a combined
    leaderboard), except the run's own folder when it is the only run rated."""
    from kc_sim.runs.layout import MANIFEST_FILE

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file: give a folder for the leaderboard")
    if (out / MANIFEST_FILE).exists():
        own = len(run_dirs) == 1 and out.resolve() == Path(run_dirs[0]).resolve()
        if not own:
            raise UserError(f"--out {out} is a run folder: the leaderboard of several runs goes into a folder "
                            "of its own (leave out --out for a new one)")


def leaderboard(
    run_dirs: Annotated[list[Path], typer.Argument(help="run folders written by kc-sim tournament (or bench-agent "
                                                   "--out); agents are matched by name across them, and runs "
                                                   "made with the same --seed share their deals")],
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="folder for leaderboard.parquet, leaderboard_pairs.parquet, "
        "leaderboard_cycles.parquet and leaderboard.png (default: a new folder leaderboard_<runs> beside the "
        "first run folder; never another run's folder)")] = None,
    bootstrap: Annotated[int, typer.Option(
        "--bootstrap", help="bootstrap resamples over deals for the 95% intervals (0: ratings with the sandwich "
        "interval clustered by deal, pairwise shares clustered by deal, no Nash intervals)")] = BOOTSTRAP,
    seed: Annotated[int, typer.Option("--seed", help="seed of the bootstrap")] = 0,
):
    """Fit a Bradley-Terry rating for every agent (who has the lower penalty in each pair of
    seats of every round), with 95% intervals over deals (runs with the same --seed share
    their deals and are resampled together); then the pairwise shares, the intransitive
    cycles, whether Bradley-Terry fits them, and the Nash averaging rating. Print it all and
    save it (parquet files and a figure) in a folder of its own."""
    if not run_dirs:
        raise UserError("give at least one run folder: kc-sim leaderboard RUN_DIR [RUN_DIR ...]")
    if bootstrap < 0:                   # before any import: a typo costs nothing
        raise UserError(f"bad --bootstrap {bootstrap}: expected 0 or more")
    # lazy: numba, pandas
    from kc_sim.analysis.leaderboard import format_leaderboard, save_leaderboard
    from kc_sim.analysis.leaderboard import leaderboard as fit

    folder = out if out is not None else default_out(run_dirs)
    check_out(folder, run_dirs)
    df = fit(run_dirs, bootstrap=bootstrap, seed=seed)
    files = save_leaderboard(df, folder)
    typer.echo(format_leaderboard(df))
    shared = df.attrs.get("families", len(run_dirs)) < len(run_dirs)
    deals, units = df.attrs.get("deals", df.attrs["units"]), df.attrs["units"]
    typer.echo(f"{len(df)} agents, {df.attrs['rounds']:,} rounds, {deals:,} deals"
               + (f" (resampled in {units:,} batches of consecutive deals)" if units != deals else "")
               + (" (runs with the same --seed share their deals)" if shared else ""))
    for what, path in files.items():
        typer.echo(f"  {what:11s} {path}")


def tournament_hook(res, quiet: bool = False) -> None:
    """After a tournament with three or more agents (the one place that says so): fit the
    leaderboard of its run folder, save it there and print it (unless quiet). With fewer
    agents it does nothing and loads nothing."""
    if len(res.plan.labels) < 3:
        return
    # lazy: numba, pandas and matplotlib, only with 3+ agents
    from kc_sim.analysis.leaderboard import format_leaderboard, save_leaderboard
    from kc_sim.analysis.leaderboard import leaderboard as fit

    try:
        df = fit([res.out])
        files = save_leaderboard(df, res.out)
    except UserError as e:          # the run itself is complete: say why there is no leaderboard
        typer.echo(f"no leaderboard: {e}")
        return
    res.files.update({"ratings": files["leaderboard"], "pairs": files.get("pairs"), "cycles": files.get("cycles"),
                      "figure": files["figure"]})
    if not quiet:
        typer.echo("")
        typer.echo(format_leaderboard(df))
        typer.echo("")
