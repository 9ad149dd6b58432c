"""The tournament schedule: line-ups, seating rotations on duplicate deals, chunks and seeds.

* **Line-ups.** With ``k`` seats per table and ``n >= k`` agents, every combination of
  ``k`` agents (``itertools.combinations`` over the agents in the order given) is a
  line-up. A caller may also give the line-ups explicitly (``bench-agent`` does).
* **Rotation groups (duplicate deals).** A line-up plays in rotation groups. Group ``g``
  is ``k`` rounds (or ``k`` matches) on the *same* deal seed ``derive(run_seed, g)``:
  in rotation ``r`` (0..k-1) the agent at position ``i`` of the line-up sits in seat
  ``(i + r) % k``. The dealer is drawn from the deal seed, so all rotations share the
  deal and the dealer: every agent plays every seat's cards once, and seat advantage
  cancels within a group. Rotations are cyclic, so the clockwise order of a line-up
  is the same in every rotation.
* **Same deals for every line-up.** Group ``g`` of every line-up uses the same seed,
  so all agents meet identical deals across the whole run.
* **Size.** A requested total of ``N`` rounds (or matches) becomes ``G = ceil(N / (L*k))``
  groups per line-up (``L`` line-ups), i.e. ``L*k*G >= N`` units: rounded up to whole
  rotation groups.
* **Chunks.** A chunk is a run of at most ``chunk_groups`` consecutive groups of one
  line-up; chunks are numbered line-up by line-up. A chunk's seeds depend only on the
  run seed and its group numbers, never on the number of workers or the backend.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from kc_sim.core.rng import derive
from kc_sim.errors import UserError

#: default chunk sizes: rounds per chunk for single rounds, matches per chunk for matches
CHUNK_ROUNDS = 50_000
CHUNK_MATCHES = 5_000


@dataclass(frozen=True)
class Chunk:
    """Groups ``start`` .. ``stop - 1`` of line-up ``lineup``; ``index`` names its part file."""

    index: int
    lineup: int
    start: int
    stop: int

    @property
    def groups(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class Schedule:
    """Who plays whom, how often, and how the work is cut into chunks."""

    n_agents: int
    players: int                          # seats per table (k)
    lineups: tuple[tuple[int, ...], ...]  # agent indices by line-up position
    groups: int                           # rotation groups per line-up
    chunk_groups: int                     # groups per chunk (the last chunk of a line-up may be shorter)

    @property
    def units(self) -> int:
        """Rounds (or matches) in the whole run."""
        return len(self.lineups) * self.groups * self.players

    def chunks(self) -> list[Chunk]:
        """Every chunk, line-up by line-up, in index order."""
        out = []
        for li in range(len(self.lineups)):
            for start in range(0, self.groups, self.chunk_groups):
                out.append(Chunk(len(out), li, start, min(start + self.chunk_groups, self.groups)))
        return out

    def to_dict(self) -> dict:
        return {"players": self.players, "lineups": [list(x) for x in self.lineups],
                "groups_per_lineup": self.groups, "chunk_groups": self.chunk_groups,
                "units": self.units, "chunks": len(self.chunks())}


def rotate(lineup, rotation: int) -> tuple:
    """The line-up by seat in a rotation: position ``i`` sits in seat ``(i + rotation) % k``."""
    k = len(lineup)
    return tuple(lineup[(s - rotation) % k] for s in range(k))


def all_lineups(n_agents: int, players: int) -> tuple[tuple[int, ...], ...]:
    """Every combination of ``players`` agents out of ``n_agents``, in list order."""
    return tuple(itertools.combinations(range(n_agents), players))


def make_schedule(n_agents: int, players: int, units: int, chunk_units: int,
                  lineups=None) -> Schedule:
    """Plan ``units`` rounds (or matches) at least, spread evenly over the line-ups in
    whole rotation groups, cut into chunks of about ``chunk_units``."""
    if n_agents < 2:
        raise UserError(f"a tournament needs at least 2 agents, got {n_agents}")
    if players > n_agents:
        raise UserError(f"{players} players per table need at least {players} agents, got {n_agents}")
    if units < 1:
        raise UserError(f"bad number of rounds or matches {units}: expected a positive number")
    if chunk_units < 1:
        raise UserError(f"bad chunk size {chunk_units}: expected a positive number")
    lineups = all_lineups(n_agents, players) if lineups is None else tuple(tuple(x) for x in lineups)
    groups = math.ceil(units / (len(lineups) * players))
    return Schedule(n_agents, players, lineups, groups, max(1, chunk_units // players))


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
