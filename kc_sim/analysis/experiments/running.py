"""Running an experiment: check every run, play them (resuming), write ``findings.md``.

Every run is checked against its folder before any is played (a typo in the last run
must not cost the first ones), then played through
:func:`kc_sim.tournament.run_tournament`, so an interrupted experiment resumes where it
stopped. A run with ``until`` stops early (``precision``, ``alpha``); a run with
``repeat = N`` is played N times, seeds ``seed .. seed + N - 1``, one folder each
(``<run>/r000`` ...; :meth:`~kc_sim.analysis.experiments.schema.RunSpec.folders`), and only
its first repeat gets figures; a repeat already finished (checked to be the same run, its
stop recorded) is not opened again. The findings are written last
(:mod:`kc_sim.analysis.experiments.findings`).
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
from kc_sim.analysis.experiments.stopping import read_stop
from kc_sim.analysis.plots import plot_all
from kc_sim.errors import UserError
from kc_sim.tournament import check_run_folder, make_plan, run_tournament
from kc_sim.runs import read_manifest
from kc_sim.tournament.options import TournamentOptions
from kc_sim.support.atomic import write_text_atomic


@dataclass
class ExperimentResult:
    experiment: Experiment
    out: Path
    findings: Path
    markdown: str
    run_dirs: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0


def _options(spec: RunSpec, out: Path, seed: int, **more) -> TournamentOptions:
    """The tournament options of one run of the experiment (into ``out``, seeded ``seed``)."""
    size = {"max_rounds": spec.rounds} if spec.until is not None else {"rounds": spec.rounds}
    return TournamentOptions.create(list(spec.agents), players=spec.players, matches=spec.matches, rules=spec.rules,
                                    seed=seed, out=out, chunk_size=spec.chunk_size, seating=spec.seating,
                                    **size, **spec.until_args, **more)


def _finished(folder: Path) -> bool:
    """Whether a run folder holds a finished run whose early stop is recorded."""
    try:
        m = read_manifest(folder)
    except (OSError, ValueError):
        return False
    return m.finished and m.stop is not None


def _describe(spec: RunSpec) -> str:
    """The log line of a run: agents, players, rules, size, stopping, repeats."""
    text = (f"{spec.name}: {', '.join(spec.agents)}, {spec.players or min(len(spec.agents), 4)} players, "
            f"{spec.rules}, ")
    if spec.until is None:
        text += f"{spec.count:,} {spec.mode}"
    else:
        text += f"until {spec.until} (at most {spec.count:,} rounds"
        text += f", precision {100 * spec.precision:g} pp" if spec.precision is not None else ""
        text += f", alpha {spec.alpha:g})" if spec.alpha is not None else ")"
    if spec.repeat is not None:
        text += f", {spec.repeat:,} repeats (seeds {spec.seed} .. {spec.seed + spec.repeat - 1})"
    return text


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
        for folder, seed in spec.folders(out / spec.name):
            try:
                check_run_folder(make_plan(_options(spec, folder, seed)))
            except UserError as e:
                where = spec.name if folder.name == spec.name else f"{spec.name}/{folder.name}"
                raise UserError(f"{exp.source or exp.name}: run {where!r}: {e}") from None
    if command is None:
        src = exp.source if exp.source is not None else f"experiments/{exp.name}.toml"
        command = f"kc-sim run {src}" + (f" --scale {scale:g}" if scale != 1 else "")
    t0 = time.perf_counter()
    run_dirs = {}
    for i, spec in enumerate(specs):
        log(f"[{i + 1}/{len(specs)}] {_describe(spec)}")
        t_run, units, stops = time.perf_counter(), 0, {}   # repeats: rounds and stop kinds
        for j, (folder, seed) in enumerate(spec.folders(out / spec.name)):
            where = spec.name if spec.repeat is None else f"{spec.name}/{folder.name}"
            if spec.repeat is not None and _finished(folder):
                # checked above to be this run: its stop is recorded, nothing to play or rewrite
                # (opening a finished run again costs ~0.1 s, minutes over hundreds of repeats)
                stop = read_stop(folder)
            else:
                try:
                    res = run_tournament(_options(spec, folder, seed, jobs=jobs, quiet=quiet,
                                                  command=f"{command}  # run {where}"))
                except UserError as e:
                    raise UserError(f"{exp.source or exp.name}: run {where!r}: {e}") from None
                if spec.repeat is None:
                    log(f"      {res.units:,} {spec.mode} in {res.seconds:.1f} s -> {folder}"
                        + (f"; stopped: {res.stop}" if res.stop else ""))
                stop = read_stop(folder) if spec.repeat is not None else None
            if stop is not None:
                units += stop.rounds
                stops[stop.kind] = stops.get(stop.kind, 0) + 1
            if plots and j == 0:
                plot_all(folder)
        if spec.repeat is not None:
            log(f"      {spec.repeat:,} repeats, {units:,} {spec.mode} in {time.perf_counter() - t_run:.1f} s "
                f"({', '.join(f'{v:,} {k}' for k, v in sorted(stops.items()))}) -> {out / spec.name}")
        run_dirs[spec.name] = out / spec.name
    markdown = findings_markdown(exp, specs, run_dirs, out, scale=scale, command=command)
    out.mkdir(parents=True, exist_ok=True)
    findings = write_text_atomic(out / FINDINGS_FILE, markdown)
    return ExperimentResult(exp, out, findings, markdown, run_dirs, time.perf_counter() - t0)
