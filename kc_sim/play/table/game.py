"""A Python step API over the compiled core, for Python agents, people, environments
and tests: one round, played one action at a time.

    g = Game(players=2, rules="classic", seed=7)
    while not g.over:
        g.play(g.legal_actions()[0])
    g.penalties
"""

from __future__ import annotations

import numpy as np

from kc_sim.core import layout as L
from kc_sim.core.legal import is_legal, legal_mask
from kc_sim.core.step import (
    add_to_hand,
    apply,
    clear_table,
    deal_stock,
    first_dealer,
    open_turn,
    put_on_pile,
    shuffle_stock,
    stop,
)
from kc_sim.errors import UserError
from kc_sim.game import cards
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.table.position import game_svg
from kc_sim.play.table.view import SeatView


class IllegalActionError(UserError):
    """An action that is not legal in the current position."""


def _mask_cards(lo: int, hi: int) -> list[int]:
    return sorted(cards.mask_to_cards(lo) + cards.mask_to_cards(hi))


class Game:
    """One round over the compiled core. Actions are docs/formats.md ids (or their text)."""

    def __init__(self, players: int = 2, rules: str | RuleSet = "classic", seed: int = 0, dealer: int | None = None):
        self.rules = parse_rules(rules)
        self.rules.check_players(players)
        self.seed = int(seed)
        self.state = np.zeros(L.STATE_SIZE, dtype=np.int64)
        if dealer is None:
            dealer = int(first_dealer(self.seed, players))
        self._check_dealer(dealer, players)
        shuffle_stock(self.state, self.seed, self.rules.decks)
        self._start(players, dealer)

    def _start(self, players: int, dealer: int) -> None:
        """Deal the stock area, keep the dealt position as ``initial``, open the first turn."""
        deal_stock(self.state, players, dealer, self.rules.codes())
        self.initial = self.snapshot()
        open_turn(self.state)
        self._mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)

    @staticmethod
    def _check_dealer(dealer, players):
        if not 0 <= dealer < players:
            raise UserError(f"bad dealer {dealer}: expected a seat from 0 to {players - 1}")

    @classmethod
    def from_deck(cls, deck, players: int, dealer: int, rules: str | RuleSet = "classic") -> "Game":
        """A round dealt from an explicit deck order (deck[0] dealt first)."""
        g = cls.__new__(cls)
        g.rules = parse_rules(rules)
        g.rules.check_players(players)
        cls._check_dealer(dealer, players)
        g.seed = -1
        g.state = np.zeros(L.STATE_SIZE, dtype=np.int64)
        deck = np.asarray(deck, dtype=np.int64)
        if len(deck) != 52 * g.rules.decks:
            raise UserError(f"bad deck: {len(deck)} cards, expected {52 * g.rules.decks}")
        g.state[L.STOCK:L.STOCK + len(deck)] = deck
        g.state[L.STOCK_LEN] = len(deck)
        g._start(players, dealer)
        return g

    @classmethod
    def from_position(cls, hands, piles, stock, dealer: int | None = None, rules: str | RuleSet = "classic") -> "Game":
        """A round from an explicit position right after the layout (hands by seat, 8 piles
        base first, stock next card first); the first turn starts for the dealer's left
        (by default the dealer is the last seat, so seat 0 acts first). Cards may be ids or text."""
        g = cls.__new__(cls)
        g.rules = parse_rules(rules)
        players = len(hands)
        dealer = players - 1 if dealer is None else dealer
        g.rules.check_players(players)
        cls._check_dealer(dealer, players)
        g.seed = -1
        st = g.state = np.zeros(L.STATE_SIZE, dtype=np.int64)
        ids = lambda xs: [int(c) if isinstance(c, (int, np.integer)) else cards.parse_card(c) for c in xs]
        stock = ids(stock)
        st[L.STOCK:L.STOCK + len(stock)] = stock
        st[L.STOCK_LEN] = len(stock)
        clear_table(st, players, dealer, g.rules.codes())
        for seat, hand in enumerate(hands):
            for c in ids(hand):
                add_to_hand(st, seat, c)
        for p, pile in enumerate(piles):
            for c in ids(pile):
                put_on_pile(st, p, c)
        g.initial = g.snapshot()
        open_turn(st)
        g._mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
        return g

    @classmethod
    def mid_turn(cls, hands, piles, stock, seat: int, rules: str | RuleSet = "classic", *, turn_actions: int = 0,
                 drew: int | None = None, idle: int = 0) -> "Game":
        """A round at a position inside the turn of ``seat``, that turn already opened (nothing
        is drawn): hands by seat, 8 piles base first, the stock next card first, the actions
        the seat has made this turn, the card it drew (None: none) and the idle turns in a row
        before it (the blocked-round count). The dealer (which no rule of a round reads) is
        the seat to its right; ``initial`` is this position. What a search starts from when it
        knows only a seat's view (kc_sim.env.openspiel_game.state_from_view)."""
        players = len(hands)
        g = cls.from_position(hands, piles, [], dealer=(seat - 1) % players, rules=rules)
        st = g.state                     # from_position opened the turn of ``seat`` with an empty stock
        stock = [int(c) if isinstance(c, (int, np.integer)) else cards.parse_card(c) for c in stock]
        st[L.STOCK:L.STOCK + len(stock)] = stock
        st[L.STOCK_POS] = 0
        st[L.STOCK_LEN] = len(stock)
        st[L.TURN_ACTIONS] = turn_actions
        st[L.DREW] = -1 if drew is None else int(drew)
        st[L.IDLE] = idle
        g.initial = g.snapshot()
        return g

    def redeal_hidden(self, hands: dict, stock) -> None:
        """Give the seats of ``hands`` (seat -> cards) these hands and make ``stock`` the cards
        still to draw (next first), in place: what a search does to sample the cards a seat
        cannot see. Each hand keeps its size and the stock its length (a UserError otherwise)."""
        st = self.state
        pos, n = int(st[L.STOCK_POS]), int(st[L.STOCK_LEN])
        if len(stock) != n - pos:
            raise UserError(f"redeal: {len(stock)} stock cards for a stock of {n - pos}")
        for s, hand in hands.items():
            if len(hand) != int(st[L.HAND_N + s]):
                raise UserError(f"redeal: {len(hand)} cards for seat {s}, who holds {int(st[L.HAND_N + s])}")
        for s, hand in hands.items():
            st[L.HAND + 2 * s] = st[L.HAND + 2 * s + 1] = 0
            st[L.HAND_N + s] = 0
            for c in hand:
                add_to_hand(st, s, c)
        st[L.STOCK + pos:L.STOCK + n] = stock

    # --- reading the round -------------------------------------------------------
    @property
    def players(self) -> int:
        return int(self.state[L.PLAYERS])

    @property
    def seat(self) -> int:
        """The seat to act."""
        return int(self.state[L.SEAT])

    @property
    def dealer(self) -> int:
        return int(self.state[L.DEALER])

    @property
    def over(self) -> bool:
        return bool(self.state[L.DONE])

    @property
    def winner(self) -> int | None:
        w = int(self.state[L.WINNER])
        return w if w >= 0 else None

    @property
    def end(self) -> str | None:
        """``out``, ``blocked``, or None while the round goes on."""
        return L.END_NAMES[int(self.state[L.END])] if self.over else None

    @property
    def penalties(self) -> list[int] | None:
        """Every seat's penalty once the round is over."""
        if not self.over:
            return None
        return [int(x) for x in self.state[L.PENALTY:L.PENALTY + self.players]]

    @property
    def turns(self) -> int:
        return int(self.state[L.TURNS])

    @property
    def drew(self) -> int | None:
        """Card drawn during the current turn so far, if any."""
        d = int(self.state[L.DREW])
        return d if d >= 0 else None

    @property
    def turn_actions(self) -> int:
        return int(self.state[L.TURN_ACTIONS])

    def hand(self, seat: int) -> list[int]:
        """A seat's cards, sorted ids (both copies listed with two decks)."""
        i = L.HAND + 2 * seat
        return _mask_cards(int(self.state[i]), int(self.state[i + 1]))

    def pile(self, p: int) -> list[int]:
        """Pile p's cards, base first (ranks descend from the base)."""
        return sorted(cards.mask_to_cards(int(self.state[L.PILE_MASK + p])), key=lambda c: -cards.RANK[c])

    @property
    def piles(self) -> list[list[int]]:
        return [self.pile(p) for p in range(8)]

    @property
    def stock(self) -> list[int]:
        """The stock, next card to draw first (hidden from players)."""
        return [int(c) for c in self.state[L.STOCK + self.state[L.STOCK_POS]:L.STOCK + self.state[L.STOCK_LEN]]]

    def legal_mask(self) -> np.ndarray:
        """Boolean vector of length 449 over the action ids of docs/formats.md."""
        legal_mask(self.state, self._mask)
        return self._mask.copy()

    def legal_actions(self) -> list[int]:
        """Legal action ids, ascending."""
        legal_mask(self.state, self._mask)
        return [int(a) for a in np.flatnonzero(self._mask)]

    def legal_texts(self) -> list[str]:
        return [action_text(a) for a in self.legal_actions()]

    def observe(self, scores=()) -> SeatView:
        """What the seat to act may see (its hand, the piles, stock size, hand sizes, the
        legal actions): the same view Python agents get. ``scores``: match totals by seat."""
        return SeatView.from_game(self, scores)

    # --- playing -------------------------------------------------------------------
    def play(self, action: int | str) -> tuple[bool, int | None]:
        """Apply a legal action (id or text); stop ends the turn and starts the next one.

        Returns (closed, drew): whether the action ended the turn (a stop, or the last card
        of the hand) and the card drawn in that turn (None if none), which callers that log
        turns need before the next turn opens. An illegal action raises
        :class:`IllegalActionError` saying why (:func:`why_illegal`), nothing applied."""
        a = parse_action(action) if isinstance(action, str) else int(action)
        legal = not self.over and 0 <= a < L.N_ACTIONS and is_legal(self.state, a)
        reason = None if legal else why_illegal(self, a)
        if reason is not None:
            text = action_text(a) if 0 <= a < L.N_ACTIONS else str(a)
            listed = f"; legal: {' '.join(self.legal_texts())}" if not self.over else ""
            raise IllegalActionError(f"illegal action {text} for seat {self.seat}: {reason}{listed}")
        if a == L.STOP:
            drew = int(stop(self.state))          # the card the closed turn drew, read before the next opens
            return True, (drew if drew >= 0 else None)
        apply(self.state, a)
        return (True, self.drew) if self.over else (False, None)

    def _repr_svg_(self) -> str:
        """The position as SVG, every hand shown (Jupyter draws a ``Game`` with it)."""
        return game_svg(self)

    def _repr_html_(self) -> str:
        """The SVG picture inside a ``<div>`` (front ends that prefer HTML)."""
        return f"<div>{self._repr_svg_()}</div>"

    def snapshot(self) -> dict:
        """Dealer, hands, piles and stock as lists of card ids (``initial`` is the one right after the layout)."""
        return {
            "dealer": self.dealer,
            "hands": [self.hand(s) for s in range(self.players)],
            "piles": self.piles,
            "stock": self.stock,
        }


