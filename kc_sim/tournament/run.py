"""Running a tournament: chunks over joblib (loky), dask or in-process, written as they
arrive, resumable, with a manifest and a progress bar.

A chunk (see :mod:`kc_sim.tournament.schedule`) is one task: :func:`run_chunk` plays it in compiled
code and returns compact numpy arrays. The parent turns each result into a parquet part
(written under a temporary name, then renamed) and marks the chunk done in
``manifest.json``. Rerunning the same configuration into the same folder plays only the
chunks not yet done; a different configuration is refused. Every seed derives from the
run seed and the group number, so the output is the same for every ``jobs`` and backend.

This module is imported by the workers: keep its top-level imports light (no pandas,
pyarrow or dask here; they are imported inside the parent-side functions).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
import sys
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kc_sim.core import loop
from kc_sim.errors import UserError
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.tournament.schedule import (
    CHUNK_MATCHES,
    CHUNK_ROUNDS,
    Schedule,
    group_seeds,
    make_schedule,
    rotate,
)

FORMAT = "kc-sim/tournament/1"
BACKENDS = ("loky", "dask", "sequential")
#: default sizes: well under a minute on two cores for compiled agents
DEFAULT_ROUNDS = 200_000
DEFAULT_ROUNDS_PYTHON = 20_000
PYTHON_CHUNK_DIVISOR = 20
FAULTS_DIR = "faults"        # in the run folder: records of rounds where an agent misbehaved


# --- the worker side ---------------------------------------------------------------

@dataclass(frozen=True)
class ChunkTask:
    """Everything a worker needs to play one chunk (small and picklable)."""

    index: int
    lineup: int                 # line-up index
    names: tuple[str, ...]      # agent load names by line-up position
    start: int                  # first rotation group
    stop: int
    groups_per_lineup: int      # for match ids
    seed: int                   # run seed
    rules: str                  # RuleSet.spec()
    mode: str                   # "rounds" or "matches"
    fault_dir: str | None = None  # where the runner saves the record of a misbehaving agent's round
    agents: tuple[int, ...] = ()  # agent indices by line-up position, for the chunk's tally
    n_agents: int = 0


@functools.lru_cache(maxsize=None)
def _agent(name: str):
    from kc_sim.play.registry import load_agent
    return load_agent(name)


def run_chunk(task: ChunkTask) -> dict:
    """Play one chunk; returns ``{"index", "rounds", "matches", "seconds"}`` where
    ``rounds``/``matches`` are dicts of compact numpy columns (see :mod:`kc_sim.tournament.results`)."""
    t0 = time.perf_counter()
    rules = parse_rules(task.rules)
    agents = [_agent(n) for n in task.names]
    seeds = group_seeds(task.seed, task.start, task.stop)
    if task.mode == "rounds":
        rounds, matches = _round_chunk(task, agents, seeds, rules), None
    else:
        rounds, matches = _match_chunk(task, agents, seeds, rules)
    return {"index": task.index, "rounds": rounds, "matches": matches, "tally": _chunk_tally(task, rounds, matches),
            "seconds": time.perf_counter() - t0}


def _chunk_tally(task: ChunkTask, rounds: dict, matches: dict | None) -> str | None:
    """The chunk's summary statistics (a :class:`~kc_sim.stats.Tally` as JSON), computed
    here in the worker so the parent only adds tallies up."""
    from kc_sim.stats import Tally
    from kc_sim.tournament.results import seat_agents

    if not task.n_agents:
        return None
    tally = Tally(task.n_agents, len(task.agents))
    tally.add_rounds(seat_agents(task.agents, rounds["rotation"]), rounds["penalty"], rounds["winner"])
    if matches is not None:
        tally.add_matches(seat_agents(task.agents, matches["rotation"]), matches["total"], matches["winners"])
    return tally.to_json()


def _round_chunk(task: ChunkTask, agents, seeds, rules: RuleSet) -> dict:
    """Every rotation of every group of the chunk; rows ordered group by group."""
    from kc_sim.play import runner

    k, G = len(agents), len(seeds)
    rows = np.empty((k, G, loop.ROUND_COLS), dtype=np.int64)
    for r in range(k):
        seated = rotate(agents, r)
        rows[r] = runner.play_rounds(list(seated), seeds, rules, fault_dir=task.fault_dir)  # raises AgentFault
    rows = rows.transpose(1, 0, 2).reshape(G * k, loop.ROUND_COLS)
    group = np.repeat(np.arange(task.start, task.stop, dtype=np.int64), k)
    rotation = np.tile(np.arange(k, dtype=np.int8), G)
    return _compact_rounds(rows, k, group, rotation)


def _match_chunk(task: ChunkTask, agents, seeds, rules: RuleSet) -> tuple[dict, dict]:
    """Whole matches for every rotation of every group; round rows ordered by match id,
    match rows group by group. Match id = (lineup * groups + group) * k + rotation."""
    from kc_sim.play import runner

    k, G = len(agents), len(seeds)
    round_parts, rot_parts, match_rows = [], [], np.empty((k, G, loop.MATCH_COLS), dtype=np.int64)
    for r in range(k):
        seated = rotate(agents, r)
        rr, match_rows[r] = runner.play_matches(list(seated), seeds, rules, match_base=0,
                                                fault_dir=task.fault_dir)        # raises AgentFault
        round_parts.append(rr)
        rot_parts.append(np.full(len(rr), r, dtype=np.int8))
    rows = np.concatenate(round_parts)
    rotation = np.concatenate(rot_parts)
    group = task.start + rows[:, loop.C_MATCH]
    rows[:, loop.C_MATCH] = (task.lineup * task.groups_per_lineup + group) * k + rotation
    order = np.lexsort((rows[:, loop.C_MATCH_ROUND], rows[:, loop.C_MATCH]))
    rounds = _compact_rounds(rows[order], k, group[order], rotation[order])

    mrows = match_rows.transpose(1, 0, 2).reshape(G * k, loop.MATCH_COLS)
    mgroup = np.repeat(np.arange(task.start, task.stop, dtype=np.int64), k)
    mrot = np.tile(np.arange(k, dtype=np.int64), G)
    matches = {
        "group": mgroup, "rotation": mrot.astype(np.int8),
        "match": (task.lineup * task.groups_per_lineup + mgroup) * k + mrot,
        "seed": mrows[:, loop.M_SEED].copy(), "rounds": mrows[:, loop.M_ROUNDS].astype(np.int16),
        "total": mrows[:, loop.M_TOTAL:loop.M_TOTAL + k].astype(np.int32),
        "winners": mrows[:, loop.M_WINNERS].astype(np.int16),
    }
    return rounds, matches


def _compact_rounds(rows, k, group, rotation) -> dict:
    return {
        "group": np.ascontiguousarray(group, dtype=np.int64),
        "rotation": np.ascontiguousarray(rotation, dtype=np.int8),
        "match": rows[:, loop.C_MATCH].copy(),
        "match_round": rows[:, loop.C_MATCH_ROUND].astype(np.int16),
        "seed": rows[:, loop.C_SEED].copy(),
        "dealer": rows[:, loop.C_DEALER].astype(np.int8),
        "first": rows[:, loop.C_FIRST].astype(np.int8),
        "winner": rows[:, loop.C_WINNER].astype(np.int8),
        "end": rows[:, loop.C_END].astype(np.int8),
        "turns": rows[:, loop.C_TURNS].astype(np.int32),
        "actions": rows[:, loop.C_ACTIONS].astype(np.int32),
        "stock_left": rows[:, loop.C_STOCK_LEFT].astype(np.int16),
        "penalty": rows[:, loop.C_PENALTY:loop.C_PENALTY + k].astype(np.int16),
    }


def warm(names, rules: str, mode: str, fault_dir: str | None = None) -> float:
    """Compile (or load from the numba cache) everything a chunk needs by playing one tiny
    chunk; returns the seconds it took. Run in the parent before workers start, and on
    every dask worker."""
    t0 = time.perf_counter()
    run_chunk(ChunkTask(-1, 0, tuple(names), 0, 1, 1, 0, rules, mode, fault_dir))
    return time.perf_counter() - t0


# --- configuration -----------------------------------------------------------------

@dataclass
class Plan:
    """A run's configuration (what resume compares) and its schedule."""

    config: dict
    schedule: Schedule
    specs: list                  # AgentSpec by agent index
    labels: list[str]            # unique display names by agent index
    load_names: list[str]        # names workers load (file paths made absolute)
    rules: RuleSet
    out: Path

    @property
    def mode(self) -> str:
        return self.config["mode"]

    @property
    def unit(self) -> str:
        return "round" if self.mode == "rounds" else "match"


