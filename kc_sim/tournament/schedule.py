"""The tournament schedule: line-ups, seatings on duplicate deals, chunks and seeds.

* **Line-ups.** With ``k`` seats per table and ``n >= k`` agents, every combination of
  ``k`` agents is a line-up (the plan sorts the agents by name first, so the line-ups do
  not depend on the order they were named in). A caller may also give the line-ups
  explicitly (``bench-agent`` does).
* **Seatings (duplicate deals).** A line-up plays in groups. Group ``g`` is one deal,
  seed ``derive(run_seed, g)``, played once in every seating of the schedule: seating
  ``q`` is a tuple that puts line-up position ``q[s]`` in seat ``s``. The dealer is drawn
  from the deal seed, so all seatings share the deal and the dealer. The seatings are
  **balanced** (the default, :func:`balanced_seatings`):

  - ``k <= 4``: all ``k!`` orders (2, 6 or 24), so every agent plays every hand of the
    deal equally often after every other ordering of the table;
  - ``k > 4`` (two decks): ``k - 1`` (or ``2 (k - 1)``) round-table orders in which every
    ordered pair of positions is neighbours equally often (``b`` right after ``a``,
    clockwise), each turned through all ``k`` seats, so every position takes every seat
    equally often too (:data:`ROUND_TABLES`).

  ``rotations`` is the older cyclic schedule kept for comparison: ``k`` seatings, position
  ``i`` in seat ``(i + r) % k``; the clockwise order of a line-up never changes, so with 3
  or more seats pairwise figures measure who sits just before whom.
* **Same deals for every line-up.** Group ``g`` of every line-up uses the same seed,
  so all agents meet identical deals across the whole run.
* **Size.** A requested total of ``N`` rounds (or matches) becomes ``G = ceil(N / (L*S))``
  groups per line-up (``L`` line-ups, ``S`` seatings), i.e. ``L*S*G >= N`` units: rounded
  up to whole groups.
* **Chunks.** A chunk is a run of at most ``chunk_groups`` consecutive groups of one
  line-up. Chunks are numbered block by block: block ``b`` holds groups
  ``b*chunk_groups ..`` of every line-up, in line-up order, so chunk ``i`` is line-up
  ``i % L`` of block ``i // L``; a prefix of whole blocks covers every line-up on the same
  deals (what early stopping checks). A chunk's seeds depend only on the run seed and its
  group numbers, never on the number of workers or the backend.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from kc_sim.core.rng import derive
from kc_sim.runs import ChunkSpec, ScheduleInfo


#: round-table orders for 5 to 8 seats in which every ordered pair of positions (a, b)
#: is neighbours (b right after a) equally often: for a prime k the orders i -> i + d
#: (d = 1 .. k-1); for 6 and 8 seats found by a computer search (tests/tournament/test_seating.py
#: checks the balance). Six seats need two passes: no set of 5 orders covers each pair once.
ROUND_TABLES = {
    5: tuple(tuple(d * i % 5 for i in range(5)) for d in range(1, 5)),
    6: ((0, 3, 1, 2, 5, 4), (0, 3, 5, 2, 1, 4), (0, 2, 5, 1, 4, 3), (0, 1, 2, 4, 5, 3), (0, 5, 4, 3, 2, 1),
        (0, 2, 4, 1, 3, 5), (0, 1, 5, 3, 4, 2), (0, 4, 2, 3, 1, 5), (0, 4, 5, 1, 3, 2), (0, 5, 2, 3, 4, 1)),
    7: tuple(tuple(d * i % 7 for i in range(7)) for d in range(1, 7)),
    8: ((0, 5, 6, 3, 7, 2, 1, 4), (0, 4, 2, 3, 5, 7, 1, 6), (0, 3, 2, 7, 5, 4, 6, 1), (0, 7, 6, 2, 4, 1, 5, 3),
        (0, 6, 7, 4, 3, 1, 2, 5), (0, 2, 6, 5, 1, 3, 4, 7), (0, 1, 7, 3, 6, 4, 5, 2)),
}


@dataclass(frozen=True)
class Schedule:
    """Who plays whom, how often, and how the work is cut into chunks."""

    n_agents: int
    players: int                          # seats per table (k)
    lineups: tuple[tuple[int, ...], ...]  # agent indices by line-up position
    groups: int                           # deals (groups) per line-up
    chunk_groups: int                     # groups per chunk (the last chunk of a line-up may be shorter)
    seatings: tuple[tuple[int, ...], ...]  # seating q: line-up position q[s] sits in seat s
    seating: str = "balanced"             # which kind of seatings (SEATING_KINDS)

    @property
    def units(self) -> int:
        """Rounds (or matches) in the whole run."""
        return len(self.lineups) * self.groups * len(self.seatings)

    @property
    def blocks(self) -> int:
        """Blocks of chunks: each holds the same groups of every line-up."""
        return math.ceil(self.groups / self.chunk_groups)

    def chunks(self) -> list[ChunkSpec]:
        """Every chunk in index order: block by block, line-up by line-up inside a block; each
        group is played in every seating."""
        out, S = [], len(self.seatings)
        for start in range(0, self.groups, self.chunk_groups):
            stop = min(start + self.chunk_groups, self.groups)
            for li in range(len(self.lineups)):
                out.append(ChunkSpec(len(out), li, start, stop, (stop - start) * S))
        return out

    def info(self) -> ScheduleInfo:
        """The schedule as the run's manifest records it."""
        return ScheduleInfo(self.players, self.lineups, self.seating, self.seatings, self.groups, self.chunk_groups,
                            self.units, len(self.chunks()))


