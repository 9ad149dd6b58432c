"""The conformance check for agents: :func:`check_agent` (also ``kc-sim bench-agent --check``).

Run it on your own agent before you trust its numbers. It checks three things:

1. **Legal under every variant.** The agent plays rounds under every combination of the
   round switches (draw timing, where layout kings go, kings on empty sides, one or two
   decks, must-play-kings, scoring: 96 rule sets), taking the seats and the player
   counts (2 to 4, up to 8 with two decks) in turn, against ``random``. An illegal or malformed action, an exception
   or a round that never ends fails the check with the agent's one-line fault. Compiled agents play in the generic
   compiled loop, which checks every action, the built-ins' too.
2. **Reproducible.** The same seeds played twice give the same rounds.
3. **Blind to hidden cards** (compiled policies, which are handed the whole state): at
   every decision of the agent, shuffling the cards it cannot see (the other hands and the
   stock) must change neither its action nor its memory. Python agents are given only
   their seat's :class:`~kc_sim.play.table.view.SeatView`, so they cannot look.

:func:`round_rule_sets` (the 96 rule sets) and :func:`permute_hidden` are the pieces the
project's own tests use too.
"""

from __future__ import annotations

import itertools
import tempfile
from dataclasses import dataclass, field

import numpy as np

from kc_sim.core import layout
from kc_sim.core.legal import is_legal
from kc_sim.core.loop import MAX_DECISIONS, seed_policies
from kc_sim.core.policy import MEM_SIZE, random_policy
from kc_sim.core.step import apply, deal, first_dealer
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text
from kc_sim.game.rules import DRAW, LAYOUT_KINGS, SCORING, RuleSet
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.runner import play_rounds

#: every combination of the switches that change a round (the match switch does not)
ROUND_SWITCHES = list(itertools.product(DRAW, LAYOUT_KINGS, (True, False), (1, 2), (False, True), SCORING))


def round_rule_sets() -> list[RuleSet]:
    """Every combination of the round switches (96 rule sets)."""
    return [RuleSet(draw=d, layout_kings=lk, king_on_empty_side=ks, decks=dk, must_play_kings=mk, scoring=sc)
            for d, lk, ks, dk, mk, sc in ROUND_SWITCHES]


def permute_hidden(st: np.ndarray, seat: int, rng) -> np.ndarray:
    """A copy of the state ``st`` in which the cards ``seat`` cannot see (the other hands,
    the rest of the stock) are shuffled among the other hands (same sizes) and the stock."""
    out = st.copy()
    players = int(st[layout.PLAYERS])
    others = [s for s in range(players) if s != seat]
    cards = [c for s in others for plane in range(2) for c in range(52) if int(st[layout.HAND + 2 * s + plane]) >> c & 1]
    pos, n = int(st[layout.STOCK_POS]), int(st[layout.STOCK_LEN])
    cards += [int(c) for c in st[layout.STOCK + pos:layout.STOCK + n]]
    rng.shuffle(cards)
    k = 0
    for s in others:
        out[layout.HAND + 2 * s] = out[layout.HAND + 2 * s + 1] = 0
        for _ in range(int(st[layout.HAND_N + s])):
            bit = 1 << cards[k]
            k += 1
            out[layout.HAND + 2 * s + (1 if out[layout.HAND + 2 * s] & bit else 0)] |= bit
    out[layout.STOCK + pos:layout.STOCK + n] = cards[k:]
    return out


@dataclass
class CheckReport:
    """What :func:`check_agent` found: ``passed``, and one line per check in ``lines``."""

    agent: str
    passed: bool = True
    lines: list[str] = field(default_factory=list)
    failure: str | None = None

    def fail(self, what: str) -> None:
        if self.passed:
            self.passed, self.failure = False, what
        self.lines.append(f"FAILED {what}")

    def __str__(self) -> str:
        return "\n".join([f"check of {self.agent}: {'passed' if self.passed else 'FAILED'}", *self.lines])


def _seatings(rules: RuleSet, i: int) -> int:
    """The player count of the ``i``-th rule set's rounds: 2 to 4 in turn (to 8 with two decks)."""
    counts = range(2, rules.max_players + 1)
    return counts[i % len(counts)]


