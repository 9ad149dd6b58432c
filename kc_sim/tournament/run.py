"""Running a tournament: plan, warm, play, stop, summarise.

:func:`run_tournament` checks the options, makes the plan (:mod:`~kc_sim.tournament.plan`)
and opens the run folder (:class:`~kc_sim.runs.RunFolder`: refusing a folder of another
run, the manifest, resume), then takes the steps of a :class:`Run`:

1. **plan** - the chunks not yet done (rerunning the same configuration into the same
   folder plays only those) and the number of processes that play them;
2. **warm** - start the workers (:class:`~kc_sim.processes.pool.WorkerPool`), which import the
   play layer meanwhile, compile or load the run's compiled loop here (the one for all of
   its agents, :func:`kc_sim.play.driver.runner.loop_name`), then have each worker load it;
3. **play** - every chunk's parts written as its result arrives, then the chunk marked done
   in ``manifest.json``, by a writer thread while the next chunk plays
   (:mod:`~kc_sim.tournament.storing`; the first once pyarrow and pandas, imported in that
   thread meanwhile, are ready); Ctrl-C keeps every chunk played;
4. **stop** - with ``until`` the run stops once its pairs are decided
   (:mod:`~kc_sim.tournament.stopping`), after the same block whatever the workers; what
   was played beyond that block is dropped;
5. **summarise** - the chunks' tallies added up into the summary, game records written
   (:mod:`~kc_sim.tournament.game_records`).

Every seed derives from the run seed and the group number, so the output is the same for
every ``jobs`` and backend.
"""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from kc_sim.errors import UserError
from kc_sim.play.driver import runner
from kc_sim.runs import RunFolder, layout
from kc_sim.runs.lock import notice
from kc_sim.runs.parts import import_part_libraries
from kc_sim.stats import Tally
from kc_sim.processes.backends import Job, WorkerLost, executor
from kc_sim.processes.pool import WorkerPool
from kc_sim.processes.watch import RunWatch
from kc_sim.tournament.early import run_pool, start_early
from kc_sim.tournament.game_records import write_tournament_records
from kc_sim.tournament.plan import Plan, make_plan
from kc_sim.tournament.sizes import ROUNDS_PER_MATCH, processes_paid
from kc_sim.tournament.rederive import stalled
from kc_sim.tournament.options import TournamentOptions
from kc_sim.tournament.stopping import Stopper
from kc_sim.tournament.storing import ChunkWriter
from kc_sim.tournament.worker import ChunkResult, ChunkTask, RunSetup, chunk_tally, play_chunk, run_chunk, warm

__all__ = ["Interrupted", "Run", "RunResult", "check_run_folder", "run_tournament"]



def check_run_folder(plan: Plan):
    """The manifest of the run already in ``plan.out``, or None; refuses a folder of another
    run or one that is not a run folder (:meth:`kc_sim.runs.RunFolder.check`)."""
    return RunFolder.check(plan.run_spec())


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
    loop: str = ""                    # which loop played (kc_sim.play.driver.runner.loop_name)


def size_workers(opts: TournamentOptions, plan: Plan, pending) -> int:
    """Processes playing the chunks ``pending`` (this one and the workers): ``--jobs`` when
    given (at most one per chunk); by default every core, but no more than the work pays for
    (a 100,000-round run of compiled agents plays in this process alone)."""
    rounds = sum(c.units for c in pending) * (1 if plan.mode == "rounds" else ROUNDS_PER_MATCH)
    return processes_paid(opts.processes, opts.jobs_given, len(pending), rounds, all(s.compiled for s in plan.specs))