def _portable(name: str) -> str:
    """A load name that works from any working directory (``file.py:Name`` made absolute)."""
    path, sep, obj = name.rpartition(":")
    if sep and path.endswith(".py"):
        return f"{Path(path).resolve()}:{obj}"
    return name


def _labels(specs, names) -> list[str]:
    """Unique display names: the agents' names (``Name`` for ``path/file.py:Name``), then
    ``#2``, ``#3``... for repeats."""
    out, seen = [], {}
    for spec in specs:
        base = spec.name.rsplit(":", 1)[-1] if ":" in spec.name else spec.name
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return out


def split_agents(agents) -> list[str]:
    """``greedy,merger`` (or a list) as a list of names."""
    if isinstance(agents, str):
        agents = agents.split(",")
    names = [a.strip() for a in agents if a and a.strip()]
    if len(names) < 2:
        raise UserError(f"a tournament needs at least 2 agents (--agents a,b,...), got {len(names)}")
    return names


def default_out(labels, players: int, mode: str, units: int, seed: int, rules: RuleSet) -> Path:
    """``results/<name>``: agents, seats, size, seed (and a rules tag unless classic)."""
    tag = "-".join(labels)
    tag = re.sub(r"[^A-Za-z0-9_.#-]+", "_", tag).replace("#", "_")
    if len(tag) > 60:
        tag = f"{tag[:40]}-{zlib.crc32(tag.encode()):08x}"
    name = f"{tag}_{players}p_{units}{'r' if mode == 'rounds' else 'm'}_s{seed}"
    if rules != RuleSet():
        name += f"_{zlib.crc32(rules.spec().encode()):08x}"
    return Path("results") / name


