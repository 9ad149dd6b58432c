"""What a seat may see: :class:`SeatView`, a fast, lazily decoded observation, given to
Python agents and returned by ``Game.observe()``.

The compiled core copies the visible part of a round (the acting seat's own hand, every
pile, the stock size, hand sizes, the turn so far and the legal action ids) into a small
int64 buffer (:func:`fill_view`); :class:`SeatView` keeps that buffer and decodes a field
only when the agent reads it. It holds nothing else: no other hand, no stock order.

The buffer is an ``array.array`` of int64 (reading it gives Python ints; ``struct``
turns a run of it into a tuple in one call): the view's own (``from_state``), or, in the
Python round loop, its agent's buffer, which the loop refills at that agent's next
decision; a view the agent keeps past ``act`` is first given its own copy
(:func:`freeze`), so a view always shows the decision it was made for. The compiled
side writes the own cards as sorted ids, so ``hand`` is one read too.

Fields: ``seat``, ``players``, ``dealer``, ``rules``, ``hand``, ``piles``, ``stock_size``,
``hand_sizes``, ``turn_actions``, ``drew``, ``legal``, ``legal_text``, ``scores``, plus
cheap mask forms for array code (``hand_mask``, ``pile_masks``, ``tops``, ``bases``).
"""

from __future__ import annotations

import array
import struct

import numba as nb
import numpy as np

from kc_sim.core import layout as L
from kc_sim.core.bits import lowest
from kc_sim.core.ids import place_id
from kc_sim.core.legal import move_mask, place_mask, stop_legal
from kc_sim.game.actions import action_text
from kc_sim.game.cards import N_CARDS, PILES, RANK, card_text

# --- the visible-state buffer (int64) -----------------------------------------------------
V_SEAT, V_PLAYERS, V_STOCK, V_TURN_ACTIONS, V_DREW, V_HAND, V_HAND2, V_NLEGAL = range(8)
V_DEALER = 8            # the seat that dealt this round
V_HAND_N = 9            # + seat: hand sizes (MAX_SEATS)
V_PILE_MASK = V_HAND_N + L.MAX_SEATS   # + p
V_PILE_BASE = V_PILE_MASK + L.N_PILES  # + p
V_PILE_TOP = V_PILE_BASE + L.N_PILES   # + p
V_NHAND = V_PILE_TOP + L.N_PILES       # number of own cards (a card held twice counts twice)
V_HAND_IDS = V_NHAND + 1               # own card ids, ascending (MAX_STOCK places: any hand fits)
V_LEGAL = V_HAND_IDS + L.MAX_STOCK     # legal action ids, ascending
VIEW_SIZE = V_LEGAL + L.N_ACTIONS


@nb.njit(cache=True)
def fill_view(st, vis):
    """Copy what the seat to act may see into ``vis``; returns the number of legal actions.

    The legal ids are those of ``legal_mask``, ascending (tests/core/test_enumerator.py):
    the placements card by card from the 8 ``place_mask``s (held in a tuple, no array),
    then the bits of ``move_mask``, then stop. Own card ids and legal ids left from a
    longer list at the buffer's last use are zeroed, so it holds this view and nothing else."""
    old_hand = min(max(vis[V_NHAND], 0), L.MAX_STOCK)
    old = min(max(vis[V_NLEGAL], 0), L.N_ACTIONS)
    seat = st[L.SEAT]
    players = st[L.PLAYERS]
    vis[V_SEAT] = seat
    vis[V_PLAYERS] = players
    vis[V_STOCK] = st[L.STOCK_LEN] - st[L.STOCK_POS]
    vis[V_DEALER] = st[L.DEALER]
    vis[V_TURN_ACTIONS] = st[L.TURN_ACTIONS]
    vis[V_DREW] = st[L.DREW]
    hand = st[L.HAND + 2 * seat]
    hand2 = st[L.HAND + 2 * seat + 1]
    vis[V_HAND] = hand
    vis[V_HAND2] = hand2
    h = V_HAND_IDS
    m = hand
    while m:
        c = lowest(m)
        m &= m - 1
        vis[h] = c
        h += 1
        if (hand2 >> c) & 1:
            vis[h] = c
            h += 1
    vis[V_NHAND] = h - V_HAND_IDS
    for i in range(h, V_HAND_IDS + old_hand):
        vis[i] = 0
    for s in range(L.MAX_SEATS):
        vis[V_HAND_N + s] = st[L.HAND_N + s] if s < players else 0
    for p in range(L.N_PILES):
        vis[V_PILE_MASK + p] = st[L.PILE_MASK + p]
        vis[V_PILE_BASE + p] = st[L.PILE_BASE + p]
        vis[V_PILE_TOP + p] = st[L.PILE_TOP + p]
    n = V_LEGAL
    if not st[L.DONE]:
        pm = (place_mask(st, hand, 0), place_mask(st, hand, 1), place_mask(st, hand, 2),
              place_mask(st, hand, 3), place_mask(st, hand, 4), place_mask(st, hand, 5),
              place_mask(st, hand, 6), place_mask(st, hand, 7))
        m = pm[0] | pm[1] | pm[2] | pm[3] | pm[4] | pm[5] | pm[6] | pm[7]
        while m:
            c = lowest(m)
            m &= m - 1
            for p in range(L.N_PILES):
                if (pm[p] >> c) & 1:
                    vis[n] = place_id(c, p)
                    n += 1
        mm = move_mask(st)
        while mm:
            vis[n] = L.MOVE_BASE + lowest(mm)
            mm &= mm - 1
            n += 1
        if stop_legal(st):
            vis[n] = L.STOP
            n += 1
    vis[V_NLEGAL] = n - V_LEGAL
    for i in range(n, V_LEGAL + old):
        vis[i] = 0
    return n - V_LEGAL


