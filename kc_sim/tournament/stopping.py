"""Early stopping (``--until decided``): the anytime-valid rule, checked block by block.

**The rule.** Chunks come in blocks (:mod:`kc_sim.tournament.schedule`): block ``b`` is the
same deals for every line-up. After each block, in block order, every pair of agents that
meet gets one observation per deal of the block: its per-deal paired score
(:func:`kc_sim.stats.pair_deal_scores`, the share of the deal's rounds, over all its
seatings and line-ups, in which the first agent finished ahead; ties count half). Deals are
independent, so these scores feed an anytime-valid confidence sequence per pair
(:class:`kc_sim.stats.sequential.StopRule`, Bonferroni over the pairs). The run stops after the
first block at which every pair is decided: its sequence excludes 0.5 (one agent is ahead)
or is narrower than ``precision`` (the difference is measured well enough); or when the
schedule's maximum size is played.

**Determinism.** Which blocks are taken depends only on their results, never on the order
chunks finish in, the number of workers or the backend; a resumed run replays the rule over
the stored parts and stops at the same block. Chunks played beyond the stop (in flight when
it came) are removed, so the files hold exactly the blocks taken.
"""

from __future__ import annotations

import itertools
import numpy as np

from kc_sim.errors import UserError
from kc_sim.runs import RunReader, ScheduleInfo, StopInfo, Until, layout
from kc_sim.runs.manifest import PairStop
from kc_sim.runs.schema import AGENT, PENALTY, TOTAL, seat_agents, seat_arrays, seat_names
from kc_sim.stats.sequential import StopRule
from kc_sim.stats import pair_deal_scores

#: with --until, chunks are smaller so the rule is checked often (a fifth of the default)
UNTIL_CHUNK_DIVISOR = 5
#: the default maximum size with --until: this many times the default size of a run
UNTIL_MAX_FACTOR = 10


def meeting_pairs(lineups) -> list[tuple[int, int]]:
    """Every pair of agents (lower index first) that share a line-up."""
    return sorted({pair for lu in lineups for pair in itertools.combinations(sorted(lu), 2)})


class Stopper:
    """The rule of the module docstring over one run: fed chunk results as they arrive
    (:meth:`chunk_done`), it takes whole blocks in order (:meth:`advance`) and says after
    how many blocks the run stops (:attr:`stopped_at`) and why (:attr:`reason`). Made from
    a run's plan (:meth:`of_plan`) while it plays, or from a stored run (:meth:`of_run`) to
    feed the rule again with its parts, as the run fed it."""

    def __init__(self, labels, mode: str, schedule: ScheduleInfo, until: Until, reader: RunReader):
        self.labels = list(labels)
        self.mode = mode                     # "rounds" or "matches": which parts and values feed the rule
        self.reader = reader                 # the run folder's parts, for a resumed run
        self.players = schedule.players
        self.lineups = schedule.lineups
        self.seatings = schedule.seatings
        self.n_lineups = len(schedule.lineups)
        self.blocks = schedule.chunks // self.n_lineups     # chunk i is line-up i % L of block i // L
        self.rule = StopRule(meeting_pairs(schedule.lineups), until.alpha, until.precision)
        self.taken = 0                       # blocks fed to the rule
        self.stopped_at: int | None = None   # blocks in the run once it stops
        self.reason = ""
        self._held: dict[int, tuple] = {}    # chunk index -> (group, seat_agent, score values)

    @classmethod
    def of_plan(cls, plan, until: Until, reader: RunReader) -> Stopper:
        """The rule of a run about to play (:class:`~kc_sim.tournament.plan.Plan`), reading
        the chunks an earlier run of the same command stored through ``reader``."""
        return cls(plan.labels, plan.mode, plan.schedule.info(), until, reader)

    @classmethod
    def of_run(cls, reader: RunReader) -> Stopper:
        """The rule of a stored run, from its manifest (its ``until``, else the default level)."""
        m = reader.manifest
        if m.schedule is None:
            raise UserError(f"{reader.path}: its {layout.MANIFEST_FILE} records no schedule, so the stopping rule "
                            "cannot be fed again; rerun the run's command with this kc-sim")
        return cls(m.labels, m.mode, m.schedule, m.config.until or Until(), reader)

    def chunk_done(self, index: int, res) -> None:
        """Keep what the rule needs of a chunk a worker just returned (a
        :class:`~kc_sim.tournament.worker.ChunkResult`)."""
        lineup = self.lineups[index % self.n_lineups]
        if res.matches is not None:
            m = res.matches
            self._held[index] = (m["group"], seat_agents(lineup, self.seatings, m["seating"]), m["total"])
        else:
            r = res.rounds
            self._held[index] = (r["group"], seat_agents(lineup, self.seatings, r["seating"]), r["penalty"])

    def _read(self, index: int) -> tuple:
        """What the rule needs of a stored chunk (of an earlier, interrupted run of the same
        command, or of a run fed again)."""
        k = self.players
        matches = self.mode == "matches"
        values = TOTAL if matches else PENALTY
        t = self.reader.table(layout.MATCHES if matches else layout.ROUNDS, index,
                              ["group", *seat_names(AGENT, k), *seat_names(values, k)])
        agents, vals = seat_arrays(t, k, values, {name: i for i, name in enumerate(self.labels)})
        return t.column("group").to_numpy(), agents, vals

    def advance(self, done) -> bool:
        """Take every complete block not yet taken, in order, until the rule stops the run;
        ``done(index)`` says whether a chunk is stored. True once the run is stopped."""
        L = self.n_lineups
        while self.stopped_at is None and self.taken < self.blocks:
            block = range(self.taken * L, (self.taken + 1) * L)
            if not all(done(i) for i in block):
                break
            parts = [self._held.pop(i) if i in self._held else self._read(i) for i in block]
            group, agents, values = (np.concatenate(x) for x in zip(*parts))
            _, scores, _ = pair_deal_scores(group, agents, values, self.rule.pairs)
            self.rule.update(scores)
            self.taken += 1
            decision = self.rule.decision(self.labels)
            if decision.done:
                self.stopped_at, self.reason = self.taken, decision.reason
        if self.stopped_at is None and self.taken == self.blocks:
            self.stopped_at = self.blocks
            self.reason = "maximum size reached; " + self.rule.decision(self.labels).reason
        return self.stopped_at is not None

    def beyond(self) -> list[int]:
        """Chunk indices after the stop (to be removed or never played)."""
        return list(range(self.stopped_at * self.n_lineups, self.blocks * self.n_lineups))

    def to_manifest(self) -> StopInfo:
        """The stop as the manifest records it."""
        d = self.rule.decision(self.labels)
        labels = self.labels
        return StopInfo(self.stopped_at, d.deals, self.reason,
                        tuple(PairStop((labels[p.pair[0]], labels[p.pair[1]]), p.n, p.mean, p.lo, p.hi, p.status)
                              for p in d.pairs))