def make_plan(agents, *, players=None, rounds=None, matches=None, rules="classic", seed=0,
              out=None, chunk_size=None, lineups=None) -> Plan:
    """Check the input and build the configuration and schedule of a run."""
    from kc_sim.play.registry import load_agent

    names = split_agents(agents)
    rs = parse_rules(rules)
    if not 0 <= int(seed) < 2 ** 63:
        raise UserError(f"bad --seed {seed}: expected an integer from 0 to 2**63 - 1")
    specs = [load_agent(n) for n in names]
    if players is None:
        players = min(len(names), 4, rs.max_players)
    rs.check_players(players)
    if players > len(names):
        raise UserError(f"--players {players} needs at least {players} agents, got {len(names)}")
    if rounds is not None and matches is not None:
        raise UserError("give --rounds or --matches, not both")
    mode = "matches" if matches is not None else "rounds"
    count = matches if matches is not None else rounds
    if count is None:
        count = DEFAULT_ROUNDS if all(s.compiled for s in specs) else DEFAULT_ROUNDS_PYTHON
    if count < 1:
        raise UserError(f"bad --{mode} {count}: expected a positive number")
    if chunk_size is None:
        chunk_size = CHUNK_ROUNDS if mode == "rounds" else CHUNK_MATCHES
        if not all(s.compiled for s in specs):
            chunk_size //= PYTHON_CHUNK_DIVISOR     # Python agents are ~20x slower: keep chunks short
    if lineups is not None:
        for lu in lineups:
            if len(lu) != players or len(set(lu)) != players or not all(0 <= i < len(names) for i in lu):
                raise UserError(f"bad line-up {lu}: expected {players} different agent indices")
    schedule = make_schedule(len(names), players, int(count), int(chunk_size), lineups)
    labels = _labels(specs, names)
    config = {
        "format": FORMAT, "mode": mode, "agents": names, "labels": labels, "players": players,
        "requested": int(count), "rules": rs.spec(), "seed": int(seed), "chunk_size": int(chunk_size),
        "lineups": [list(x) for x in schedule.lineups],
    }
    out = Path(out) if out is not None else default_out(labels, players, mode, int(count), int(seed), rs)
    return Plan(config, schedule, specs, labels, [_portable(n) for n in names], rs, out)


# --- the run folder ----------------------------------------------------------------

