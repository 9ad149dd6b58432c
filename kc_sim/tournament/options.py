"""What a tournament is asked for: one frozen object, checked once.

:class:`TournamentOptions` holds every option of ``kc-sim tournament`` (and of
``bench-agent``, and of a Python caller of :func:`kc_sim.tournament.run.run_tournament`),
each checked in one place, :meth:`TournamentOptions.__post_init__`, so the rest of a run
(the plan, the schedule, the backends, the watchdog) takes them as given. What a person
types as text (``--until decided``, ``--precision 0.5pp``, ``--alpha``, ``--max-rounds``)
is turned into typed values by :meth:`TournamentOptions.create`, which then builds the
object. Checking the options loads nothing heavy (no numba, no agent): the command line
checks them before it starts its workers. What only the agents can say - whether a name is
an agent, and the default size of a run of Python agents - is settled by the plan
(:func:`kc_sim.tournament.plan.make_plan`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.play.agents.names import parse_agent_list
from kc_sim.processes.backends import BACKENDS
from kc_sim.processes.watchfile import DEFAULT_DECISION_TIMEOUT
from kc_sim.runs import Until
from kc_sim.runs.manifest import DEFAULT_ALPHA
from kc_sim.stats.sequential import parse_precision

__all__ = ["SEATING_KINDS", "UNTIL_CHOICES", "TournamentOptions"]

SEATING_KINDS = ("balanced", "rotations")
UNTIL_CHOICES = ("decided",)


@dataclass(frozen=True)
class TournamentOptions:
    """The options of one tournament (module doc). ``rounds`` is the most a run with
    ``until`` plays; ``lineups`` are agent indices in the order the agents are named;
    ``command`` is the command line as typed (kept in the manifest)."""

    agents: tuple[str, ...]
    players: int | None = None
    rounds: int | None = None
    matches: int | None = None
    rules: str = "classic"
    seed: int = 0
    jobs: int | None = None
    backend: str = "loky"
    scheduler: str | None = None
    out: Path | None = None
    records: int = 0
    chunk_size: int | None = None
    lineups: tuple[tuple[int, ...], ...] | None = None
    seating: str = "balanced"
    until: Until | None = None
    quiet: bool = False
    wait: bool = False
    decision_timeout: float = DEFAULT_DECISION_TIMEOUT
    command: str | None = None
    summary: bool = True            # write summary.parquet (and return the table)
    luck: bool = False              # also compute the draw control variates (luck-adjusted estimates)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise UserError(f"unknown backend {self.backend!r}: expected one of {', '.join(BACKENDS)}")
        if self.scheduler and self.backend != "dask":
            raise UserError("--scheduler needs --backend dask")
        if self.records < 0:
            raise UserError(f"bad --records {self.records}: expected 0 or more")
        if self.jobs is not None and int(self.jobs) != -1 and int(self.jobs) < 1:
            raise UserError(f"bad --jobs {self.jobs}: expected a positive number (or -1 for every core)")
        t = self.decision_timeout
        if not isinstance(t, (int, float)) or not t > 0 or t == float("inf"):
            raise UserError(f"bad --decision-timeout {t}: expected a positive number of seconds, e.g. 60")
        if len(self.agents) < 2:
            raise UserError(f"a tournament needs at least 2 agents (--agents a,b,...), got {len(self.agents)}")
        rules = parse_rules(self.rules)
        if not 0 <= int(self.seed) < 2 ** 63:
            raise UserError(f"bad --seed {self.seed}: expected an integer from 0 to 2**63 - 1")
        if self.players is not None:
            rules.check_players(self.players)
            if self.players > len(self.agents):
                fill = [self.agents[i % len(self.agents)] for i in range(self.players)]
                raise UserError(f"--players {self.players} needs at least {self.players} agents, got "
                                f"{len(self.agents)}: name an agent more than once to seat copies of it "
                                f"(--agents {','.join(fill)})")
        if self.rounds is not None and self.matches is not None:
            raise UserError("give --rounds or --matches, not both")
        count = self.matches if self.matches is not None else self.rounds
        if count is not None and count < 1:
            what = "max-rounds" if self.until is not None and self.matches is None else self.mode
            raise UserError(f"bad --{what} {count}: expected a positive number")
        if self.chunk_size is not None and self.chunk_size < 1:
            raise UserError(f"bad chunk size {self.chunk_size}: expected a positive number")
        if self.seating not in SEATING_KINDS:
            raise UserError(f"bad --seating {self.seating!r}: expected one of {', '.join(SEATING_KINDS)}")
        if self.luck and (self.mode != "rounds" or rules.draw == "if_stuck"):
            raise UserError("--luck needs single rounds (--rounds) under draw=end or draw=start: the draw control "
                            "variates are not computed for matches or draw=if_stuck")
        for lu in self.lineups or ():
            k = self.seats
            if len(lu) != k or len(set(lu)) != k or not all(0 <= i < len(self.agents) for i in lu):
                raise UserError(f"bad line-up {lu}: expected {k} different agent indices")

    @classmethod
    def create(cls, agents, *, rounds=None, max_rounds=None, until=None, precision=None, alpha=None,
               backend=None, scheduler=None, decision_timeout=None, lineups=None, out=None, **options):
        """The options of what a person (or a Python caller) asked for, as typed: ``agents``
        a comma-separated string or a list; ``until`` ``"decided"`` or None, with its
        ``precision`` (text such as ``0.5pp``) and ``alpha``; with ``until`` the size is
        ``max_rounds`` (``rounds`` is refused); ``backend`` None is dask with a
        ``scheduler``, else loky; ``decision_timeout`` None is the default. Every check is
        :meth:`__post_init__`'s, but for these texts."""
        if until is None:
            if max_rounds is not None:
                raise UserError("--max-rounds caps a run that stops early: give it with --until decided "
                                "(or use --rounds)")
        else:
            if rounds is not None:
                raise UserError("with --until decided the size is a maximum: give --max-rounds instead of --rounds")
            rounds = max_rounds
        return cls(agents=tuple(parse_agent_list(agents)), rounds=rounds, until=parse_until(until, precision, alpha),
                   backend=backend or ("dask" if scheduler else "loky"), scheduler=scheduler,
                   decision_timeout=DEFAULT_DECISION_TIMEOUT if decision_timeout is None else _seconds(decision_timeout),
                   lineups=None if lineups is None else tuple(tuple(int(i) for i in lu) for lu in lineups),
                   out=None if out is None else Path(out), **options)

    @property
    def mode(self) -> str:
        """``rounds`` or ``matches``."""
        return "matches" if self.matches is not None else "rounds"

    @property
    def count(self) -> int | None:
        """The rounds or matches asked for (with ``until``, the most); None: the default."""
        return self.matches if self.matches is not None else self.rounds

    @property
    def seats(self) -> int:
        """Seats per table: ``players``, else as many as agents, at most 4 (and as the rules allow)."""
        if self.players is not None:
            return self.players
        return min(len(self.agents), 4, parse_rules(self.rules).max_players)

    @property
    def jobs_given(self) -> bool:
        """Whether ``jobs`` names a number of processes (None or -1: the default, every core)."""
        return self.jobs is not None and int(self.jobs) != -1

    @property
    def processes(self) -> int:
        """The playing processes ``jobs`` asks for (None or -1: every core)."""
        return int(self.jobs) if self.jobs_given else os.cpu_count() or 1


def _seconds(value) -> float:
    """``--decision-timeout`` as a number (a bad one is left for the check to name)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def parse_until(until, precision=None, alpha=None) -> Until | None:
    """``--until decided [--precision 0.5pp] [--alpha 0.05]`` checked; None without ``--until``."""
    if until is None:
        if precision is not None or alpha is not None:
            raise UserError("--precision and --alpha set when to stop early: give them with --until decided")
        return None
    if until not in UNTIL_CHOICES:
        raise UserError(f"bad --until {until!r}: expected decided")
    a = DEFAULT_ALPHA if alpha is None else float(alpha)
    if not 0 < a < 1:
        raise UserError(f"bad --alpha {alpha}: expected a level between 0 and 1, e.g. 0.05")
    return Until(a, None if precision is None else parse_precision(precision))
