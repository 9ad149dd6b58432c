"""The reference rules engine: a slow, plain reading of the rule book, used as the oracle.

The compiled core is fast and written on bit masks; this module is the second,
independent reading of docs/rules.md that tests and ``kc-sim check`` hold it against.
It is written for clarity: plain lists, one small function per rule, and a comment
quoting the rule each one implements. It uses only the card/pile names from
``kc_sim.game.cards`` and the switches of ``kc_sim.game.rules``; every rule is written here.

Ids (docs/formats.md): card ``c = suit * 13 + rank - 1`` (suits C D H S, rank 1 = A ... 13 = K);
piles 0 N, 1 E, 2 S, 3 W (sides), 4 NE, 5 SE, 6 SW, 7 NW (corners); actions
``c * 8 + p`` place card c on pile p, ``416 + s * 8 + p`` move side pile s onto pile p,
``448`` stop.
"""

from __future__ import annotations

from typing import NamedTuple

from kc_sim.errors import UserError
from kc_sim.game.cards import PILES, card_text
from kc_sim.game.rules import RuleSet

SIDES = (0, 1, 2, 3)
CORNERS = (4, 5, 6, 7)  # also the order kings fill empty corners: NE, SE, SW, NW
MOVE_BASE = 416
STOP = 448
HAND_SIZE = 7


# --- cards -----------------------------------------------------------------------------

def rank(card: int) -> int:
    """Rank 1 (ace) ... 13 (king)."""
    return card % 13 + 1


def is_red(card: int) -> bool:
    """'Red suits: hearts, diamonds.' (suit order C D H S: D = 1, H = 2)"""
    return card // 13 in (1, 2)


def is_king(card: int) -> bool:
    return rank(card) == 13


def fits_on(card: int, top: int) -> bool:
    """'"x fits on y" means: rank(x) = rank(y) - 1 and colour(x) != colour(y).
    Nothing fits on an ace: an ace closes its pile for placements.'"""
    return rank(card) == rank(top) - 1 and is_red(card) != is_red(top)


def card_penalty(card: int, scoring: str) -> int:
    """'10 for each king, 1 for every other card' (kings10);
    'K Q J 10, A 1, others their face value' (face)."""
    if scoring == "kings10":
        return 10 if is_king(card) else 1
    return 10 if rank(card) >= 10 else rank(card)


# --- action ids ------------------------------------------------------------------------

def place_action(card: int, pile: int) -> int:
    return card * 8 + pile


def move_action(side: int, pile: int) -> int:
    return MOVE_BASE + side * 8 + pile


def _action_name(action: int) -> str:
    """Short text of an action id for error messages (the record format lives in kc_sim.records.check)."""
    if 0 <= action < MOVE_BASE:
        return f"{card_text(action // 8)}>{PILES[action % 8]}"
    if MOVE_BASE <= action < STOP:
        return f"{PILES[(action - MOVE_BASE) // 8]}>{PILES[action % 8]}"
    return "stop" if action == STOP else f"#{action}"


class IllegalAction(Exception):
    """An action that is not legal in the current position; the message says which and why."""


class TurnLog(NamedTuple):
    """One finished turn: whose it was, what was drawn (or None), the place/move actions made."""

    seat: int
    drew: int | None
    actions: list[int]


# --- the round -------------------------------------------------------------------------

