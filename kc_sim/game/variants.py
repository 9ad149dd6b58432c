"""The rule variants as numbers: one IntEnum per multi-valued switch, the match target,
and where each round switch sits in the int64 rule vector the compiled core reads.

This is the contract between the rule set (``kc_sim.game.rules``, which parses the
text form and builds the vector with ``RuleSet.codes()``) and the compiled core, which
compares the vector's entries with these members (numba freezes IntEnum members as
compile-time constants, so ``rule == Draw.START`` costs what ``rule == 1`` does). The
text names of the values are the members' names in lower case, so the order of the
names and the numbers cannot drift apart.
"""

from __future__ import annotations

from enum import IntEnum

#: the match switch's points limit: to_25 ends and eliminate_25 drops a player at this total
MATCH_TARGET = 25


class Draw(IntEnum):
    """When the player draws: after stopping, before the turn, or before the turn when
    stuck (no placement and no pile move)."""

    END = 0
    START = 1
    IF_STUCK = 2


class LayoutKings(IntEnum):
    """A king turned up for the layout stays on its side, or goes to the first empty corner."""

    STAY = 0
    TO_CORNER = 1


class Scoring(IntEnum):
    """Penalty per card left in hand: kings 10 and others 1, or face values."""

    KINGS10 = 0
    FACE = 1


class MatchKind(IntEnum):
    """How a match ends: someone reaches the target, a fixed number of rounds, or the last
    player below the target remains."""

    TO_25 = 0
    ROUNDS = 1
    ELIMINATE_25 = 2


def names(enum) -> tuple[str, ...]:
    """The text names of an enum's values, in value order (``Draw`` -> end, start, if_stuck)."""
    members = sorted(enum, key=int)
    assert [int(m) for m in members] == list(range(len(members))), f"{enum.__name__} values must be 0..n-1"
    return tuple(m.name.lower() for m in members)


assert names(MatchKind) == (f"to_{MATCH_TARGET}", "rounds", f"eliminate_{MATCH_TARGET}")

#: Index of each round switch in the int64 array handed to the compiled core.
R_DRAW, R_LAYOUT_KINGS, R_KING_ON_EMPTY_SIDE, R_DECKS, R_MUST_PLAY_KINGS, R_SCORING = range(6)
N_RULE_CODES = 6
