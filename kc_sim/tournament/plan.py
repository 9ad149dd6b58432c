"""A tournament's configuration: agents loaded and sorted, labels, the default folder (the
options are checked before, by :class:`~kc_sim.tournament.options.TournamentOptions`).

:func:`make_plan` turns what a user asks for (agents, seats, size, rules, seed) into a
:class:`Plan`: the configuration that the manifest stores and that resuming compares,
and the schedule of line-ups, groups and chunks (:mod:`kc_sim.tournament.schedule`).
**The order agents are named in does not matter**: the plan sorts them by name (agent
index = place in that order), so ``greedy,merger`` and ``merger,greedy`` are the same
run, with the same line-ups, seatings, files and figures; :attr:`Plan.named` maps the
order given to the agent indices.
Agents are shown by a label: the agent's name (``Name`` for ``path/file.py:Name``),
``#2``, ``#3`` ... for repeated agents; :func:`base_label` undoes both.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.agents.names import short_name
from kc_sim.play.agents.registry import load_agent
from kc_sim.runs import RunConfig, RunSpec
from kc_sim.tournament.options import TournamentOptions
from kc_sim.tournament.schedule import Schedule, make_schedule
from kc_sim.tournament.sizes import CHUNK_MATCHES, CHUNK_ROUNDS
from kc_sim.runs import Until
from kc_sim.tournament.stopping import UNTIL_CHUNK_DIVISOR, UNTIL_MAX_FACTOR

#: default sizes: well under a minute on two cores for compiled agents
DEFAULT_ROUNDS = 200_000
DEFAULT_ROUNDS_PYTHON = 20_000
PYTHON_CHUNK_DIVISOR = 20


@dataclass
class Plan:
    """A run's configuration (what resume compares) and its schedule."""

    config: RunConfig
    schedule: Schedule
    specs: list                  # AgentSpec by agent index
    labels: list[str]            # unique display names by agent index
    load_names: list[str]        # names workers load (file paths made absolute)
    rules: RuleSet
    out: Path
    named: list[int]             # agent index of each agent in the order it was named
    until: Until | None = None   # stop early once decided (kc_sim.tournament.stopping)

    @property
    def mode(self) -> str:
        return self.config.mode

    @property
    def unit(self) -> str:
        return self.config.unit

    def run_spec(self) -> RunSpec:
        """What the run folder must know of this run (:class:`kc_sim.runs.RunFolder`)."""
        return RunSpec(self.out, self.config, self.schedule.info(), tuple(self.schedule.chunks()))


def _portable(name: str) -> str:
    """A load name that works from any working directory (``file.py:Name`` made absolute)."""
    path, sep, obj = name.rpartition(":")
    if sep and path.endswith(".py"):
        return f"{Path(path).resolve()}:{obj}"
    return name


def labels_of(specs) -> list[str]:
    """Unique display names: the agents' short names, then ``#2``, ``#3``... for repeats."""
    out, seen = [], {}
    for spec in specs:
        base = short_name(spec.name)
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return out


def default_out(labels, players: int, mode: str, units: int, seed: int, rules: RuleSet,
                until: Until | None = None) -> Path:
    """``results/<name>``: agents, seats, size, seed (and a rules tag unless classic). A run
    that stops early (``until``) is named by its rule and its cap, ``until-decided-max<N>r``,
    never by a size it may not play (plus a tag of ``--alpha`` and ``--precision`` when set)."""
    tag = "-".join(labels)
    tag = re.sub(r"[^A-Za-z0-9_.#-]+", "_", tag).replace("#", "_")
    if len(tag) > 60:
        tag = f"{tag[:40]}-{zlib.crc32(tag.encode()):08x}"
    size = f"{units}{'r' if mode == 'rounds' else 'm'}"
    if until is not None:
        size = f"until-decided-max{size}"
        if until != Until():
            size += f"-{zlib.crc32(repr(until.to_config()).encode()):08x}"
    name = f"{tag}_{players}p_{size}_s{seed}"
    if rules != RuleSet():
        name += f"_{zlib.crc32(rules.spec().encode()):08x}"
    return Path("results") / name


def _size(opts: TournamentOptions, compiled: bool) -> tuple[int, int]:
    """The number of rounds (or matches) and the chunk size, defaults filled in. With
    ``until`` the number is the most the run may play, by default ten times the usual size,
    and chunks are a fifth of their usual size so the stopping rule is checked often."""
    until = opts.until is not None
    count, chunk_size = opts.count, opts.chunk_size
    if count is None:
        count = (DEFAULT_ROUNDS if compiled else DEFAULT_ROUNDS_PYTHON) * (UNTIL_MAX_FACTOR if until else 1)
    if chunk_size is None:
        chunk_size = CHUNK_ROUNDS if opts.mode == "rounds" else CHUNK_MATCHES
        if not compiled:
            chunk_size //= PYTHON_CHUNK_DIVISOR     # Python agents are ~20x slower: keep chunks short
        if until:
            chunk_size = max(1, chunk_size // UNTIL_CHUNK_DIVISOR)
    return int(count), int(chunk_size)


def canonical_order(names) -> tuple[list[str], list[int]]:
    """The agents sorted by name (ties keep their order), and the sorted index of each
    agent as named: the run does not depend on the order of ``--agents``."""
    order = sorted(range(len(names)), key=lambda i: (_portable(names[i]), i))
    named = [0] * len(names)
    for new, old in enumerate(order):
        named[old] = new
    return [names[i] for i in order], named


def make_plan(opts: TournamentOptions) -> Plan:
    """The configuration and schedule of the run ``opts`` asks for (checked already:
    :class:`~kc_sim.tournament.options.TournamentOptions`); loading the agents here is what
    checks their names."""
    names, named = canonical_order(list(opts.agents))
    rs = parse_rules(opts.rules)
    specs = [load_agent(n) for n in names]
    players = opts.seats
    count, chunk_size = _size(opts, all(s.compiled for s in specs))
    lineups = opts.lineups
    if lineups is not None:
        lineups = sorted(tuple(sorted(named[i] for i in lu)) for lu in lineups)
    schedule = make_schedule(len(names), players, count, chunk_size, lineups, opts.seating)
    labels = labels_of(specs)
    seed = int(opts.seed)
    config = RunConfig(mode=opts.mode, agents=tuple(names), labels=tuple(labels), players=players, requested=count,
                       rules=rs.spec(), seed=seed, chunk_size=chunk_size, lineups=schedule.lineups,
                       seating=opts.seating, until=opts.until, luck=opts.luck)
    out = opts.out if opts.out is not None else default_out(labels, players, opts.mode, count, seed, rs, opts.until)
    return Plan(config, schedule, specs, labels, [_portable(n) for n in names], rs, out, named, opts.until)
