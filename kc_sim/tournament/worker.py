"""What runs inside a worker process: play one chunk and return compact numpy columns.

A chunk (see :mod:`kc_sim.tournament.schedule`) is one task, a :class:`ChunkTask`:
:func:`run_chunk` plays every seating of its groups in compiled code, returns the
compact columns of :mod:`kc_sim.runs.schema` and the chunk's
:class:`~kc_sim.stats.Tally`, so the parent only writes parts and adds tallies up. A chunk
the parent plays itself is played by :func:`play_chunk`, which leaves the tally to the
parent's writer thread (:mod:`kc_sim.tournament.storing`).
Every seed derives from the run seed and the group number, so a chunk's result does not
depend on the worker or the backend that played it.

Workers import this module first: keep its imports light (numpy and the play layer; no
pandas, pyarrow, dask or tqdm).
"""

from __future__ import annotations

import functools
import time
from dataclasses import asdict, dataclass

import numpy as np

from kc_sim.core import loop
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.driver import runner
from kc_sim.play.agents.registry import load_agent
from kc_sim.processes.watch import Work, WorkWatch
from kc_sim.stats import Tally
from kc_sim.tournament.schedule import group_seeds, rotations, seat_lineup
from kc_sim.runs.schema import compact_matches, compact_rounds, seat_agents


@dataclass(frozen=True)
class RunSetup:
    """What every chunk of a run shares, sent with each task (small and picklable)."""

    seed: int                                   # the run seed: every deal derives from it
    rules: str                                  # RuleSet.spec()
    mode: str                                   # "rounds" or "matches"
    groups_per_lineup: int                      # deals per line-up (match ids, the tally's batches)
    n_agents: int                               # agents of the run (the tally's keys)
    seatings: tuple[tuple[int, ...], ...] = ()  # the schedule's seatings (empty: the rotations)
    loop_names: tuple[str, ...] = ()            # every agent of the run: the compiled loop is the one for all of them
    fault_dir: str | None = None                # where the runner saves the record of a misbehaving agent's round
    watch_dir: str | None = None                # where this process's watch file goes (kc_sim.processes.watch)
    decision_timeout: float | None = None       # seconds a decision may take (None: the default)
    luck: bool = False                          # rounds with the draw control variates (kc_sim.core.draw_luck)


@dataclass(frozen=True)
class ChunkTask:
    """One chunk for a worker to play: groups ``start`` .. ``stop - 1`` of line-up
    ``lineup`` (its ``agents`` by line-up position, loaded by ``names``), in every seating.
    The warm-up is a chunk too (:meth:`warm_up`, index -1)."""

    index: int
    lineup: int
    agents: tuple[int, ...]                     # agent indices by line-up position, for the chunk's tally
    names: tuple[str, ...]                      # their load names
    start: int
    stop: int
    setup: RunSetup
    engine: str = "auto"                        # the runner's engine ("python" to replay a chunk decision by decision)

    @classmethod
    def warm_up(cls, setup: RunSetup, names) -> ChunkTask:
        """One group of the first line-up (``names``), played before a process's first chunk;
        it counts in no tally."""
        return cls(index=-1, lineup=0, agents=(), names=tuple(names), start=0, stop=1, setup=setup)

    @property
    def mode(self) -> str:
        return self.setup.mode

    def seating_list(self) -> tuple[tuple[int, ...], ...]:
        return self.setup.seatings or rotations(len(self.names))

    def to_json(self) -> dict:
        """The task as JSON (a watch file keeps it, for the replay of a stuck chunk)."""
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> ChunkTask:
        """The task of :meth:`to_json` (TypeError, KeyError or ValueError for anything else)."""
        s = dict(d["setup"])
        s["seatings"] = tuple(tuple(int(i) for i in q) for q in s.get("seatings") or ())
        s["loop_names"] = tuple(s.get("loop_names") or ())
        setup = RunSetup(**s)
        return cls(index=int(d["index"]), lineup=int(d["lineup"]), agents=tuple(int(a) for a in d["agents"]),
                   names=tuple(str(n) for n in d["names"]), start=int(d["start"]), stop=int(d["stop"]), setup=setup,
                   engine=str(d.get("engine", "auto")))

    def work(self, compiled: bool, units: int) -> Work:
        """The chunk as the watchdog sees it (:class:`~kc_sim.processes.watch.Work`)."""
        return Work(self.index, self.names, compiled, units, self.mode, self.setup.decision_timeout,
                    self.setup.watch_dir, self.to_json())


@dataclass
class ChunkResult:
    """What a worker sends back for a chunk: its compact columns
    (:func:`kc_sim.runs.schema.compact_rounds`, ``matches`` with matches), its tally as
    JSON (None from :func:`play_chunk`: the parent tallies it), and the seconds it took."""

    index: int
    rounds: dict
    matches: dict | None
    tally: str | None
    seconds: float


@functools.lru_cache(maxsize=None)
def _agent(name: str):
    return load_agent(name)


def run_chunk(task: ChunkTask, _loop_class=None) -> ChunkResult:
    """Play one chunk (its :class:`ChunkResult`, tally included): what a worker process runs.
    ``_loop_class`` (internal): the Python loop class the runner plays with (the replay of a
    stalled chunk, :mod:`kc_sim.tournament.rederive`, passes one sharing its state)."""
    res = play_chunk(task, _loop_class)
    res.tally = chunk_tally(task, res.rounds, res.matches)
    return res