def check_agent(name, rounds: int = 8, seed: int = 0, permuted_rounds: int = 3) -> CheckReport:
    """Check the agent called ``name`` (any name ``kc-sim`` takes): legal under every
    variant, reproducible, blind to hidden cards (see the module doc). ``rounds`` rounds
    per rule set and seat count; ``permuted_rounds`` rounds per rule set stepped one
    decision at a time for the hidden-cards check. Returns a :class:`CheckReport`."""
    spec = load_agent(name)
    report = CheckReport(spec.name)
    random_spec = load_agent("random")
    sets = round_rule_sets()
    # the generic loop checks every action, a trusted built-in's too (the loop compiled for a
    # set of built-ins does not), and is compiled once for every agent checked
    engine = "generic" if spec.compiled else "auto"
    played = 0
    with tempfile.TemporaryDirectory(prefix="kc-check-") as faults:
        for i, rules in enumerate(sets):
            k = _seatings(rules, i)
            seat = i % k
            table = [random_spec] * k
            table[seat] = spec
            seeds = np.arange(seed + i * rounds, seed + (i + 1) * rounds, dtype=np.int64)
            try:
                first = play_rounds(table, seeds, rules, fault_dir=faults, engine=engine)
                again = play_rounds(table, seeds, rules, fault_dir=faults, engine=engine)
            except UserError as e:              # AgentFault: one line with the seed and the action
                report.fail(f"legal play under {rules.spec()} with {k} players, seat {seat}: {e}")
                return report
            played += 2 * len(seeds)
            if not np.array_equal(first, again):
                report.fail(f"reproducible: the same seeds under {rules.spec()} ({k} players) gave other rounds")
                return report
    report.lines.append(f"legal and reproducible: {played:,} rounds under all {len(sets)} round rule sets, "
                        "seats and player counts in turn (2 to 4, to 8 with two decks)")
    if spec.compiled:
        checked = _hidden_cards(spec, sets, permuted_rounds, seed, report)
        if report.passed:
            report.lines.append(f"blind to hidden cards: {checked:,} decisions unchanged when the unseen cards "
                                "are shuffled")
    else:
        report.lines.append("blind to hidden cards: a Python agent sees only its seat's SeatView")
    return report


def _hidden_cards(spec, sets, rounds: int, seed: int, report: CheckReport) -> int:
    """Step rounds decision by decision; at each of the agent's decisions compare its
    action and memory on the real state and on two states with the hidden cards shuffled."""
    rng = np.random.default_rng(seed)
    checked = 0
    for i, rules in enumerate(sets):
        codes = rules.codes()
        k = _seatings(rules, i)
        seat = i % k
        for r in range(rounds):
            round_seed = seed + 10_000 + i * rounds + r
            st = np.zeros(layout.STATE_SIZE, np.int64)
            deal(st, round_seed, k, first_dealer(round_seed, k), codes)
            mem = np.zeros((layout.MAX_SEATS, MEM_SIZE), np.int64)
            seed_policies(mem, round_seed, k)
            for _ in range(MAX_DECISIONS):
                if st[layout.DONE]:
                    break
                s = int(st[layout.SEAT])
                if s != seat:
                    apply(st, random_policy(st, s, mem[s]))
                    continue
                before = mem[s].copy()
                a = spec.policy(st, s, mem[s])
                for _ in range(2):
                    m2 = before.copy()
                    a2 = spec.policy(permute_hidden(st, s, rng), s, m2)
                    if a2 != a or not np.array_equal(m2, mem[s]):
                        what = (f"chose {_text(a2)} instead of {_text(a)}" if a2 != a else
                                "changed its memory differently")
                        report.fail(f"blind to hidden cards: under {rules.spec()} ({k} players, seed {round_seed}, "
                                    f"turn {int(st[layout.TURNS])}) the agent {what} when the cards it cannot see "
                                    "were shuffled")
                        return checked
                checked += 1
                if not is_legal(st, a):         # the legal-play check has already failed on this
                    return checked
                apply(st, a)
    return checked


def _text(action: int) -> str:
    try:
        return action_text(int(action))
    except ValueError:
        return f"the bad action id {int(action)}"