class RefRound:
    """One round of Kings in the Corner, stepped one action at a time.

    Read-only state: ``seat`` (whose turn), ``hands`` (sorted card ids per seat),
    ``piles`` (8 lists, base first), ``stock`` (next to draw first), ``drew`` (card drawn
    in the current turn so far), ``turn_actions`` (place/move actions of the current turn;
    stop is not listed, as in a game record), ``over``, ``winner``, ``end`` ('out' or
    'blocked'), ``penalties`` (set when over), ``turns`` (turns started, first = 1),
    ``history`` (a :class:`TurnLog` per finished turn, the last one included when the
    round ends). When the round ends, ``seat``/``drew``/``turn_actions`` stay those
    of the final turn.
    """

    def __init__(self, rules: RuleSet, players: int, dealer: int, deck: list[int]):
        deck = [int(c) for c in deck]
        _check_deck(rules, deck)
        rules.check_players(players)
        hands: list[list[int]] = [[] for _ in range(players)]
        # 'Deal 7 cards to each player, one at a time, clockwise from the dealer's left.'
        for i in range(HAND_SIZE * players):
            hands[(dealer + 1 + i) % players].append(deck[i])
        rest = deck[HAND_SIZE * players:]
        piles = _layout(rules, rest)  # takes the layout cards off the front of `rest`
        self._setup(rules, players, dealer, hands, piles, rest)

    @classmethod
    def from_position(cls, rules: RuleSet, players: int, dealer: int,
                      hands: list[list[int]], piles: list[list[int]], stock: list[int]) -> "RefRound":
        """A round from an explicit position right after the layout (piles base first,
        index = pile id; stock next-to-draw first); the first turn starts as in ``__init__``."""
        if len(hands) != players:
            raise UserError(f"bad position: {len(hands)} hands for {players} players")
        if len(piles) != 8:
            raise UserError(f"bad position: {len(piles)} piles, expected 8 (N E S W NE SE SW NW)")
        rules.check_players(players)
        self = cls.__new__(cls)
        self._setup(rules, players, dealer,
                    [[int(c) for c in h] for h in hands],
                    [[int(c) for c in p] for p in piles],
                    [int(c) for c in stock])
        return self

    def _setup(self, rules, players, dealer, hands, piles, stock) -> None:
        if not 0 <= dealer < players:
            raise UserError(f"bad dealer {dealer}: expected a seat 0..{players - 1}")
        self.rules = rules
        self.players = players
        self.dealer = dealer
        self.hands = [sorted(h) for h in hands]
        self.piles = piles
        self.stock = stock
        self.over = False
        self.winner: int | None = None
        self.end: str | None = None
        self.penalties: list[int] | None = None
        self.turns = 0
        self.history: list[TurnLog] = []
        self._idle_turns = 0  # consecutive idle turns just finished
        # 'The player left of the dealer plays first; play goes clockwise.'
        self.seat = (dealer + 1) % players
        self._start_turn()

    # --- queries ---

    @property
    def hand(self) -> list[int]:
        """The hand of the player whose turn it is."""
        return self.hands[self.seat]

    def can_place(self, card: int, pile: int) -> bool:
        """Place rule (card assumed in hand):
        'on a pile whose top it fits; a king on an empty corner (an empty corner takes
        nothing but a king); any card on an empty side (variant king_on_empty_side=false:
        any card but a king).'"""
        target = self.piles[pile]
        if target:
            return fits_on(card, target[-1])
        if pile in CORNERS:
            return is_king(card)
        return self.rules.king_on_empty_side or not is_king(card)

    def can_move_pile(self, side: int, pile: int) -> bool:
        """Move rule: 'Move a whole side pile onto any non-empty pile (side or corner) whose
        top its base fits; onto an empty corner, if its base is a king. Corner piles never
        move. A pile never moves onto an empty side.' (and never onto itself)"""
        moving = self.piles[side]
        if side not in SIDES or not moving or pile == side:
            return False
        target = self.piles[pile]
        if target:
            return fits_on(moving[0], target[-1])
        if pile in CORNERS:
            return is_king(moving[0])
        return False  # an empty side

    def can_stop(self) -> bool:
        """'Playing is never compulsory: you may stop at any time' -- except with
        must_play_kings: 'a turn may not end while the player holds a king and a corner is empty'."""
        if not self.rules.must_play_kings:
            return True
        holds_king = any(is_king(c) for c in self.hand)
        corner_empty = any(not self.piles[p] for p in CORNERS)
        return not (holds_king and corner_empty)

    def place_and_move_actions(self) -> set[int]:
        """Every legal place and move_pile action of the current player (stop not included)."""
        found = set()
        for card in set(self.hand):
            for pile in range(8):
                if self.can_place(card, pile):
                    found.add(place_action(card, pile))
        for side in SIDES:
            for pile in range(8):
                if self.can_move_pile(side, pile):
                    found.add(move_action(side, pile))
        return found

    def legal_actions(self) -> set[int]:
        """The legal action ids now; empty when the round is over."""
        if self.over:
            return set()
        found = self.place_and_move_actions()
        if self.can_stop():
            found.add(STOP)
        return found

    def penalty_of(self, seat: int) -> int:
        """'every player scores a penalty for the cards left in their hand'."""
        return sum(card_penalty(c, self.rules.scoring) for c in self.hands[seat])

    def why_illegal(self, action: int) -> str | None:
        """Why ``action`` is not legal now, or None if it is."""
        if self.over:
            return f"the round is over ({self.end})"
        if action == STOP:
            return None if self.can_stop() else (
                "must_play_kings: the turn may not end while the player holds a king and a corner is empty")
        if 0 <= action < MOVE_BASE:
            card, pile = divmod(action, 8)
            if card >= 52:
                return "no such card"
            if card not in self.hand:
                return f"{card_text(card)} is not in seat {self.seat}'s hand"
            if self.can_place(card, pile):
                return None
            target = self.piles[pile]
            if target:
                return f"{card_text(card)} does not fit on top {card_text(target[-1])} of {PILES[pile]}"
            if pile in CORNERS:
                return f"the empty corner {PILES[pile]} takes nothing but a king"
            return f"king_on_empty_side=false: the empty side {PILES[pile]} takes no king"
        if MOVE_BASE <= action < STOP:
            side, pile = divmod(action - MOVE_BASE, 8)
            if self.can_move_pile(side, pile):
                return None
            moving, target = self.piles[side], self.piles[pile]
            if not moving:
                return f"side {PILES[side]} is empty: nothing to move"
            if pile == side:
                return "a pile cannot move onto itself"
            if target:
                return (f"base {card_text(moving[0])} of {PILES[side]} does not fit on top "
                        f"{card_text(target[-1])} of {PILES[pile]}")
            if pile in CORNERS:
                return f"the empty corner {PILES[pile]} takes only a king-based pile"
            return f"a pile never moves onto an empty side ({PILES[pile]})"
        return "no such action id (expected 0..448)"

    # --- playing ---

    def play(self, action: int) -> None:
        """Make one action of the current player; 448 (stop) ends the turn."""
        action = int(action)
        reason = self.why_illegal(action)
        if reason is not None:
            raise IllegalAction(f"illegal action {_action_name(action)} (id {action}) "
                                f"by seat {self.seat} in turn {self.turns}: {reason}")
        if action == STOP:
            self._end_turn()
        elif action < MOVE_BASE:
            self._place(*divmod(action, 8))
        else:
            self._move_pile(*divmod(action - MOVE_BASE, 8))

    def _place(self, card: int, pile: int) -> None:
        self.hand.remove(card)  # one copy, with two decks
        self.piles[pile].append(card)
        self.turn_actions.append(place_action(card, pile))
        # 'If your hand is empty, the round ends at once: you do not draw.'
        if not self.hand:
            self._finish("out", self.seat)

    def _move_pile(self, side: int, pile: int) -> None:
        # 'order kept ... The side it leaves becomes empty.'
        self.piles[pile].extend(self.piles[side])
        self.piles[side] = []
        self.turn_actions.append(move_action(side, pile))

    def _draw(self) -> None:
        """'draw 1 card if the stock is not empty' ('An empty stock is not an error')."""
        if self.stock:
            card = self.stock.pop(0)
            self.hand.append(card)
            self.hand.sort()
            self.drew = card

    def _start_turn(self) -> None:
        self.turns += 1
        self.drew = None
        self.turn_actions: list[int] = []
        if self.rules.draw == "start":
            # 'start: draw 1 card at the start of your turn (if the stock is not empty), then act.'
            self._draw()
        elif self.rules.draw == "if_stuck" and not self.place_and_move_actions():
            # 'if_stuck: at the start of your turn, draw 1 card only if you have no legal action'
            self._draw()

    def _end_turn(self) -> None:
        if self.rules.draw == "end":
            # 'end: after your actions, or after stopping with none, draw 1 card if the stock is not empty.'
            self._draw()
        # 'Blocked: ... in one full cycle of turns, no player made any action.' A turn is
        # idle when the player neither acted nor drew; `players` idle turns in a row end the round.
        idle = not self.turn_actions and self.drew is None
        self._idle_turns = self._idle_turns + 1 if idle else 0
        if self._idle_turns >= self.players:
            self._finish("blocked", None)
            return
        self.history.append(TurnLog(self.seat, self.drew, list(self.turn_actions)))
        self.seat = (self.seat + 1) % self.players
        self._start_turn()

    def _finish(self, end: str, winner: int | None) -> None:
        """'every player scores a penalty for the cards left in their hand ... The winner scores 0.'"""
        self.history.append(TurnLog(self.seat, self.drew, list(self.turn_actions)))
        self.over = True
        self.end = end
        self.winner = winner
        self.penalties = [self.penalty_of(s) for s in range(self.players)]