def play_chunk(task: ChunkTask, _loop_class=None) -> ChunkResult:
    """Play one chunk, its tally left to the caller (``tally`` None): what the parent runs
    for a chunk it plays itself, its writer thread tallying the chunk while the next one
    plays (:mod:`kc_sim.tournament.storing`). The process's watchdog watches it
    (:class:`~kc_sim.processes.watch.WorkWatch`)."""
    t0 = time.perf_counter()
    rules = parse_rules(task.setup.rules)
    agents = [_agent(n) for n in task.names]
    loop_agents = [_agent(n) for n in task.setup.loop_names] or None
    seeds = group_seeds(task.setup.seed, task.start, task.stop)
    units = len(seeds) * len(task.seating_list())
    with WorkWatch(task.work(all(a.compiled for a in agents) and task.engine != "python", units)):
        if task.mode == "rounds":
            rounds, matches = _round_chunk(task, agents, seeds, rules, loop_agents, _loop_class), None
        else:
            rounds, matches = _match_chunk(task, agents, seeds, rules, loop_agents, _loop_class)
    return ChunkResult(task.index, rounds, matches, None, time.perf_counter() - t0)


def chunk_tally(task: ChunkTask, rounds: dict, matches: dict | None) -> str | None:
    """The chunk's per-deal sums (a :class:`~kc_sim.stats.Tally` as JSON, batched as the
    whole run's: :func:`~kc_sim.stats.batch_width` of its deals per line-up), computed here
    in the worker so the parent only adds tallies up. Every line-up plays the same deals,
    so only the chunks of line-up 0 count them."""
    if task.index < 0:
        return None
    tally = Tally.for_deals(task.setup.n_agents, len(task.agents), task.setup.groups_per_lineup)
    seatings = task.seating_list()
    first = task.lineup == 0
    tally.add_rounds(rounds["group"], seat_agents(task.agents, seatings, rounds["seating"]), rounds["penalty"],
                     rounds["winner"], rounds["first"], count_deals=first)
    if matches is not None:
        tally.add_matches(matches["group"], seat_agents(task.agents, seatings, matches["seating"]),
                          matches["total"], matches["winners"], count_deals=first)
    return tally.to_json()


def _round_chunk(task: ChunkTask, agents, seeds, rules: RuleSet, loop_agents=None, loop_class=None) -> dict:
    """Every seating of every group of the chunk; rows ordered group by group."""
    seatings = task.seating_list()
    k, S, G = len(agents), len(seatings), len(seeds)
    parts = [runner.play_rounds(list(seat_lineup(agents, seating)), seeds, rules, fault_dir=task.setup.fault_dir,
                                engine=task.engine, loop_agents=loop_agents, luck=task.setup.luck,
                                _loop_class=loop_class)  # raises AgentFault
             for seating in seatings]
    rows = np.stack(parts, axis=1).reshape(G * S, parts[0].shape[1])      # one copy, group by group
    group = np.repeat(np.arange(task.start, task.stop, dtype=np.int64), S)
    seating = np.tile(np.arange(S, dtype=np.int16), G)
    return compact_rounds(rows, k, group, seating)


def match_id(task: ChunkTask, group, seating):
    """The id of the match of deal ``group`` in seating ``seating`` of the task's line-up,
    unique in the run: ``(lineup * groups + group) * seatings + seating`` (docs/formats.md)."""
    return (task.lineup * task.setup.groups_per_lineup + group) * len(task.seating_list()) + seating


def _match_chunk(task: ChunkTask, agents, seeds, rules: RuleSet, loop_agents=None,
                 loop_class=None) -> tuple[dict, dict]:
    """Whole matches for every seating of every group; round rows ordered by match id,
    match rows group by group, numbered by :func:`match_id`."""
    seatings = task.seating_list()
    k, S, G = len(agents), len(seatings), len(seeds)
    round_parts, seat_parts, match_rows = [], [], np.empty((S, G, loop.MATCH_COLS), dtype=np.int64)
    for q, seating in enumerate(seatings):
        seated = seat_lineup(agents, seating)
        rr, match_rows[q] = runner.play_matches(list(seated), seeds, rules, match_base=0,
                                                fault_dir=task.setup.fault_dir,
                                                engine=task.engine, loop_agents=loop_agents,
                                                _loop_class=loop_class)  # raises AgentFault
        round_parts.append(rr)
        seat_parts.append(np.full(len(rr), q, dtype=np.int64))
    rows = np.concatenate(round_parts)
    seating = np.concatenate(seat_parts)
    group = task.start + rows[:, loop.C_MATCH]
    rows[:, loop.C_MATCH] = match_id(task, group, seating)
    order = np.lexsort((rows[:, loop.C_MATCH_ROUND], rows[:, loop.C_MATCH]))
    rounds = compact_rounds(rows[order], k, group[order], seating[order])

    mrows = match_rows.transpose(1, 0, 2).reshape(G * S, loop.MATCH_COLS)
    mgroup = np.repeat(np.arange(task.start, task.stop, dtype=np.int64), S)
    mseat = np.tile(np.arange(S, dtype=np.int64), G)
    matches = compact_matches(mrows, k, mgroup, mseat, match_id(task, mgroup, mseat))
    return rounds, matches


def warm(task: ChunkTask) -> float:
    """Compile (or load from the numba cache) everything a chunk needs by playing the
    warm-up chunk ``task`` (:meth:`ChunkTask.warm_up`, watched like any other); returns the
    seconds it took. Run in the parent before workers start, and in every worker."""
    t0 = time.perf_counter()
    run_chunk(task)
    return time.perf_counter() - t0
