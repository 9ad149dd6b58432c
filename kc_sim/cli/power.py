"""``kc-sim power RUN_DIR --diff 0.5pp`` or ``kc-sim power --agents a,b --pilot-rounds N
--diff 0.5pp``: the deals, and the ``--rounds`` to give the same tournament (every line-up
and seating included), needed to detect a difference in the finishes-ahead rate at 80%
power (two-sided alpha 0.05), without and with the deal control variates (see
:mod:`kc_sim.analysis.power` and :mod:`kc_sim.analysis.variance`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kc_sim.cli.options import RulesOpt
from kc_sim.errors import UserError
from kc_sim.play.agents.names import parse_agent_list


def power(
    run_dir: Annotated[Path | None, typer.Argument(
        help="run folder of single rounds written by kc-sim tournament (or give --agents for a pilot run)")] = None,
    diff: Annotated[str, typer.Option(
        "--diff", help="difference in the finishes-ahead rate to detect: 0.5pp, 0.5% or 0.005")] = "0.5pp",
    agents: Annotated[str | None, typer.Option(
        "--agents", help="comma-separated agents of a pilot run made here (instead of RUN_DIR)")] = None,
    players: Annotated[int | None, typer.Option(
        "--players", help="players per table of the pilot run (default: as kc-sim tournament, as many as "
        "agents, at most 4)")] = None,
    rules: RulesOpt = "classic",
    pilot_rounds: Annotated[int, typer.Option("--pilot-rounds", help="rounds of the pilot run")] = 20_000,
    seed: Annotated[int, typer.Option("--seed", help="seed of the pilot run")] = 0,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="keep the pilot run in this folder (default: a temporary one)")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="level of the two-sided test")] = 0.05,
    power_: Annotated[float, typer.Option("--power", help="power to reach")] = 0.8,
):
    """The --rounds to give a tournament of these agents (every line-up and seating included)
    and its deals, to detect --diff between each pair of agents (80% power, two-sided
    alpha=0.05 on the per-deal paired score), with and without the control variates; and
    the command of the run that decides every pair."""
    # lazy: the analysis loads numba and pyarrow
    from kc_sim.analysis.power import (
        format_power,
        parse_diff,
        pilot_power,
        power_from_run,
    )

    d = parse_diff(diff)
    if (run_dir is None) == (agents is None):
        raise UserError("give a run folder or --agents for a pilot run: kc-sim power RUN_DIR --diff 0.5pp, "
                        "or kc-sim power --agents a,b --pilot-rounds N --diff 0.5pp")
    if run_dir is not None:
        if not run_dir.is_dir():
            raise UserError(f"no run folder {run_dir}: expected a folder written by kc-sim tournament")
        from kc_sim.runs import read_manifest

        rows = power_from_run(run_dir, d, alpha=alpha, power=power_)
        manifest = read_manifest(run_dir)
    else:
        names = parse_agent_list(agents)
        if len(names) < 2:
            raise UserError(f"bad --agents {agents!r}: expected at least two agents, comma-separated")
        rows, manifest = pilot_power(names, d, players=players, rules=rules, pilot_rounds=pilot_rounds, seed=seed,
                                     out=out, alpha=alpha, power=power_)
    typer.echo(format_power(rows, manifest))