def _versions() -> dict:
    from importlib import metadata
    out = {"python": sys.version.split()[0]}
    for pkg in ("kc-sim", "numpy", "numba", "pandas", "pyarrow", "joblib", "dask", "distributed"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def _describe_difference(old: dict, new: dict) -> str:
    keys = [k for k in new if old.get(k) != new.get(k)]
    shown = []
    for k in keys[:3]:
        a, b = old.get(k), new.get(k)
        shown.append(f"{k} {b!r} here but {a!r} there")
    return "; ".join(shown)


def check_run_folder(plan: Plan) -> dict | None:
    """The manifest of the run already in ``plan.out`` (None for a new or empty folder).
    Refuses a folder holding a different run, or anything that is not a run folder."""
    from kc_sim.tournament import results as R

    out = plan.out
    if out.exists() and not out.is_dir():
        raise UserError(f"cannot use {out} as the run folder: it is a file")
    manifest_path = out / R.MANIFEST_FILE
    if manifest_path.exists():
        try:
            old = R.read_manifest(out)
        except (OSError, ValueError) as e:
            raise UserError(f"cannot read {manifest_path}: {e}; remove the folder or choose another --out") from None
        if old.get("config") != plan.config:
            diff = _describe_difference(old.get("config", {}), plan.config)
            raise UserError(f"{out} holds a different run ({diff}); rerun that command to resume it, "
                            "or choose another --out")
        return old
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} exists and is not a tournament folder (no {R.MANIFEST_FILE}); "
                        "choose another --out")
    return None


def open_run_folder(plan: Plan, old: dict | None, command: str | None) -> dict:
    """Create or reopen the run folder and write its manifest: chunks listed done in the
    old manifest whose part files exist stay done, every other chunk is pending."""
    from kc_sim.tournament import results as R

    out = plan.out
    chunks = plan.schedule.chunks()
    done = set()
    if old:
        for c in old.get("chunks", []):
            if c.get("state") == "done" and _part_files_exist(plan, c["index"]):
                done.add(c["index"])
    manifest = {
        "format": FORMAT,
        "command": command,
        "config": plan.config,
        "schedule": plan.schedule.to_dict(),
        "versions": _versions(),
        "created": (old or {}).get("created", _now()),
        "updated": _now(),
        "finished": False,
        "units_done": 0,
        "chunks": [{"index": c.index, "lineup": c.lineup, "groups": [c.start, c.stop],
                    plan.mode: c.groups * plan.schedule.players,
                    "state": "done" if c.index in done else "pending",
                    "file": f"{R.ROUNDS_DIR}/{R.part_name(c.index)}"} for c in chunks],
    }
    if old:
        for c, oc in zip(manifest["chunks"], old.get("chunks", [])):
            if c["state"] == "done" and "rows" in oc:
                c["rows"], c["seconds"] = oc["rows"], oc.get("seconds")
    try:
        (out / R.ROUNDS_DIR).mkdir(parents=True, exist_ok=True)
        if plan.mode == "matches":
            (out / R.MATCHES_DIR).mkdir(exist_ok=True)
        R.clean_temporaries(out)
        _save_manifest(manifest, out)
    except OSError as e:
        raise UserError(f"cannot write to {out}: {e.strerror or e}") from None
    return manifest


def _part_files_exist(plan: Plan, index: int) -> bool:
    from kc_sim.tournament import results as R
    ok = (plan.out / R.ROUNDS_DIR / R.part_name(index)).exists()
    if plan.mode == "matches":
        ok = ok and (plan.out / R.MATCHES_DIR / R.part_name(index)).exists()
    return ok


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _save_manifest(manifest: dict, out: Path) -> None:
    from kc_sim.tournament import results as R
    done = [c for c in manifest["chunks"] if c["state"] == "done"]
    unit = "rounds" if manifest["config"]["mode"] == "rounds" else "matches"
    manifest["units_done"] = sum(c[unit] for c in done)
    manifest["updated"] = _now()
    R.write_json_atomic(manifest, out / R.MANIFEST_FILE)


# --- dispatch ----------------------------------------------------------------------

class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run, saying what was kept (the command line prints it, exit 130)."""


class WorkerLost(UserError):
    """A worker process died (killed from outside, out of memory) while playing chunks;
    the chunks already written are kept and a rerun resumes."""


def _quiet_worker() -> None:
    """Worker initializer: Ctrl-C in a terminal reaches the whole process group; only the
    parent handles it (it stops the workers), so a worker never prints a traceback."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _loky_executor(jobs: int):
    """joblib's reusable loky process pool (workers inherit the environment, hence the
    numba cache folder); the same pool is reused by later runs of this process."""
    from joblib.externals.loky import get_reusable_executor
    return get_reusable_executor(max_workers=jobs, timeout=300, initializer=_quiet_worker)