def why_illegal(game: Game, a: int) -> str | None:
    """Why action ``a`` is not legal now, in words for a person (``kc-sim play``, ``kc-sim
    replay``, :meth:`Game.play`), or None if it is. The verdict is the compiled core's
    (``is_legal``); the reference engine keeps its own reading
    (``kc_sim.game.reference.RefRound.why_illegal``), and a test holds the two to the same verdicts."""
    a = int(a)
    if game.over:
        return "the round is over"
    if not 0 <= a < L.N_ACTIONS:
        return f"no such action id {a} (expected 0 to {L.N_ACTIONS - 1})"
    if is_legal(game.state, a):
        return None
    if a == L.STOP:
        return "you may not stop while you hold a king and a corner is empty (must_play_kings=true)"
    if a < L.MOVE_BASE:
        c, p = divmod(a, 8)
        if c not in game.hand(game.seat):
            return f"{cards.card_text(c)} is not in your hand (your hand: {cards.hand_text(game.hand(game.seat))})"
        target = game.pile(p)
        if target:
            top = target[-1]
            if cards.RANK[top] == 1:
                return f"nothing goes on an ace: {cards.PILES[p]}'s top is {cards.card_text(top)}"
            return (f"{cards.card_text(c)} does not fit on {cards.PILES[p]}'s top {cards.card_text(top)} "
                    f"(it takes a {'red' if cards.card_text(top)[1] in 'CS' else 'black'} "
                    f"{'A23456789TJQK'[int(cards.RANK[top]) - 2]})")
        if p >= 4:
            return f"the empty corner {cards.PILES[p]} takes nothing but a king"
        return f"the empty side {cards.PILES[p]} takes no king (king_on_empty_side=false)"
    s, p = divmod(a - L.MOVE_BASE, 8)
    moving, target = game.pile(s), game.pile(p)
    if not moving:
        return f"side {cards.PILES[s]} is empty: there is no pile to move"
    if s == p:
        return "a pile cannot move onto itself"
    if target:
        return f"{cards.PILES[s]}'s base {cards.card_text(moving[0])} does not fit on {cards.PILES[p]}'s top {cards.card_text(target[-1])}"
    if p >= 4:
        return f"only a pile whose base is a king may move into the empty corner {cards.PILES[p]}"
    return f"a pile never moves onto an empty side ({cards.PILES[p]})"
