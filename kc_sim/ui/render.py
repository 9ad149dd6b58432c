"""The table as text, from one seat's point of view: used by ``kc-sim play``, ``kc-sim
replay`` and the PettingZoo environment's ``render()``.

:func:`render_table` draws the cross (N E S W) and the corners (NE SE SW NW) with each
pile's base, top and size, the stock size, one line per seat (name, cards in hand,
score, dealer and to-play marks) and the viewer's own hand sorted by rank. Other hands
are shown as sizes only, unless ``reveal`` is set (a finished round, a replay)::

    NW  (empty)            N   9D..7C    [3]       NE  KS        [1]
    W   8C        [1]          stock 18            E   TD..9S    [2]
    SW  (empty)            S   4H        [1]       SE  (empty)

:func:`move_lines` numbers the legal actions with what each one does, for a person.
"""

from __future__ import annotations

from kc_sim.core import layout as L
from kc_sim.game.actions import action_text
from kc_sim.game.cards import PILES, RANK, SUIT, card_text, hand_text, sort_hand
from kc_sim.records.untrusted import display_text

__all__ = ["render_table", "pile_text", "hand_text", "sort_hand", "move_lines", "describe_action", "RULE"]

RULE = "-" * 72
_CELL = 24
#: the 3 x 3 grid of the table: pile index, or None for the middle (the stock)
_GRID = ((7, 0, 4), (3, None, 1), (6, 2, 5))


def pile_text(pile) -> str:
    """One pile: ``9D..7C [3]`` (base..top [size]), ``8C [1]``, or ``(empty)``."""
    if not pile:
        return "(empty)"
    if len(pile) == 1:
        return f"{card_text(pile[0]):<8s} [1]"
    return f"{card_text(pile[0]) + '..' + card_text(pile[-1]):<8s} [{len(pile)}]"


def _cell(label: str, body: str) -> str:
    return f"{label:<4s}{body}".ljust(_CELL)


def render_table(game, seat: int | None = None, *, names=None, scores=None, reveal: bool = False,
                 title: str | None = None, you: bool = False) -> str:
    """The table of ``game`` (a :class:`kc_sim.play.table.game.Game`) as seen by ``seat``.

    ``seat`` is the viewer (default: the seat to act); its hand is shown, other hands only
    as sizes unless ``reveal``. ``names`` are labels by seat (agent names), ``scores`` match
    penalty totals by seat (shown when given), ``title`` a first line; ``you`` marks the
    viewer as the person at the terminal (``(you)``, ``Your hand``)."""
    st = game.state
    players = game.players
    viewer = game.seat if seat is None else int(seat)

    def _seat_name(s: int, names, viewer) -> str:
        name = display_text(names[s]) if names is not None and s < len(names) else f"seat {s}"
        return f"{name} (you)" if you and s == viewer and name != "you" else name
    lines = []
    if title:
        lines.append(title)
    over = game.over
    if over:
        if game.winner is not None:
            status = f"round over: {_seat_name(game.winner, names, viewer)} went out"
        else:
            status = "round over: blocked (no one could go out)"
    else:
        status = f"turn {game.turns}: {_seat_name(game.seat, names, viewer)} to play"
    stock = len(game.stock)
    lines.append(f"{status}   |   stock {stock} card{'s' if stock != 1 else ''}")
    lines.append(RULE)
    piles = game.piles
    for row in _GRID:
        cells = []
        for p in row:
            if p is None:
                cells.append(_cell("", f"  stock {stock}"))
            else:
                cells.append(_cell(PILES[p], pile_text(piles[p])))
        lines.append("  " + "".join(cells).rstrip())
    lines.append(RULE)
    width = max(len(_seat_name(s, names, viewer)) for s in range(players))
    for s in range(players):
        n = int(st[L.HAND_N + s])
        parts = [f"  seat {s}  {_seat_name(s, names, viewer):<{width}s}  {n:>2d} card{'s' if n != 1 else ' '}"]
        if scores is not None and len(scores) > s:
            parts.append(f"score {int(scores[s]):>3d}")
        if over:
            parts.append(f"penalty {game.penalties[s]:>3d}")
        marks = []
        if s == game.dealer:
            marks.append("dealer")
        if not over and s == game.seat:
            marks.append("<- to play")
        if reveal and s != viewer:
            marks.append(f"hand: {hand_text(game.hand(s))}")
        lines.append("   ".join(parts + marks))
    if 0 <= viewer < players:
        own = game.hand(viewer)
        who = "Your hand" if you else f"Hand of seat {viewer} {_seat_name(viewer, names, viewer)}"
        lines.append(f"{who} ({len(own)}): {hand_text(own)}")
        drew = game.drew
        if drew is not None and not over and viewer == game.seat:
            lines.append(f"(drew {card_text(drew)} this turn)")
    return "\n".join(lines)


def describe_action(game, a: int) -> str:
    """What legal action ``a`` does, in words: ``7H on E (8C)``, ``move N (9D..7C) onto E (TD)``."""
    a = int(a)
    if a == L.STOP:
        return "end your turn" + (" (then draw a card)" if game.rules.draw == "end" and game.stock else "")
    piles = game.piles
    if a < L.MOVE_BASE:
        c, p = divmod(a, 8)
        target = piles[p]
        where = f"on {card_text(target[-1])}" if target else ("into the empty corner" if p >= 4 else "on the empty side")
        return f"{card_text(c)} {where} at {PILES[p]}"
    s, p = divmod(a - L.MOVE_BASE, 8)
    target = piles[p]
    where = f"onto {card_text(target[-1])} at {PILES[p]}" if target else f"into the empty corner {PILES[p]}"
    return f"move pile {PILES[s]} ({pile_text(piles[s]).split(' [')[0].strip()}) {where}"


def order_moves(legal) -> list[int]:
    """Legal action ids in the order people see them: placements by card (rank, suit),
    then pile moves, then stop."""
    def key(a):
        a = int(a)
        if a < L.MOVE_BASE:
            c = a // 8
            return (0, int(RANK[c]), int(SUIT[c]), a % 8)
        if a < L.STOP:
            return (1, a, 0, 0)
        return (2, 0, 0, 0)

    return sorted((int(a) for a in legal), key=key)


def move_lines(game, legal=None) -> list[str]:
    """The legal actions numbered from 1 as printed by ``kc-sim play``: ``  3) 7H>E     7H on 8C at E``.
    The numbers follow :func:`order_moves`."""
    moves = order_moves(game.legal_actions() if legal is None else legal)
    width = len(str(len(moves)))
    return [f"  {i:>{width}d}) {action_text(a):<7s} {describe_action(game, a)}" for i, a in enumerate(moves, start=1)]