def prestart_loky(jobs: int, warm_args: tuple) -> list:
    """Start the loky workers now and have each load the compiled code; returns the
    futures of those warm-ups (the run waits for them, so start-up is timed apart from play)."""
    with _sigint_ignored():          # see _sigint_ignored; the initializer covers respawned workers
        ex = _loky_executor(jobs)
        return [ex.submit(warm, *warm_args) for _ in range(jobs)]


def _lost(err: BaseException, running) -> WorkerLost:
    chunks = ", ".join(str(t.index) for t in sorted(running, key=lambda t: t.index))
    return WorkerLost(f"a worker process died ({type(err).__name__}) while chunk{'s' if ',' in chunks else ''} "
                      f"{chunks} {'were' if ',' in chunks else 'was'} running or queued; finished chunks are kept: "
                      "rerun the same command to resume")


def _wait_warm(futures, pending) -> None:
    """Wait for the workers' warm-ups (a worker lost meanwhile ends the run like one lost
    while playing: nothing was played yet)."""
    from joblib.externals.loky.process_executor import BrokenProcessPool

    try:
        for fut in futures:
            fut.result()
    except BrokenProcessPool as e:
        raise _lost(e, pending[:2 * len(futures)]) from None


def _windowed(submit, tasks, window: int):
    """Submit tasks keeping at most ``window`` in flight; yield results as they complete.
    A broken pool (a worker died), seen by a result or by the next submit, ends the run
    with :class:`WorkerLost` naming the chunks not finished. Pending futures are left to
    the caller's teardown (cancelling them first races the pool's own shutdown)."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from joblib.externals.loky.process_executor import BrokenProcessPool

    it = iter(tasks)
    pending = {}
    task = None
    try:
        for task in itertools.islice(it, window):
            pending[submit(task)] = task
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                task = pending.pop(fut)
                res = fut.result()
                task = next(it, None)
                if task is not None:
                    pending[submit(task)] = task
                yield res
    except BrokenProcessPool as e:
        unfinished = {t.index: t for t in [*pending.values(), *([task] if task is not None else [])]}
        raise _lost(e, list(unfinished.values())) from None


def _stop_loky(ex) -> None:
    """Kill the pool's workers and wait (briefly) for its manager thread, so that nothing
    is left running or joining at interpreter exit."""
    ex.shutdown(wait=False, kill_workers=True)
    thread = getattr(ex, "_executor_manager_thread", None)
    if thread is not None:
        thread.join(timeout=10)


@contextmanager
def _executor(backend: str, jobs: int, scheduler: str | None, warm_args: tuple):
    """A function mapping tasks to an iterator of their results in completion order. On any
    error or interrupt the workers are stopped at once: a fault never waits for the chunks
    still running."""
    if backend == "sequential" or (backend == "loky" and jobs == 1):
        yield lambda tasks: map(run_chunk, tasks)
    elif backend == "loky":
        ex = _loky_executor(jobs)
        try:
            yield lambda tasks: _windowed(lambda t: ex.submit(run_chunk, t), tasks, 2 * jobs)
        except BaseException:
            _stop_loky(ex)
            raise
    else:
        with _dask_client(jobs, scheduler) as client:
            client.run(warm, *warm_args)

            def run(tasks):
                from concurrent.futures import CancelledError

                from dask.distributed import KilledWorker, as_completed
                from distributed.comm.core import CommClosedError

                futures = client.map(run_chunk, tasks, pure=False)
                index = {f.key: t for f, t in zip(futures, tasks)}
                try:
                    for fut in as_completed(futures):
                        try:
                            res = fut.result()
                        except (KilledWorker, CommClosedError, CancelledError) as e:   # a worker died
                            raise _lost(e, [index[f.key] for f in futures if not f.done()] or
                                        [index[fut.key]]) from None
                        fut.release()
                        yield res
                finally:
                    client.cancel([f for f in futures if not f.done()])
            yield run


@contextmanager
def _sigint_ignored():
    """Ignore Ctrl-C while worker processes are started: they inherit the ignored signal
    (Python then installs no KeyboardInterrupt handler), so Ctrl-C in a terminal, which
    reaches the whole process group, stops only the parent, which stops them, and no worker
    prints a traceback."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _dask_client(jobs: int, scheduler: str | None):
    """A client of the cluster at ``scheduler``, or of a LocalCluster of ``jobs`` single-thread
    worker processes."""
    import logging
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UserError("--backend dask needs dask.distributed: pip install 'kc-sim[dask]'") from None
    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError, ValueError) as e:
                raise UserError(f"cannot reach the dask scheduler at {scheduler}: {e}") from None
        else:
            with _sigint_ignored():      # the worker processes start with Ctrl-C ignored
                cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
            client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


