"""Running an experiment: check every run, play them (resuming), write ``findings.md``.

Every run is checked against its folder before any is played (a typo in the last run
must not cost the first ones), then played through
:func:`kc_sim.tournament.run_tournament`, so an interrupted experiment resumes where it
stopped. The findings are written last (:mod:`kc_sim.analysis.experiments.findings`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from kc_sim.analysis.experiments.findings import FINDINGS_FILE, findings_markdown
from kc_sim.analysis.experiments.schema import (
    Experiment,
    RunSpec,
    default_out,
    load_experiment,
)
from kc_sim.analysis.plots import plot_all
from kc_sim.errors import UserError
from kc_sim.tournament import check_run_folder, make_plan, run_tournament


@dataclass
class ExperimentResult:
    experiment: Experiment
    out: Path
    findings: Path
    markdown: str
    run_dirs: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0


def _plan(spec: RunSpec, out: Path):
    return make_plan(list(spec.agents), players=spec.players, rounds=spec.rounds, matches=spec.matches,
                     rules=spec.rules, seed=spec.seed, out=out, chunk_size=spec.chunk_size)


def run_experiment(exp, *, scale: float = 1.0, jobs=None, out=None, plots: bool = True, quiet: bool = True,
                   command: str | None = None, log=None) -> ExperimentResult:
    """Play every run of an experiment (resuming what is done), write ``findings.md``
    (and each run's figures with ``plots``); returns where everything went."""
    if not isinstance(exp, Experiment):
        exp = load_experiment(exp)
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise UserError(f"bad --scale {scale}: expected a positive number such as 0.01")
    log = log or (lambda msg: None)
    out = Path(out) if out is not None else default_out(exp, scale)
    if out.exists() and not out.is_dir():
        raise UserError(f"cannot write the experiment into {out}: it is a file")
    specs = [r.scaled(scale) for r in exp.runs]
    # check every run before playing any: a typo in the last run must not cost the first ones
    for spec in specs:
        try:
            check_run_folder(_plan(spec, out / spec.name))
        except UserError as e:
            raise UserError(f"{exp.source or exp.name}: run {spec.name!r}: {e}") from None
    if command is None:
        src = exp.source if exp.source is not None else f"experiments/{exp.name}.toml"
        command = f"kc-sim run {src}" + (f" --scale {scale:g}" if scale != 1 else "")
    t0 = time.perf_counter()
    run_dirs = {}
    for i, spec in enumerate(specs):
        folder = out / spec.name
        log(f"[{i + 1}/{len(specs)}] {spec.name}: {', '.join(spec.agents)}, "
            f"{spec.players or min(len(spec.agents), 4)} players, {spec.rules}, {spec.count:,} {spec.mode}")
        try:
            res = run_tournament(list(spec.agents), players=spec.players, rounds=spec.rounds, matches=spec.matches,
                                 rules=spec.rules, seed=spec.seed, jobs=jobs, out=folder, quiet=quiet,
                                 chunk_size=spec.chunk_size, command=f"{command}  # run {spec.name}")
        except UserError as e:
            raise UserError(f"{exp.source or exp.name}: run {spec.name!r}: {e}") from None
        log(f"      {res.units:,} {spec.mode} in {res.seconds:.1f} s -> {folder}")
        run_dirs[spec.name] = folder
        if plots:
            plot_all(folder)
    markdown = findings_markdown(exp, specs, run_dirs, out, scale=scale, command=command)
    out.mkdir(parents=True, exist_ok=True)
    findings = out / FINDINGS_FILE
    tmp = findings.with_name(f".{findings.name}.tmp")
    tmp.write_text(markdown, encoding="utf-8")
    tmp.replace(findings)
    return ExperimentResult(exp, out, findings, markdown, run_dirs, time.perf_counter() - t0)