def seat_lineup(lineup, seating) -> tuple:
    """The line-up by seat in a seating: seat ``s`` holds line-up position ``seating[s]``."""
    return tuple(lineup[q] for q in seating)


def rotations(k: int) -> tuple[tuple[int, ...], ...]:
    """The cyclic seatings: in rotation ``r`` position ``i`` sits in seat ``(i + r) % k``."""
    return tuple(tuple((s - r) % k for s in range(k)) for r in range(k))


@functools.lru_cache(maxsize=None)
def balanced_seatings(k: int) -> tuple[tuple[int, ...], ...]:
    """The balanced seatings of ``k`` seats (see the module docstring): all ``k!`` orders
    for ``k <= 4``; else every order of :data:`ROUND_TABLES` turned through all ``k`` seats."""
    if k <= 4:
        return tuple(itertools.permutations(range(k)))
    return tuple(tuple(order[(s + r) % k] for s in range(k)) for order in ROUND_TABLES[k] for r in range(k))


def seatings_of(kind: str, k: int) -> tuple[tuple[int, ...], ...]:
    """The seatings of a schedule kind (one of :data:`~kc_sim.tournament.options.SEATING_KINDS`) for ``k`` seats."""
    return balanced_seatings(k) if kind == "balanced" else rotations(k)


def all_lineups(n_agents: int, players: int) -> tuple[tuple[int, ...], ...]:
    """Every combination of ``players`` agents out of ``n_agents``, in list order."""
    return tuple(itertools.combinations(range(n_agents), players))


def make_schedule(n_agents: int, players: int, units: int, chunk_units: int,
                  lineups=None, seating: str = "balanced") -> Schedule:
    """Plan ``units`` rounds (or matches) at least, spread evenly over the line-ups in
    whole groups (one deal in every seating), cut into chunks of about ``chunk_units``
    (the sizes checked by :class:`~kc_sim.tournament.options.TournamentOptions`)."""
    seatings = seatings_of(seating, players)
    lineups = all_lineups(n_agents, players) if lineups is None else tuple(tuple(x) for x in lineups)
    groups = math.ceil(units / (len(lineups) * len(seatings)))
    return Schedule(n_agents, players, lineups, groups, max(1, chunk_units // len(seatings)), seatings, seating)


@nb.njit(cache=True)
def _derive_range(seed, start, stop):
    out = np.empty(stop - start, dtype=np.int64)
    for i in range(start, stop):
        out[i - start] = derive(seed, i)
    return out


def group_seeds(run_seed: int, start: int, stop: int) -> np.ndarray:
    """Deal seeds of groups ``start`` .. ``stop - 1`` (int64): ``derive(run_seed, group)``,
    the same for every line-up."""
    return _derive_range(np.int64(run_seed), np.int64(start), np.int64(stop))