def run_tournament(options=None, *, pool: WorkerPool | None = None, on_chunk=None, started: float | None = None,
                   **kwargs) -> RunResult:
    """Plan, run (or resume) and summarise the tournament ``options`` asks for (a
    :class:`~kc_sim.tournament.options.TournamentOptions`); see docs/tournaments.md. From
    Python, ``run_tournament(["greedy", "merger"], rounds=100_000, ...)`` builds the options
    from the agents and keywords (:meth:`TournamentOptions.create`; with ``until="decided"``,
    ``rounds`` is the most it plays).
    ``pool``: the loky workers (:class:`~kc_sim.processes.pool.WorkerPool`, maybe started
    already; its owner closes it); without one the run makes its own and closes it as it ends.
    ``on_chunk(index)`` is called after each part is written (tests use it to interrupt).
    ``started`` (a ``time.perf_counter()`` reading) is when the clock of ``seconds`` and
    ``start_seconds`` starts; the command line passes the start of its process, so the
    compiling done while importing counts as start-up, not as nothing."""
    t0 = time.perf_counter() if started is None else started
    if not isinstance(options, TournamentOptions):
        if options is None:                        # run_tournament(agents=[...], ...)
            options = kwargs.pop("agents")
        if kwargs.get("until") is not None and "max_rounds" not in kwargs:
            kwargs["max_rounds"] = kwargs.pop("rounds", None)
        options = TournamentOptions.create(options, **kwargs)
    elif kwargs:
        raise TypeError(f"run_tournament: options given, and keywords {', '.join(kwargs)} too")
    opts = options
    with ExitStack() as owned:
        if pool is None:
            pool = owned.enter_context(run_pool())
        early = start_early(pool, opts)           # the workers import while the plan loads the agents
        try:
            plan = make_plan(opts)
        except BaseException:
            if early:
                pool.close()               # a bad agent or player count: no run will use them
            raise
        with RunFolder.open(plan.run_spec(), opts.command, wait=opts.wait) as folder, \
                RunWatch(plan.out / layout.WATCH_DIR) as watch:
            run = Run.plan_from(opts, plan, folder, watch=watch, pool=pool, t0=t0)
            run.warm()
            run.play(on_chunk=on_chunk)
            run.stop()
            return run.summarise()