# --- decoding in Python ------------------------------------------------------------------
_SUIT_CARDS: list = []      # [suit][13-bit mask] -> card ids, built on first use
_NEG_RANK = [-int(RANK[c]) for c in range(N_CARDS)]
ACTION_TEXT = tuple(action_text(a) for a in range(L.N_ACTIONS))
#: ``_UNPACK[n](buf, offset)``: n int64 of a buffer (offset in bytes) read straight into a tuple
_UNPACK: list = []
#: piles by card mask, base first: the same few thousand runs recur (cleared past _PILES_CAP)
_PILES: dict = {0: ()}
_PILES_CAP = 1 << 16


def unpackers() -> list:
    """``_UNPACK``, built on first use (struct's C reader is the fastest way from an int64
    buffer to a tuple of Python ints: one call, no intermediate list)."""
    if not _UNPACK:
        _UNPACK[:] = [struct.Struct(f"{n}q").unpack_from for n in range(VIEW_SIZE + 1)]
    return _UNPACK


def _suit_cards() -> list:
    offsets = [tuple(i for i in range(13) if m >> i & 1) for m in range(1 << 13)]
    _SUIT_CARDS[:] = [[tuple(13 * s + o for o in offs) for offs in offsets] for s in range(4)]
    return _SUIT_CARDS


def mask_cards(m: int) -> tuple[int, ...]:
    """The card ids of a 52-bit mask, ascending (table lookups, no 52-step loop)."""
    t = _SUIT_CARDS or _suit_cards()
    return t[0][m & 8191] + t[1][(m >> 13) & 8191] + t[2][(m >> 26) & 8191] + t[3][(m >> 39) & 8191]


def pile_cards(m: int) -> tuple[int, ...]:
    """The cards of a pile's mask, base first (ranks descend from the base); remembered."""
    pile = _PILES.get(m)
    if pile is None:
        pile = tuple(sorted(mask_cards(m), key=_NEG_RANK.__getitem__))
        if len(_PILES) >= _PILES_CAP:
            _PILES.clear()
            _PILES[0] = ()
        _PILES[m] = pile
    return pile


class _lazy:
    """A field decoded on first read, then stored on the instance (a plain attribute after)."""

    def __init__(self, fn):
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        value = self.fn(obj)
        obj.__dict__[self.name] = value
        return value


def view_buffer() -> array.array:
    """An empty view buffer: VIEW_SIZE int64 in an ``array.array``, so reading it gives
    Python ints (``np.frombuffer(buf, np.int64)`` is the same memory, for compiled code)."""
    return array.array("q", bytes(8 * VIEW_SIZE))


def freeze(view: SeatView) -> None:
    """Give ``view`` its own copy of its buffer (exactly the view's fields and legal ids),
    so it outlives the buffer's next fill."""
    v = view._v
    view._v = v[:V_LEGAL + v[V_NLEGAL]]