# --- deal helpers ----------------------------------------------------------------------

def _check_deck(rules: RuleSet, deck: list[int]) -> None:
    """A deck holds every card id exactly ``rules.decks`` times."""
    want = 52 * rules.decks
    counts = [deck.count(c) for c in range(52)]
    if len(deck) != want or any(n != rules.decks for n in counts):
        raise UserError(f"bad deck: expected {want} cards, each of the 52 ids {rules.decks} time(s); "
                        f"got {len(deck)} cards")


def _layout(rules: RuleSet, rest: list[int]) -> list[list[int]]:
    """'Turn 4 cards from the stock face up onto N, E, S, W, in that order. Corners start empty.'
    With layout_kings=to_corner: 'a king turned up for the layout goes straight into the first
    empty corner in the order NE, SE, SW, NW, and the next stock card is turned up for that
    side ... (With two decks, a king that finds no empty corner stays on its side.)'
    Cards are taken off the front of ``rest``, which is left as the stock."""
    piles: list[list[int]] = [[] for _ in range(8)]
    for side in SIDES:
        card = rest.pop(0)
        while rules.layout_kings == "to_corner" and is_king(card):
            empty = [p for p in CORNERS if not piles[p]]
            if not empty:
                break
            piles[empty[0]].append(card)
            card = rest.pop(0)
        piles[side].append(card)
    return piles