# --- the run -----------------------------------------------------------------------

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
    files: dict = field(default_factory=dict)
    tally: object = None              # kc_sim.stats.Tally of the whole run
    start_seconds: float = 0.0        # compiling or loading the compiled code, starting workers
    play_seconds: float = 0.0         # from the first chunk sent to the last chunk written


def resolve_jobs(jobs) -> int:
    if jobs is None or int(jobs) == -1:
        return os.cpu_count() or 1
    if int(jobs) < 1:
        raise UserError(f"bad --jobs {jobs}: expected a positive number (or -1 for every core)")
    return int(jobs)


def run_tournament(agents, *, players=None, rounds=None, matches=None, rules="classic", seed=0,
                   jobs=None, backend=None, scheduler=None, out=None, records=0, chunk_size=None,
                   lineups=None, quiet=False, command=None, on_chunk=None, summary=True) -> RunResult:
    """Plan, run (or resume) and summarise a tournament; see docs/tournaments.md.
    ``on_chunk(index)`` is called after each part is written (tests use it to interrupt)."""
    t0 = time.perf_counter()
    if backend is None:
        backend = "dask" if scheduler else "loky"
    if backend not in BACKENDS:
        raise UserError(f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    if scheduler and backend != "dask":
        raise UserError("--scheduler needs --backend dask")
    if records < 0:
        raise UserError(f"bad --records {records}: expected 0 or more")
    jobs = resolve_jobs(jobs)
    plan = make_plan(agents, players=players, rounds=rounds, matches=matches, rules=rules, seed=seed,
                     out=out, chunk_size=chunk_size, lineups=lineups)
    old = check_run_folder(plan)
    sched = plan.schedule
    chunks = sched.chunks()
    manifest = open_run_folder(plan, old, command)
    pending = [c for c in chunks if manifest["chunks"][c.index]["state"] != "done"]
    resumed = len(chunks) - len(pending)
    workers = max(1, min(jobs, len(pending)))
    faults = str((plan.out / FAULTS_DIR).resolve())
    warm_args = (tuple(plan.load_names[i] for i in sched.lineups[0]), plan.rules.spec(), plan.mode, faults)
    warm(*warm_args)   # compile or load once here, before any worker starts
    warming = prestart_loky(workers, warm_args) if backend == "loky" and workers > 1 and pending else []
    tasks = [ChunkTask(c.index, c.lineup, tuple(plan.load_names[i] for i in sched.lineups[c.lineup]),
                       c.start, c.stop, sched.groups, plan.config["seed"], plan.rules.spec(), plan.mode, faults,
                       tuple(sched.lineups[c.lineup]), len(plan.labels))
             for c in pending]
    bar = _progress(plan, manifest, quiet)
    t_play = time.perf_counter()
    try:
        if tasks:
            with _executor(backend, workers, scheduler, warm_args) as run:
                _wait_warm(warming, pending)
                t_play = time.perf_counter()
                for res in run(tasks):
                    _store(plan, manifest, chunks[res["index"]], res)
                    bar.update(chunks[res["index"]].groups * sched.players)
                    if on_chunk is not None:
                        on_chunk(res["index"])
    except KeyboardInterrupt:
        bar.close()
        done = sum(c["state"] == "done" for c in manifest["chunks"])
        raise Interrupted(f"interrupted with {done} of {len(chunks)} chunks done in {plan.out}; "
                          "rerun the same command to finish") from None
    finally:
        bar.close()
    t_end = time.perf_counter()
    result = finish(plan, manifest, records=records, summary=summary)
    result.start_seconds = t_play - t0
    result.play_seconds = t_end - t_play if tasks else 0.0
    result.played_chunks, result.resumed_chunks = len(tasks), resumed
    result.played_units = sum(chunks[t.index].groups for t in tasks) * sched.players
    result.seconds = time.perf_counter() - t0
    return result


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress(plan: Plan, manifest: dict, quiet: bool):
    if quiet or not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm
    return tqdm(total=plan.schedule.units, initial=manifest["units_done"], unit=f" {plan.unit}s",
                unit_scale=True, file=sys.stderr, smoothing=0.1, dynamic_ncols=True, leave=False)


def _store(plan: Plan, manifest: dict, chunk, res: dict) -> None:
    """Write a chunk's parts, then mark it done in the manifest (in that order)."""
    from kc_sim.tournament import results as R

    lineup = plan.schedule.lineups[chunk.lineup]
    if res["matches"] is not None:
        t = R.matches_table(res["matches"], chunk.index, chunk.lineup, lineup, plan.labels)
        R.write_atomic(t, plan.out / R.MATCHES_DIR / R.part_name(chunk.index))
    t = R.rounds_table(res["rounds"], chunk.index, chunk.lineup, lineup, plan.labels)
    R.write_atomic(t, plan.out / R.ROUNDS_DIR / R.part_name(chunk.index), {R.TALLY_KEY: res["tally"]})
    entry = manifest["chunks"][chunk.index]
    entry.update(state="done", rows=int(t.num_rows), seconds=round(res["seconds"], 3))
    _save_manifest(manifest, plan.out)


def finish(plan: Plan, manifest: dict, *, records: int = 0, summary: bool = True) -> RunResult:
    """After every chunk is done: merge the match parts, add up the chunks' tallies into the
    summary (no rows are read), write the records, close the manifest."""
    from kc_sim.tournament import results as R

    out = plan.out
    files = {"rounds": out / R.ROUNDS_DIR, "manifest": out / R.MANIFEST_FILE}
    tally, n_rounds = R.run_tally(out, plan.labels, plan.schedule.players)
    if plan.mode == "matches":
        files["matches"] = R.merge_parts(out / R.MATCHES_DIR, out / R.MATCHES_FILE)
    table = None
    if summary:
        table = tally.summary(plan.labels)
        files["summary"] = R.write_summary(table, out)
    if records:
        files["records"] = write_tournament_records(plan, records)
    manifest["finished"] = True
    manifest["rounds"] = n_rounds
    _save_manifest(manifest, out)
    return RunResult(out, plan, table, plan.schedule.units, n_rounds, 0, 0, 0, 0.0, files, tally=tally)


# --- game records ------------------------------------------------------------------

def _record_rows(plan: Plan, k: int):
    """The rounds to record: the first rounds of each line-up's first chunk, taken
    line-up by line-up in turn (so the first records cover every line-up and rotation)."""
    import pyarrow.parquet as pq

    from kc_sim.tournament import results as R

    firsts = {}
    for c in plan.schedule.chunks():
        firsts.setdefault(c.lineup, c.index)
    per = math.ceil(k / len(firsts))
    seats = range(plan.schedule.players)
    cols = ["seed", "dealer", "match", "match_round", "group"] + [f"agent_{s}" for s in seats] + \
        [f"penalty_{s}" for s in seats]
    lists = []
    for li, idx in sorted(firsts.items()):
        t = pq.read_table(plan.out / R.ROUNDS_DIR / R.part_name(idx), columns=cols).slice(0, per)
        lists.append(t.to_pylist())
    rows = []
    for i in range(per):
        rows += [lst[i] for lst in lists if i < len(lst)]
    return rows[:k]


def write_tournament_records(plan: Plan, k: int) -> Path:
    """Replay ``k`` rounds of the run with the event log on and write their game records
    (``records.jsonl``, for ``kc-sim check`` and replay). Single rounds are recorded with
    ``match`` 0 and ``round`` = their rotation group; rounds of matches with their match
    id and round in the match."""
    from kc_sim.play import runner
    from kc_sim.records import format as REC
    from kc_sim.tournament import results as R

    by_label = dict(zip(plan.labels, plan.specs))
    faults = plan.out / FAULTS_DIR

    def gen():
        for row in _record_rows(plan, k):
            labels = [row[f"agent_{s}"] for s in range(plan.schedule.players)]
            seat_map = [s for s in range(plan.schedule.players) if row[f"penalty_{s}"] is not None]
            in_match = row["match"] is not None
            rec = runner.record_round([by_label[x] for x in labels], row["seed"], plan.rules,
                                      dealer=seat_map.index(row["dealer"]), seat_map=seat_map,
                                      match=row["match"] if in_match else 0,
                                      round=row["match_round"] if in_match else row["group"], fault_dir=faults)
            rec["players"] = [labels[s] for s in seat_map]
            yield rec

    return REC.write_records(plan.out / R.RECORDS_FILE, gen())
