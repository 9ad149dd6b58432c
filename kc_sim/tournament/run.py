"""Running a tournament: plan, play the chunks that are not done, store them, summarise.

:func:`run_tournament` is the whole run: check the input and the run folder
(:mod:`~kc_sim.tournament.plan`, :mod:`~kc_sim.tournament.run_folder`), compile once here,
start the workers (:mod:`~kc_sim.tournament.backends`), and write every chunk's parquet
parts as its result arrives, then mark it done in ``manifest.json`` (:func:`_store`).
Rerunning the same configuration into the same folder plays only the chunks not yet
done. At the end (:func:`finish`) the chunks' tallies are added up into the summary
and game records are written (:mod:`~kc_sim.tournament.game_records`). Every seed
derives from the run seed and the group number, so the output is the same for every
``jobs`` and backend. With ``until`` the run stops once its pairs are decided
(:mod:`~kc_sim.tournament.stopping`), after the same block whatever the workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kc_sim.errors import UserError
from kc_sim.stats import Tally
from kc_sim.tournament import results
from kc_sim.tournament.backends import WorkerLost, executor, prestart_loky
from kc_sim.tournament.game_records import write_tournament_records
from kc_sim.tournament.plan import FAULTS_DIR, FORMAT, Plan, make_plan
from kc_sim.tournament.run_folder import (
    check_run_folder,
    open_run_folder,
    save_manifest,
)
from kc_sim.tournament.schedule import group_seeds
from kc_sim.tournament.schema import matches_table, rounds_table
from kc_sim.tournament.stopping import Stopper, parse_until
from kc_sim.tournament.worker import ChunkTask, warm

__all__ = ["BACKENDS", "FORMAT", "Interrupted", "RunResult", "WorkerLost", "check_run_folder", "finish",
           "make_plan", "resolve_jobs", "run_tournament"]

BACKENDS = ("loky", "dask", "sequential")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run, saying what was kept (the command line prints it, exit 130)."""


@dataclass
class RunResult:
    out: Path
    plan: Plan
    summary: object                   # pandas DataFrame
    units: int                        # rounds (or matches) in the run
    rounds: int                       # rounds in the run
    played_chunks: int                # chunks played by this call
    played_units: int                 # rounds (or matches) played by this call
    resumed_chunks: int               # chunks already done before this call
    seconds: float
    files: dict                       # what was written: name -> path
    tally: Tally                      # of the whole run
    start_seconds: float              # compiling or loading the compiled code, starting workers
    play_seconds: float               # from the first chunk sent to the last chunk written
    stop: str | None = None           # with --until: why the run stopped
    dropped_units: int = 0            # with --until: played after the stop (in flight), then removed


def resolve_jobs(jobs) -> int:
    if jobs is None or int(jobs) == -1:
        return os.cpu_count() or 1
    if int(jobs) < 1:
        raise UserError(f"bad --jobs {jobs}: expected a positive number (or -1 for every core)")
    return int(jobs)


#: the default --jobs is sized to the work: a worker process costs about a second to start
#: and load the compiled code, so each one must have at least this many rounds to play
#: (compiled agents play about 300,000 rounds/s per core, a Python agent about 15,000)
ROUNDS_PER_WORKER = {True: 300_000, False: 15_000}
ROUNDS_PER_MATCH = 5            # about, for sizing runs of matches