class Run:
    """One call of :func:`run_tournament` once its folder is open, as its steps in order:
    :meth:`plan_from` (what is left to play and by how many processes), :meth:`warm` (compile
    or load the compiled code, start the workers), :meth:`play` (the chunks, each stored
    by the writer thread as it arrives; Ctrl-C), :meth:`stop`
    (with ``--until``: drop what was played beyond the stop) and :meth:`summarise` (tallies,
    summary, records)."""

    def __init__(self, opts: TournamentOptions, plan: Plan, folder: RunFolder, stopper: Stopper | None,
                 pending: list, workers: int, watch: RunWatch, pool: WorkerPool, t0: float):
        self.opts, self.folder, self.plan = opts, folder, plan
        self.stopper, self.pending, self.workers = stopper, pending, workers
        self.watch = watch                # this process's watch over the run (kc_sim.processes.watch)
        self.t0 = self.t_play = self.t_end = t0
        self.resumed = folder.n_done()
        self.played: list[int] = []
        self.dropped = 0
        sched = plan.schedule
        self.watch_dir = str((plan.out / layout.WATCH_DIR).resolve())
        self.setup = RunSetup(seed=plan.config.seed, rules=plan.rules.spec(), mode=plan.mode,
                              groups_per_lineup=sched.groups, n_agents=len(plan.labels), seatings=sched.seatings,
                              loop_names=tuple(plan.load_names), fault_dir=str((plan.out / layout.FAULTS_DIR).resolve()),
                              watch_dir=self.watch_dir, decision_timeout=opts.decision_timeout, luck=opts.luck)
        self.warm_up = ChunkTask.warm_up(self.setup, (plan.load_names[i] for i in sched.lineups[0]))
        self.pool = pool
        self.uses_pool = opts.backend == "loky" and workers > 1 and bool(pending)
        self.warming: list = []
        self.loop = " and ".join(sorted({runner.loop_name([plan.specs[i] for i in lineup], loop_agents=plan.specs)
                                         for lineup in sched.lineups}))

    @classmethod
    def plan_from(cls, opts: TournamentOptions, plan: Plan, folder: RunFolder, *, watch: RunWatch,
                  pool: WorkerPool, t0: float) -> Run:
        """Step 1: the chunks left to play (a resumed run with ``--until`` first replays the
        rule over its stored chunks) and the number of processes that play them."""
        stopper = Stopper.of_plan(plan, opts.until, folder.reader()) if opts.until is not None else None
        if stopper is not None:
            stopper.advance(folder.done)           # a resumed run replays the rule over its stored chunks
        skip = set(stopper.beyond()) if stopper is not None and stopper.stopped_at is not None else set()
        pending = [c for c in folder.chunks if not folder.done(c.index) and c.index not in skip]
        return cls(opts, plan, folder, stopper, pending, size_workers(opts, plan, pending), watch, pool, t0)

    def warm(self) -> None:
        """Step 2: start the workers (they import the play layer meanwhile), compile or load
        the run's compiled code here by playing one tiny chunk, then have each worker load
        it. The same steps whatever the cache holds: a cold cache only makes this process's
        warm-up longer (reported as start-up), and no worker ever compiles."""
        if self.uses_pool:
            self.pool.start(self.workers - 1)           # (started already by the command: only resized)
        warm(self.warm_up)
        self.warming = self.pool.warm(warm, self.warm_up) if self.uses_pool else []

    def tasks(self) -> list[ChunkTask]:
        plan, sched = self.plan, self.plan.schedule
        return [ChunkTask(index=c.index, lineup=c.lineup, agents=tuple(sched.lineups[c.lineup]),
                          names=tuple(plan.load_names[i] for i in sched.lineups[c.lineup]), start=c.start, stop=c.stop,
                          setup=self.setup)
                for c in self.pending]

    def play(self, *, on_chunk=None) -> None:
        """Step 3: play the pending chunks, storing each as its result arrives (and, with
        ``--until``, stopping once the rule says so), the watchdog watching every playing
        process (:mod:`kc_sim.processes.watch`). Ctrl-C stores the chunks played, saves the
        manifest and raises :class:`Interrupted` saying how many chunks are done."""
        folder = self.folder
        tasks = self.tasks()
        bar = _progress(self.plan, folder.manifest.units_done, self.opts.quiet)
        self.t_play = time.perf_counter()
        self.watch.note = bar.write
        try:
            if tasks:
                self._play(tasks, bar, on_chunk)
        except KeyboardInterrupt:
            bar.close()
            # a chunk marks itself done only once its parts are in place; Ctrl-C may have come
            # before the manifest was written: write it now, so the count below is what resumes
            folder.save()
            raise Interrupted(f"interrupted with {folder.n_done()} of {len(folder.chunks)} chunks done in "
                              f"{self.plan.out}; rerun the same command to finish") from None
        finally:
            bar.close()
            self.watch.note = notice
        self.t_end = time.perf_counter() if tasks else self.t_play
        self.played = [t.index for t in tasks if folder.done(t.index)]

    def _play(self, tasks, bar, on_chunk) -> None:
        """Send the tasks to the backend and hand each result to the writer thread
        (:class:`~kc_sim.tournament.storing.ChunkWriter`), which stores it while the next
        chunk plays, in the order the results arrive; a chunk played in this process is
        tallied there too (:func:`~kc_sim.tournament.worker.play_chunk`). However the run
        ends (Ctrl-C, a fault, a lost worker), every chunk that was played is stored before
        the error goes on, unless storing is what failed (the error that ended the run is
        the one reported, and what was not stored is played again on resume). A worker the
        watchdog found stuck (and killed) ends the run with its stalled round (:func:`stalled`)."""
        watch = self.watch
        by_index = {t.index: t for t in tasks}
        job = Job(run_chunk, warm, self.warm_up, self.watch_dir, local=play_chunk)
        with ChunkWriter(lambda res: self._stored(res, by_index[res.index], bar, on_chunk),
                         import_part_libraries) as writer:
            try:
                with executor(self.opts.backend, self.workers, self.opts.scheduler, job, self.pool, self.warming,
                              check=watch.check) as run:
                    self.t_play = time.perf_counter()
                    for res in run(tasks):
                        if not writer.put(res):
                            break              # the stopping rule: what was played beyond is dropped
                writer.finish()
            except BaseException as e:
                if writer.error is None:       # the player's error (or Ctrl-C during finish): keep what was played
                    try:
                        writer.finish()
                    except (OSError, UserError):
                        pass                   # the error that ended the run is the one reported
                if isinstance(e, WorkerLost) and watch.verdict is not None:
                    raise stalled(*watch.verdict) from None
                raise

    def _stored(self, res: ChunkResult, task: ChunkTask, bar, on_chunk) -> bool:
        """A chunk's result arrived (in the writer thread): tally it when it was played here,
        store it, count it, tell the stopping rule; True once the rule says the run is over."""
        index = res.index
        if res.tally is None:
            res.tally = chunk_tally(task, res.rounds, res.matches)
        self.folder.store(index, res.rounds, res.matches, res.tally, res.seconds)
        bar.update(self.folder.chunks[index].units)
        if on_chunk is not None:
            on_chunk(index)
        if self.stopper is None:
            return False
        self.stopper.chunk_done(index, res)
        return self.stopper.advance(self.folder.done)

    def stop(self) -> None:
        """Step 4 (with ``--until``): once the rule has stopped the run, remove the parts of
        the chunks after the stop (in flight when it came), mark them ``skipped`` and record
        the stop in the manifest; they are not counted as played."""
        stopper, folder = self.stopper, self.folder
        if stopper is None:
            return
        if stopper.stopped_at is not None:     # (interrupted before the rule decided: nothing to drop)
            folder.drop(stopper.beyond(), stopper.to_manifest())
        self.dropped = sum(folder.chunks[i].units for i in self.played if not folder.done(i))
        self.played = [i for i in self.played if folder.done(i)]

    def summarise(self) -> RunResult:
        """Step 5: merge the match parts, add up the chunks' tallies into the summary (no
        rows are read), write the records, close the manifest."""
        plan, folder, out = self.plan, self.folder, self.plan.out
        files = {"rounds": out / layout.ROUNDS, "manifest": out / layout.MANIFEST_FILE}
        tally, n_rounds = folder.reader().tally(plan.labels, plan.schedule.players)
        if plan.mode == "matches":
            files["matches"] = folder.merge_matches()
        table = None
        if self.opts.summary:
            table = tally.summary(plan.labels)
            files["summary"] = folder.write_summary(table)
        if self.opts.records:
            files["records"] = write_tournament_records(plan, folder.reader(), self.opts.records)
        folder.finished(n_rounds, [files.get("matches"), files.get("summary")])
        units = sum(c.units for c in folder.chunks if folder.done(c.index))
        return RunResult(out, plan, table, units, n_rounds, played_chunks=len(self.played),
                         played_units=sum(folder.chunks[i].units for i in self.played),
                         resumed_chunks=self.resumed, seconds=time.perf_counter() - self.t0, files=files,
                         tally=tally, start_seconds=self.t_play - self.t0, play_seconds=self.t_end - self.t_play,
                         stop=self.stopper.reason if self.stopper is not None else None, dropped_units=self.dropped,
                         loop=self.loop)


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass

    @staticmethod
    def write(message: str) -> None:
        notice(message)


def _progress(plan: Plan, units_done: int, quiet: bool):
    if quiet or not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm  # lazy: only with a terminal; workers import this package

    class Bar(tqdm):
        def write(self, message: str) -> None:             # a line above the bar
            tqdm.write(f"kc-sim: {message}", file=sys.stderr)

    return Bar(total=plan.schedule.units, initial=units_done, unit=f" {plan.unit}s",
               unit_scale=True, file=sys.stderr, smoothing=0.1, dynamic_ncols=True, leave=False)