class SeatView:
    """What the seat to act may see, decoded lazily. Seats are round seats (0 .. players-1,
    play clockwise by increasing seat); cards are ids (``kc_sim.game.cards``), actions are ids
    (``kc_sim.game.actions``)."""

    # slots for the four fields every view sets (a quarter of the cost of making one, which
    # the Python loop does at every decision); the lazy fields and an agent's own go in __dict__
    __slots__ = ("_v", "rules", "scores", "legal", "__dict__", "__weakref__")

    def __init__(self, v, rules, scores: tuple = (), legal: tuple | None = None):
        """``v``: the view buffer (an ``array.array`` of int64 in :func:`fill_view`'s layout,
        at least ``V_LEGAL + n`` long); ``legal``: its legal ids as a tuple, if at hand."""
        self._v = v
        self.rules = rules
        #: penalty totals so far in the match, by round seat (zeros outside a match)
        self.scores = scores
        #: the legal action ids, ascending (placements, pile moves, then stop if allowed)
        self.legal = legal if legal is not None else (_UNPACK or unpackers())[v[V_NLEGAL]](v, 8 * V_LEGAL)

    @classmethod
    def from_state(cls, st, rules, scores=()) -> "SeatView":
        """The view of the seat to act in a core state (e.g. ``Game.state``)."""
        buf = view_buffer()
        n = fill_view(st, np.frombuffer(buf, dtype=np.int64))
        return cls(buf[:V_LEGAL + n], rules, tuple(scores))

    @classmethod
    def from_game(cls, game, scores=()) -> "SeatView":
        """The view of the seat to act in a :class:`kc_sim.play.table.game.Game`."""
        return cls.from_state(game.state, game.rules, scores)

    # header fields: plain reads of the buffer
    @property
    def seat(self) -> int:
        """The seat this view belongs to (the seat to act)."""
        return self._v[V_SEAT]

    @property
    def players(self) -> int:
        return self._v[V_PLAYERS]

    @property
    def dealer(self) -> int:
        """The seat that dealt this round (the seat after it played first)."""
        return self._v[V_DEALER]

    @property
    def stock_size(self) -> int:
        """Cards left in the stock (its order is hidden)."""
        return self._v[V_STOCK]

    @property
    def turn_actions(self) -> int:
        """Place/move actions made so far this turn."""
        return self._v[V_TURN_ACTIONS]

    @property
    def drew(self) -> int | None:
        """The card this seat drew this turn so far (draw=start / if_stuck), or None."""
        d = self._v[V_DREW]
        return d if d >= 0 else None

    @property
    def hand_mask(self) -> int:
        """Own cards held at least once, as a 52-bit mask (second copies: ``hand_mask2``)."""
        return self._v[V_HAND]

    @property
    def hand_mask2(self) -> int:
        """Own cards held twice (two decks only)."""
        return self._v[V_HAND2]

    # decoded fields
    @_lazy
    def legal_text(self) -> tuple[str, ...]:
        """The legal actions as text (``7H>E``, ``N>E``, ``stop``), in the order of ``legal``."""
        return tuple([ACTION_TEXT[a] for a in self.legal])

    @_lazy
    def hand(self) -> tuple[int, ...]:
        """Own cards, sorted ids (a card held twice is listed twice)."""
        v = self._v
        return (_UNPACK or unpackers())[v[V_NHAND]](v, 8 * V_HAND_IDS)

    @_lazy
    def hand_sizes(self) -> tuple[int, ...]:
        """Number of cards in every hand, by seat."""
        v = self._v
        return (_UNPACK or unpackers())[v[V_PLAYERS]](v, 8 * V_HAND_N)

    @_lazy
    def pile_masks(self) -> tuple[int, ...]:
        """The 8 piles as card masks (N E S W NE SE SW NW)."""
        return (_UNPACK or unpackers())[L.N_PILES](self._v, 8 * V_PILE_MASK)

    @_lazy
    def tops(self) -> tuple[int, ...]:
        """Top card of each pile, -1 for an empty pile."""
        return (_UNPACK or unpackers())[L.N_PILES](self._v, 8 * V_PILE_TOP)

    @_lazy
    def bases(self) -> tuple[int, ...]:
        """Base card of each pile, -1 for an empty pile."""
        return (_UNPACK or unpackers())[L.N_PILES](self._v, 8 * V_PILE_BASE)

    @_lazy
    def piles(self) -> tuple[tuple[int, ...], ...]:
        """The 8 piles' cards, base first (ranks descend from the base)."""
        get = _PILES.get
        masks = (_UNPACK or unpackers())[L.N_PILES](self._v, 8 * V_PILE_MASK)
        return tuple([p if (p := get(m)) is not None else pile_cards(m) for m in masks])

    def __repr__(self) -> str:
        piles = " ".join(f"{PILES[p]}:{''.join(card_text(c) for c in pile)}" for p, pile in enumerate(self.piles) if pile)
        return (f"SeatView(seat={self.seat}, hand={' '.join(card_text(c) for c in self.hand)}, piles={piles}, "
                f"stock={self.stock_size}, hand_sizes={self.hand_sizes}, legal={' '.join(self.legal_text)})")