def size_workers(jobs, plan: Plan, pending) -> int:
    """Processes playing the chunks ``pending`` (this one and the workers): ``--jobs`` when
    given (at most one per chunk); by default every core, but no more than the work pays for
    (a 100,000-round run of compiled agents plays in this process alone)."""
    if jobs is not None and int(jobs) != -1:
        return max(1, min(resolve_jobs(jobs), len(pending)))
    rounds = sum(plan.schedule.units_of(c) for c in pending) * (1 if plan.mode == "rounds" else ROUNDS_PER_MATCH)
    per_worker = ROUNDS_PER_WORKER[all(s.compiled for s in plan.specs)]
    return max(1, min(resolve_jobs(jobs), len(pending), -(-rounds // per_worker)))


def _in_cache(name: str) -> Path:
    """A marker file in the compile cache (the folder changes with the sources, so the
    markers do too)."""
    return Path(os.environ.get("NUMBA_CACHE_DIR", ".")) / name


def _warm_marker(warm_args) -> Path:
    """The marker saying these agents, rules and mode were compiled in the cache."""
    return _in_cache(f"warm-{zlib.crc32(repr(warm_args[:3]).encode()):08x}")


@contextmanager
def compiling_loop_aside(mode: str):
    """On a cold cache, compile the generic loop of ``mode`` in a second process while this
    one loads the agents (which compiles their policies): the two take seconds each and a
    second core does one of them for free. Yields the process (None when the loop is cached
    or there is one core); :func:`wait_loop` before playing here; killed if the run fails
    first. It leaves a marker in the cache; if the marker outlives the cached loop, this
    process compiles the loop."""
    marker = _in_cache(f"loop-{mode}")
    aside = None
    if not marker.exists() and (os.cpu_count() or 1) >= 2:
        code = (f"from kc_sim.core.loop import compile_generic; compile_generic({mode!r}); "
                f"open({str(marker)!r}, 'w').close()")
        try:
            aside = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:        # pragma: no cover - no process to spare: this process compiles it
            pass
    try:
        yield aside
    except BaseException:
        if aside is not None and aside.poll() is None:   # nothing will wait for it
            aside.kill()
            aside.wait()
        raise


def wait_loop(aside: subprocess.Popen | None) -> None:
    """Wait for :func:`compiling_loop_aside` (if it failed, this process compiles the loop
    itself when it first plays), meanwhile doing what the run needs later anyway: the
    seed kernel's compile and the import of pyarrow (for writing the parts)."""
    if aside is None:
        return
    if aside.poll() is None:
        group_seeds(0, 0, 1)
        import pyarrow.parquet  # noqa: F401 - lazy: see kc_sim.tournament.results
    aside.wait()


def run_tournament(agents, *, players=None, rounds=None, matches=None, rules="classic", seed=0,
                   jobs=None, backend=None, scheduler=None, out=None, records=0, chunk_size=None,
                   lineups=None, seating="balanced", until=None, precision=None, alpha=None, quiet=False,
                   command=None, on_chunk=None, summary=True, started: float | None = None) -> RunResult:
    """Plan, run (or resume) and summarise a tournament; see docs/tournaments.md.
    ``until="decided"`` stops early once every pair is decided (``precision``, ``alpha``:
    :mod:`kc_sim.tournament.stopping`); ``rounds`` or ``matches`` is then the most it plays.
    ``on_chunk(index)`` is called after each part is written (tests use it to interrupt).
    ``started`` (a ``time.perf_counter()`` reading) is when the clock of ``seconds`` and
    ``start_seconds`` starts; the command line passes the start of its process, so the
    compiling done while importing counts as start-up, not as nothing."""
    t0 = time.perf_counter() if started is None else started
    if backend is None:
        backend = "dask" if scheduler else "loky"
    if backend not in BACKENDS:
        raise UserError(f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    if scheduler and backend != "dask":
        raise UserError("--scheduler needs --backend dask")
    if records < 0:
        raise UserError(f"bad --records {records}: expected 0 or more")
    resolve_jobs(jobs)                         # a bad --jobs is refused before anything else
    stop_rule = parse_until(until, precision, alpha)
    with compiling_loop_aside("rounds" if matches is None else "matches") as aside:
        plan = make_plan(agents, players=players, rounds=rounds, matches=matches, rules=rules, seed=seed,
                         out=out, chunk_size=chunk_size, lineups=lineups, seating=seating, until=stop_rule)
        old = check_run_folder(plan)
        sched = plan.schedule
        chunks = sched.chunks()
        manifest = open_run_folder(plan, old, command)

        def done(i: int) -> bool:
            return manifest["chunks"][i]["state"] == "done"

        stopper = Stopper(plan, stop_rule) if stop_rule is not None else None
        if stopper is not None:
            stopper.advance(done)                  # a resumed run replays the rule over its stored chunks
        skip = set(stopper.beyond()) if stopper is not None and stopper.stopped_at is not None else set()
        pending = [c for c in chunks if not done(c.index) and c.index not in skip]
        resumed = sum(done(c.index) for c in chunks)
        workers = size_workers(jobs, plan, pending)
        faults = str((plan.out / FAULTS_DIR).resolve())
        warm_args = (tuple(plan.load_names[i] for i in sched.lineups[0]), plan.rules.spec(), plan.mode, faults)
        pool = backend == "loky" and workers > 1 and bool(pending)
        marker = _warm_marker(warm_args)
        if all(s.compiled for s in plan.specs):
            wait_loop(aside)   # (Python agents play in the Python loop: the compile goes on for later runs)
        if not (pool and marker.exists()):
            warm(*warm_args)   # compile once here, before any worker starts (workers then only load)
            try:
                marker.touch()
            except OSError:    # an unwritable cache folder: the next run warms here again
                pass
        # with a warm cache the workers load the compiled code themselves while this process goes on
        warming = prestart_loky(workers, warm_args) if pool else []
        tasks = [ChunkTask(c.index, c.lineup, tuple(plan.load_names[i] for i in sched.lineups[c.lineup]),
                           c.start, c.stop, sched.groups, plan.config["seed"], plan.rules.spec(), plan.mode, faults,
                           tuple(sched.lineups[c.lineup]), len(plan.labels), sched.seatings)
                 for c in pending]
        bar = _progress(plan, manifest, quiet)
        t_play = time.perf_counter()
        try:
            if tasks:
                with executor(backend, workers, scheduler, warm_args, warming) as run:
                    t_play = time.perf_counter()
                    for res in run(tasks):
                        _store(plan, manifest, chunks[res["index"]], res)
                        bar.update(sched.units_of(chunks[res["index"]]))
                        if on_chunk is not None:
                            on_chunk(res["index"])
                        if stopper is not None:
                            stopper.chunk_done(res["index"], res)
                            if stopper.advance(done):
                                break
        except KeyboardInterrupt:
            bar.close()
            # a chunk marks itself done only once its parts are in place; Ctrl-C may have come
            # before the manifest was written: write it now, so the count below is what resumes
            save_manifest(manifest, plan.out)
            n_done = sum(done(c.index) for c in chunks)
            raise Interrupted(f"interrupted with {n_done} of {len(chunks)} chunks done in {plan.out}; "
                              "rerun the same command to finish") from None
        finally:
            bar.close()
        t_end = time.perf_counter()
        played = [t.index for t in tasks if done(t.index)]
        dropped = 0
        if stopper is not None:
            _drop_beyond_stop(plan, manifest, stopper)
            dropped = sum(sched.units_of(chunks[i]) for i in played if not done(i))
            played = [i for i in played if done(i)]
        table, files, tally, n_rounds = finish(plan, manifest, records=records, summary=summary)
        units = sum(sched.units_of(c) for c in chunks if done(c.index))
        return RunResult(plan.out, plan, table, units, n_rounds, played_chunks=len(played),
                         played_units=sum(sched.units_of(chunks[i]) for i in played),
                         resumed_chunks=resumed, seconds=time.perf_counter() - t0, files=files, tally=tally,
                         start_seconds=t_play - t0, play_seconds=t_end - t_play if tasks else 0.0,
                         stop=stopper.reason if stopper is not None else None, dropped_units=dropped)


def _drop_beyond_stop(plan: Plan, manifest: dict, stopper: Stopper) -> None:
    """Once the rule has stopped the run: remove the parts of chunks after the stop (in
    flight when it came), mark them ``skipped`` and record the stop in the manifest."""
    if stopper.stopped_at is None:         # interrupted before the rule decided: nothing to drop
        return
    for i in stopper.beyond():
        for folder in (results.ROUNDS_DIR, results.MATCHES_DIR):
            (plan.out / folder / results.part_name(i)).unlink(missing_ok=True)
        entry = manifest["chunks"][i]
        entry["state"] = "skipped"
        entry.pop("rows", None)
        entry.pop("seconds", None)
    manifest["stop"] = stopper.to_manifest()
    save_manifest(manifest, plan.out)


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress(plan: Plan, manifest: dict, quiet: bool):
    if quiet or not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm  # lazy: only with a terminal; workers import this package
    return tqdm(total=plan.schedule.units, initial=manifest["units_done"], unit=f" {plan.unit}s",
                unit_scale=True, file=sys.stderr, smoothing=0.1, dynamic_ncols=True, leave=False)


def _store(plan: Plan, manifest: dict, chunk, res: dict) -> None:
    """Write a chunk's parts, then mark it done in the manifest (in that order)."""
    lineup = plan.schedule.lineups[chunk.lineup]
    if res["matches"] is not None:
        t = matches_table(res["matches"], chunk.index, chunk.lineup, lineup, plan.schedule.seatings, plan.labels)
        results.write_atomic(t, plan.out / results.MATCHES_DIR / results.part_name(chunk.index))
    t = rounds_table(res["rounds"], chunk.index, chunk.lineup, lineup, plan.schedule.seatings, plan.labels)
    results.write_atomic(t, plan.out / results.ROUNDS_DIR / results.part_name(chunk.index), {results.TALLY_KEY: res["tally"]})
    entry = manifest["chunks"][chunk.index]
    entry.update(state="done", rows=int(t.num_rows), seconds=round(res["seconds"], 3))
    save_manifest(manifest, plan.out)


def finish(plan: Plan, manifest: dict, *, records: int = 0, summary: bool = True):
    """After every chunk is done: merge the match parts, add up the chunks' tallies into the
    summary (no rows are read), write the records, close the manifest. Returns
    ``(summary table or None, files written, Tally, rounds)``."""
    out = plan.out
    files = {"rounds": out / results.ROUNDS_DIR, "manifest": out / results.MANIFEST_FILE}
    tally, n_rounds = results.run_tally(out, plan.labels, plan.schedule.players)
    if plan.mode == "matches":
        files["matches"] = results.merge_parts(out / results.MATCHES_DIR, out / results.MATCHES_FILE)
    table = None
    if summary:
        table = tally.summary(plan.labels)
        files["summary"] = results.write_summary(table, out)
    if records:
        files["records"] = write_tournament_records(plan, records)
    manifest["finished"] = True
    manifest["rounds"] = n_rounds
    save_manifest(manifest, out)
    return table, files, tally, n_rounds
