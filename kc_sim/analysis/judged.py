"""Decision analysis over a run: the judge (:mod:`kc_sim.judge`) on a random sample of the game
records a tournament saved (``records.jsonl``, written by ``kc-sim tournament --records K``),
summed up per agent with intervals clustered by round (:mod:`kc_sim.judge.by_agent`).

``kc-sim analyse RUN_DIR --sample N`` prints it; ``kc-sim report RUN_DIR --analyse N`` puts
it in the report (:func:`judged_html`). A run folder keeps one row per round, not its moves:
only the saved records can be judged, so a run without them is refused with the option that
saves them.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from kc_sim.analysis.html import esc, table_html
from kc_sim.errors import UserError
from kc_sim.runs import layout

__all__ = ["analyse_run", "judged_html", "judging_pool", "run_records", "MAX_JOBS"]

#: the most judging processes asked for by --jobs
MAX_JOBS = 256


@contextmanager
def judging_pool(jobs: int, option: str = "--jobs"):
    """The judge's options that spread its rounds over ``jobs`` worker processes (``{}`` for
    1: the calling process judges), the workers stopped on leaving. A round's figures do not
    depend on where it was judged (:mod:`kc_sim.judge.analyse`)."""
    if not 1 <= jobs <= MAX_JOBS:
        raise UserError(f"bad {option} {jobs}: expected 1 to {MAX_JOBS} processes")
    if jobs == 1:
        yield {}
        return
    from kc_sim.processes.compat import BrokenProcessPool
    from kc_sim.processes.pool import WorkerPool

    def map_rounds(fn, arg_tuples):
        try:
            yield from pool.map_ordered(fn, arg_tuples)
        except BrokenProcessPool as e:
            raise UserError(f"a worker process died ({e}); nothing was written: run the command again, or with "
                            f"{option} 1") from None

    with WorkerPool() as pool:
        pool.start(jobs)
        yield {"map_rounds": map_rounds}


def run_records(run_dir) -> Path:
    """The saved game records of the run folder ``run_dir``, or a one-line UserError saying
    which tournament option saves them."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: not a folder (expected a run folder written by kc-sim tournament)")
    path = run_dir / layout.RECORDS_FILE
    if not path.is_file():
        what = "run folder" if (run_dir / layout.MANIFEST_FILE).is_file() else "folder (no manifest.json either)"
        raise UserError(f"{run_dir}: this {what} has no saved game records ({layout.RECORDS_FILE}): run the "
                        "tournament with --records K to save K rounds' records")
    return path


def analyse_run(run_dir, sample: int | None, *, seed: int = 0, **options) -> dict:
    """The sampled analysis (:func:`kc_sim.judge.sample.analyse_sample`) of ``sample`` rounds
    drawn from the run's saved records (None: all of them); ``options`` as the judge's."""
    # lazy: the judge loads numba and the compiled core
    from kc_sim.judge.sample import analyse_sample

    path = run_records(run_dir)
    return analyse_sample(path, sample, seed=seed, source=str(run_dir), **options)


def judged_html(report: dict | None, why_not: str | None = None) -> list[str]:
    """The report's Decision analysis section: the per-agent table of a sampled analysis, or
    the reason there is none (``why_not``)."""
    from kc_sim.judge.text import AGENT_HEADER, agent_rows, sample_header  # lazy: rich

    parts = ["<h2>Decision analysis</h2>"]
    if report is None:
        return parts + [f'<p class="note">{esc(why_not or "not asked for")}</p>']
    parts += [f'<p class="note">{esc(sample_header(report))} Error rate: the mean loss per judged (non-forced) '
              "decision; accuracy: the share of judged decisions not told apart from the best; labels B/M/I: "
              "blunders, mistakes and inaccuracies (losses of 12, 6 and 3 points or more); luck: the "
              "change of the agent's win chance caused by the cards (deal and draws) per round. Unlike win rates, "
              "these do not depend on who the opponents were (docs/analysis.md).</p>",
              table_html(AGENT_HEADER, agent_rows(report))]
    return parts
