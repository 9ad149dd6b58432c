"""The worked examples of the rule book (docs/rules.md, Worked examples), one scripted
scenario each, played on both engines: the compiled core (through the step API of
kc_sim.play.table.game.Game) and the reference (kc_sim.game.reference.RefRound).

A scenario is a position (rule set, hands, piles base first, stock, dealer) and a script
of actions to play and checks to make. Every action of the script must be legal when it
is played; a check states what is legal or refused at that moment and what the table,
the hands, the stock and the result look like. Both engines must meet every check, so a
scenario failing on one engine only points at that engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kc_sim.errors import UserError
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.cards import PILES, parse_card, parse_pile
from kc_sim.game.reference import IllegalAction, RefRound
from kc_sim.game.rules import parse_rules
from kc_sim.play.table.game import Game, IllegalActionError


def cards(text: str) -> list[int]:
    """'7H TD KS' -> card ids; '' -> []."""
    return [parse_card(t) for t in text.split()]


@dataclass(frozen=True)
class Check:
    """What must hold at one point of a scenario; a field left at its default is not checked."""

    legal: tuple[str, ...] = ()          # each of these actions is legal
    illegal: tuple[str, ...] = ()        # each is not legal, and playing it is refused, position unchanged
    exactly: set[str] | None = None      # the whole set of legal actions
    moves: set[str] | None = None        # the whole set of legal pile moves
    onto: dict[str, set[str]] = field(default_factory=dict)  # pile -> every legal action targeting it
    piles: dict[str, str] = field(default_factory=dict)      # pile -> its cards, base first ('' = empty)
    hands: dict[int, str] = field(default_factory=dict)      # seat -> its cards, in any order
    stock: str | None = None             # the stock, next card to draw first
    drew: str | None = None              # the card drawn in the current turn so far; '' = none
    seat: int | None = None              # the seat to act (the last one to act once the round is over)
    turn_actions: int | None = None      # places and pile moves made in the current turn
    end: str | None = None               # 'on' (round goes on), 'out' or 'blocked'
    winner: int | None = None            # with end='out'; a round that is not out has no winner
    penalties: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Scenario:
    name: str                            # the example's title in docs/rules.md
    hands: tuple[str, ...]               # by seat
    piles: dict[str, str]                # pile -> cards base first; a pile not named is empty
    script: tuple[str | Check, ...]      # in order: an action text is played, a Check is made
    rules: str = "classic"
    stock: str = ""
    dealer: int | None = None            # None: the last seat deals, so seat 0 acts first

    @property
    def id(self) -> str:
        """'ex7' for the example itself, 'ex7-under-draw-end' for a variant of it."""
        number, variant = self.name.partition(".")[0], self.name.partition(": ")[2]
        return f"ex{number}" + (f"-{re.sub(r'[^a-z0-9]+', '-', variant.lower()).strip('-')}" if variant else "")


SCENARIOS = [
    # 1. Colours alternate, suits do not matter.
    #           N: -
    #   NW: -          NE: KS
    #   W: -                  E: -
    #   SW: -          SE: -
    #           S: -
    #   seat 0: QH JC JD QS 5D    seat 1: 2C    stock: -
    Scenario(
        "1. Colours alternate, suits do not matter",
        hands=("QH JC JD QS 5D", "2C"), piles={"NE": "KS"},
        script=(
            Check(legal=("QH>NE",), illegal=("QS>NE",), onto={"NE": {"QH>NE"}}),
            "QH>NE",
            Check(legal=("JC>NE",), illegal=("JD>NE",), onto={"NE": {"JC>NE"}}),
            "JC>NE",
            Check(piles={"NE": "KS QH JC"}, hands={0: "JD QS 5D"}, turn_actions=2, end="on"),
        ),
    ),
    # 2. Merge two piles, then reuse the freed side.
    #   N: 8C 7H   E: 9D   S: TC   W: JC   corners: -
    #   seat 0: 4S 3H 5C    seat 1: 2C    stock: -
    Scenario(
        "2. Merge two piles, then reuse the freed side",
        hands=("4S 3H 5C", "2C"), piles={"N": "8C 7H", "E": "9D", "S": "TC", "W": "JC"},
        script=(
            Check(moves={"N>E", "E>S"}),       # 8C fits 9D; (9D fits TC as well)
            "N>E",
            Check(piles={"N": "", "E": "9D 8C 7H"}, legal=("4S>N",)),
            "4S>N",
            "3H>N",
            Check(piles={"N": "4S 3H", "E": "9D 8C 7H"}, hands={0: "5C"}, turn_actions=3, end="on"),
        ),
    ),
    # 3. Part of a pile never moves.
    #   N: 8C 7H   E: 8D   S: TC   W: JC   corners: -
    #   seat 0: 2D 5C    seat 1: 2C    stock: -
    Scenario(
        "3. Part of a pile never moves",
        hands=("2D 5C", "2C"), piles={"N": "8C 7H", "E": "8D", "S": "TC", "W": "JC"},
        script=(
            # N's base 8C does not fit 8D, and no action id takes 7H off alone
            Check(moves=set(), illegal=("N>E",)),
        ),
    ),
    # 4. The last card ends the round, without a draw.
    #   N: 4S   E: 9D   S: TC   W: JC   corners: -
    #   seat 0: 3H    seat 1: 2C KD    stock: 9S 8S
    Scenario(
        "4. The last card ends the round, without a draw",
        hands=("3H", "2C KD"), piles={"N": "4S", "E": "9D", "S": "TC", "W": "JC"}, stock="9S 8S",
        script=(
            "3H>N",
            Check(end="out", winner=0, penalties=(0, 11), hands={0: ""}, piles={"N": "4S 3H"},
                  stock="9S 8S", drew="", seat=0, exactly=set(), illegal=("stop",)),
        ),
    ),
    # 5. A corner pile cannot move onto a queen.
    #           N: QH
    #   NW: -          NE: KS
    #   W: -                  E: KC
    #   SW: -          SE: -
    #           S: -
    #   seat 0: 5C    seat 1: 2C    stock: -
    Scenario(
        "5. A corner pile cannot move onto a queen",
        hands=("5C", "2C"), piles={"NE": "KS", "N": "QH", "E": "KC"},
        script=(
            # no move starts from NE; the king-based side pile E goes to empty corners only
            Check(moves={"N>E", "N>NE", "E>SE", "E>SW", "E>NW"}, illegal=("E>N",)),
            "E>SE",
            Check(piles={"E": "", "SE": "KC", "NE": "KS", "N": "QH"}, end="on"),
        ),
    ),
    # 6. Three cards in one turn.
    #   N: TS   E: 4H   S: 6C   W: JD   corners: -
    #   seat 0: 9H 3C KC    seat 1: 2D    stock: 5C
    Scenario(
        "6. Three cards in one turn",
        hands=("9H 3C KC", "2D"), piles={"N": "TS", "E": "4H", "S": "6C", "W": "JD"}, stock="5C",
        script=(
            Check(legal=("9H>N", "3C>E", "KC>NE", "KC>SE", "KC>SW", "KC>NW")),
            "9H>N",
            "3C>E",
            "KC>NE",
            # that was the whole hand: the round ends out in the same turn
            Check(piles={"N": "TS 9H", "E": "4H 3C", "NE": "KC"}, hands={0: ""}, seat=0, turn_actions=3,
                  end="out", winner=0, penalties=(0, 1), stock="5C", drew=""),
        ),
    ),
    # 7. Draw first, then build and refill (draw=start).
    #   N: 9S   E: 7C   S: QC   W: QD   corners: -
    #   seat 0: TD 2S    seat 1: 2C    stock: 8H 5D
    Scenario(
        "7. Draw first, then build and refill (`draw=start`)",
        rules="classic,draw=start",
        hands=("TD 2S", "2C"), piles={"N": "9S", "E": "7C", "S": "QC", "W": "QD"}, stock="8H 5D",
        script=(
            Check(drew="8H", hands={0: "TD 2S 8H"}, stock="5D", legal=("8H>N",)),
            "8H>N",
            Check(legal=("E>N",)),
            "E>N",
            Check(piles={"N": "9S 8H 7C", "E": ""}, legal=("TD>E",)),
            "TD>E",
            Check(piles={"N": "9S 8H 7C", "E": "TD"}, hands={0: "2S"}, drew="8H", turn_actions=3, end="on"),
        ),
    ),
    # 7, under draw=end: the same turn cannot use the 8H, which only arrives after the stop.
    #   N: 9S   E: 7C   S: QC   W: QD   corners: -
    #   seat 0: TD 2S    seat 1: 2C    stock: 8H 5D
    Scenario(
        "7. Draw first, then build and refill (`draw=start`): under draw=end the 8H comes after the stop",
        hands=("TD 2S", "2C"), piles={"N": "9S", "E": "7C", "S": "QC", "W": "QD"}, stock="8H 5D",
        script=(
            Check(drew="", hands={0: "TD 2S"}, stock="8H 5D", illegal=("8H>N",)),
            "stop",
            Check(seat=1, drew="", hands={0: "TD 2S 8H"}, stock="5D", piles={"N": "9S", "E": "7C"}),
        ),
    ),
    # 8. An ace closes a pile for placements, not for moves.
    #   N: 2D AC   E: 3C   S: 7H   W: -   corners: -
    #   seat 0: AD 3S KD 5C    seat 1: 2C    stock: -
    Scenario(
        "8. An ace closes a pile for placements, not for moves",
        hands=("AD 3S KD 5C", "2C"), piles={"N": "2D AC", "E": "3C", "S": "7H"},
        script=(
            Check(onto={"N": set()}, moves={"N>E"}, illegal=("N>S", "AD>N")),
            "N>E",
            Check(piles={"N": "", "E": "3C 2D AC"}, onto={"E": set()}),
        ),
    ),
    # 9. Penalties, out and blocked: seat 1 goes out.
    #   N: 6S   the rest: -
    #   seat 0: KS QD 2C    seat 1: 5H    stock: -
    Scenario(
        "9. Penalties, out and blocked: seat 1 goes out",
        hands=("KS QD 2C", "5H"), piles={"N": "6S"},
        script=(
            "stop",
            Check(seat=1, end="on", hands={0: "KS QD 2C"}),
            "5H>N",
            Check(end="out", winner=1, penalties=(12, 0)),
        ),
    ),
    # 9. Penalties, blocked: both stop without acting, the stock empty.
    #   every pile: -
    #   seat 0: KS QD 2C    seat 1: 5H 4D    stock: -
    Scenario(
        "9. Penalties, out and blocked: two idle turns block",
        hands=("KS QD 2C", "5H 4D"), piles={},
        script=(
            "stop",
            Check(seat=1, end="on"),
            "stop",
            Check(end="blocked", penalties=(12, 2), exactly=set()),
        ),
    ),
    # 9. Penalties under scoring=face: the same blocked round.
    #   every pile: -
    #   seat 0: KS QD 2C    seat 1: 5H 4D    stock: -
    Scenario(
        "9. Penalties, out and blocked: the blocked round under face scoring",
        rules="classic,scoring=face",
        hands=("KS QD 2C", "5H 4D"), piles={},
        script=("stop", "stop", Check(end="blocked", penalties=(22, 9))),
    ),
]


# --- one adapter per engine: build the position, list and play actions, read the round ---------

class CoreEngine:
    """The compiled core through kc_sim.play.table.game.Game."""

    refused = IllegalActionError

    def __init__(self, sc: Scenario):
        piles = [cards(sc.piles.get(p, "")) for p in PILES]
        self.g = Game.from_position([cards(h) for h in sc.hands], piles, cards(sc.stock),
                                    dealer=sc.dealer, rules=sc.rules)

    def legal(self) -> set[str]:
        return set(self.g.legal_texts())

    def play(self, action: str) -> None:
        self.g.play(action)

    def view(self) -> dict:
        g = self.g
        return dict(seat=g.seat, hands=[g.hand(s) for s in range(g.players)], piles=g.piles, stock=g.stock,
                    drew=g.drew, turn_actions=g.turn_actions, end=g.end if g.over else "on",
                    winner=g.winner, penalties=g.penalties)


class RefEngine:
    """The reference engine, kc_sim.game.reference.RefRound."""

    refused = IllegalAction

    def __init__(self, sc: Scenario):
        players = len(sc.hands)
        dealer = players - 1 if sc.dealer is None else sc.dealer
        piles = [cards(sc.piles.get(p, "")) for p in PILES]
        self.r = RefRound.from_position(parse_rules(sc.rules), players, dealer,
                                        [cards(h) for h in sc.hands], piles, cards(sc.stock))

    def legal(self) -> set[str]:
        return {action_text(a) for a in self.r.legal_actions()}

    def play(self, action: str) -> None:
        self.r.play(parse_action(action))

    def view(self) -> dict:
        r = self.r
        return dict(seat=r.seat, hands=[sorted(h) for h in r.hands], piles=[list(p) for p in r.piles],
                    stock=list(r.stock), drew=r.drew, turn_actions=len(r.turn_actions),
                    end=r.end if r.over else "on", winner=r.winner,
                    penalties=None if r.penalties is None else list(r.penalties))


ENGINES = {"core": CoreEngine, "reference": RefEngine}


def is_move(action: str) -> bool:
    return action.split(">")[0] in PILES


def target(action: str) -> str | None:
    return action.split(">")[1] if ">" in action else None


def verify(eng, check: Check, step: int) -> None:
    """Make every check of ``check`` on ``eng``; ``step`` (the script index) names it in messages."""
    legal, view = eng.legal(), eng.view()
    at = f"at step {step}"
    for a in check.legal:
        assert a in legal, f"{at}: {a} should be legal; legal: {sorted(legal)}"
    for a in check.illegal:
        assert a not in legal, f"{at}: {a} should be illegal"
        with pytest.raises(eng.refused):
            eng.play(a)
        assert eng.view() == view, f"{at}: the refused {a} changed the round"
    if check.exactly is not None:
        assert legal == check.exactly, at
    if check.moves is not None:
        assert {a for a in legal if is_move(a)} == check.moves, at
    for pile, want in check.onto.items():
        assert {a for a in legal if target(a) == pile} == want, f"{at}: actions onto {pile}"
    for pile, want in check.piles.items():
        assert view["piles"][parse_pile(pile)] == cards(want), f"{at}: pile {pile}"
    for seat, want in check.hands.items():
        assert view["hands"][seat] == sorted(cards(want)), f"{at}: hand of seat {seat}"
    if check.stock is not None:
        assert view["stock"] == cards(check.stock), f"{at}: stock"
    if check.drew is not None:
        assert view["drew"] == (parse_card(check.drew) if check.drew else None), f"{at}: card drawn"
    if check.seat is not None:
        assert view["seat"] == check.seat, f"{at}: seat to act"
    if check.turn_actions is not None:
        assert view["turn_actions"] == check.turn_actions, f"{at}: actions this turn"
    if check.end is not None:
        assert view["end"] == check.end, f"{at}: end of the round"
        assert view["winner"] == (check.winner if check.end == "out" else None), f"{at}: winner"
    if check.penalties is not None:
        assert view["penalties"] == list(check.penalties), f"{at}: penalties"


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda sc: sc.id)
def test_worked_example(scenario: Scenario, engine: str):
    eng = ENGINES[engine](scenario)
    for step, item in enumerate(scenario.script):
        if isinstance(item, Check):
            verify(eng, item, step)
        else:
            assert item in eng.legal(), f"step {step}: {item} should be legal; legal: {sorted(eng.legal())}"
            eng.play(item)
    assert isinstance(scenario.script[-1], Check), "a scenario ends with a check of its outcome"


RULES_DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def test_every_worked_example_of_the_rule_book_has_a_scenario():
    """Each '### n. title' of the Worked examples section names a scenario (a variant adds ': ...')."""
    section = RULES_DOC.read_text(encoding="utf-8").split("## Worked examples", 1)[1].split("\n## ", 1)[0]
    titles = re.findall(r"^### (\d+\. .+)$", section, flags=re.M)
    assert len(titles) == 9
    examples = [sc.name.partition(": ")[0] for sc in SCENARIOS]
    assert [t for t in titles if t not in examples] == [], "a worked example has no scenario"
    assert [e for e in examples if e not in titles] == [], "a scenario names no worked example"


@pytest.mark.parametrize("corner", PILES[4:])
def test_no_action_id_moves_a_corner(corner):
    """Example 5 goes further than the texts: a move from a corner cannot even be written."""
    with pytest.raises(UserError, match="corner piles never move"):
        parse_action(f"{corner}>N")
