"""A position of Kings in the Corner drawn as SVG: ``kc-sim render``, Jupyter
(``Game._repr_svg_``) and the replay pages (:mod:`kc_sim.picture.replay_page`).

The picture follows the table of the rule book: the stock face down in the middle, the
four side piles N E S W next to it and the four corner piles NE SE SW NW on the
diagonals. Each pile is drawn base first, next to the stock, and every later card
overlaps the one before it a little further out, so all of a pile's cards stay readable
as they are when the game is played. A panel on the right has one line per seat (name,
cards in hand, match score, dealer and to-play marks, the penalty once the round is over)
and the seat's hand: face up when shown, face down (a count) when hidden.

The drawing reads a *position*: a plain dict of card texts (:func:`position_svg` lists its
keys), so it needs nothing from the engine and the replay page's script can draw the same
dict in the browser with the same geometry (:data:`GEOMETRY`). Every pile, hand and card
carries data attributes (``data-pile``, ``data-seat``, ``data-cards``, ``data-card``,
``data-count``, ``data-hidden``) so that tests and tools can read the table back.
"""

from __future__ import annotations

from html import escape

from kc_sim.records.untrusted import display_text

__all__ = ["GEOMETRY", "SVG_CSS", "position_svg", "card_label", "SUIT_GLYPH"]

PILE_NAMES = ("N", "E", "S", "W", "NE", "SE", "SW", "NW")
SUIT_GLYPH = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}

#: sizes and places, shared with the replay page's script (kept in one place)
GEOMETRY = {
    "cw": 44, "ch": 62,              # a table card
    "hw": 36, "hh": 50, "hstep": 30,  # a hand card and how far the next one lies
    "step": 18,                       # how far each card of a pile lies beyond the one before it
    "side": 95, "corner": 100,        # centre of a pile's base, from the centre of the table
    "table": 700, "top": 44,          # the table is a square; a caption bar above it
    "panel": 390, "pad": 10,          # the seats' panel on the right
    # outward direction of every pile (x right, y down), in PILE_NAMES order
    "dirs": [[0, -1], [1, 0], [0, 1], [-1, 0], [1, -1], [1, 1], [-1, 1], [-1, -1]],
}
_G = GEOMETRY

SVG_CSS = (
    ".kc text{font-family:Helvetica,Arial,sans-serif}"
    ".kc .felt{fill:#2e6b3f}.kc .bar{fill:#f4f1e8}.kc .panel{fill:#faf8f2;stroke:#ccc}"
    ".kc .face{fill:#fff;stroke:#333;stroke-width:1}.kc .back{fill:#35508f;stroke:#fff;stroke-width:1.5}"
    ".kc .empty{fill:none;stroke:#cfe3d4;stroke-width:1.2;stroke-dasharray:4 3}"
    ".kc .lbl{fill:#e8f2ea;font-size:12px;font-weight:bold}.kc .idx{font-size:11px;font-weight:bold;letter-spacing:-0.5px}.kc .ten{font-size:10px;letter-spacing:-1.2px}"
    ".kc .pip{font-size:20px}.kc .red{fill:#c0392b}.kc .blk{fill:#111}"
    ".kc .last .face{stroke:#ff9800;stroke-width:3}.kc .cap{font-size:14px;fill:#222}"
    ".kc .cap2{font-size:13px;fill:#8a4b00}.kc .seat{font-size:13px;fill:#222}.kc .tomove{font-weight:bold}"
    ".kc .cnt{fill:#fff;font-size:15px;font-weight:bold}"
)


def card_label(text: str) -> str:
    """``7H`` -> ``7♥``; ten is shown as ``10``."""
    r, s = text[0], text[1]
    return ("10" if r == "T" else r) + SUIT_GLYPH.get(s, s)


def _card(text: str, x: float, y: float, w: int, h: int, last: bool) -> str:
    """One face-up card with its top-left corner at (x, y): an index at the top left and
    one at the bottom right (so whichever strip of an overlapped card shows, it reads)."""
    colour = ("red" if text[1] in "DH" else "blk") + (" ten" if text[0] == "T" else "")
    lab = escape(card_label(text))
    cls = "card last" if last else "card"
    return (f'<g class="{cls}" data-card="{escape(text)}" transform="translate({x:g},{y:g})">'
            f'<rect class="face" width="{w}" height="{h}" rx="4"/>'
            f'<text class="idx {colour}" x="3" y="13">{lab}</text>'
            f'<text class="pip {colour.split()[0]}" x="{w / 2:g}" y="{h / 2 + 7:g}" text-anchor="middle">'
            f'{SUIT_GLYPH.get(text[1], "")}</text>'
            f'<text class="idx {colour}" x="{w - 3}" y="{h - 4}" text-anchor="end">{lab}</text></g>')


def _back(x: float, y: float, w: int, h: int) -> str:
    return f'<rect class="back" x="{x:g}" y="{y:g}" width="{w}" height="{h}" rx="4"/>'


def _seat_name(names, s: int) -> str:
    return display_text(names[s]) if names is not None and s < len(names) else f"seat {s}"


_PER_ROW = (_G["panel"] - 2 * _G["pad"] - _G["hw"]) // _G["hstep"] + 1


def _rows(hand) -> int:
    """Rows a hand takes in the panel, shown or not (so hiding a hand moves nothing)."""
    return max(1, -(-len(hand or []) // _PER_ROW))


def _shown(pos: dict, show, s: int) -> bool:
    """Whether seat s's hand is face up under ``show`` (see :func:`position_svg`)."""
    if s >= len(pos["hands"]) or pos["hands"][s] is None:
        return False
    if show == "all":
        return True
    if show is None:
        return pos.get("seat") == s
    return isinstance(show, int) and not isinstance(show, bool) and show == s


def _panel_height(pos: dict) -> int:
    return _G["pad"] + sum(24 + _rows(h) * (_G["hh"] + 6) + 8 for h in pos["hands"])


def position_svg(pos: dict, *, names=None, scores=None, dealer: int | None = None, show="all",
                 title: str | None = None) -> str:
    """The SVG picture (a string) of a position.

    ``pos`` keys: ``hands`` (card texts by seat; None for a hand not known), ``sizes``
    (cards in hand by seat), ``piles`` (8 lists of card texts, base first, in N E S W NE SE
    SW NW order), ``stock`` (cards left), ``seat`` (to act, None when over), ``status``
    (a line of text), optionally ``last`` (``{"text": ..., "cards": [...], "where": ...}``:
    the last action; its cards are highlighted in pile ``where`` (a pile name) or in seat
    s's hand (``"hand s"``), so that the other copy of a card under two decks is not; an
    optional ``"full"`` text names a drawn card and is shown only when that hand is), ``penalties`` (when over) and ``turn``.
    ``show``: ``"all"`` shows every hand, a seat number only that seat's, None only the hand
    of the seat to act (none when over). ``names`` label the seats, ``scores`` are match
    totals, ``dealer`` marks the dealer; ``title`` heads the caption bar."""
    tsz, top = _G["table"], _G["top"]
    width = tsz + _G["pad"] + _G["panel"]
    height = max(top + tsz, top + _panel_height(pos)) + _G["pad"]
    last = pos.get("last") or {}
    hot = list(last.get("cards") or [])
    where = last.get("where")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="kc" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" data-turn="{pos.get("turn", "")}">',
           f"<style>{SVG_CSS}</style>",
           f'<rect class="bar" x="0" y="0" width="{width}" height="{top}"/>',
           f'<rect class="felt" x="0" y="{top}" width="{tsz}" height="{height - top}"/>']
    head = (f"{title} \u2014 " if title else "") + str(pos.get("status", ""))
    out.append(f'<text class="cap" x="10" y="18" data-role="status">{escape(head)}</text>')
    if last.get("text"):
        seen = not (where or "").startswith("hand ") or _shown(pos, show, int(where.split()[1]))
        words = last.get("full", last["text"]) if seen else last["text"]
        out.append(f'<text class="cap2" x="10" y="36" data-role="last">last: {escape(words)}</text>')
    _table(out, pos, hot, where)
    _panel(out, pos, height, hot, where, names=names, scores=scores, dealer=dealer, show=show)
    out.append("</svg>")
    return "".join(out)


def _table(out: list, pos: dict, hot: list, where) -> None:
    """The stock, face down with its size, and the piles: each base next to the stock, each
    later card one step further out, drawn on top; the cards of ``hot`` in pile ``where`` marked."""
    cw, ch, step = _G["cw"], _G["ch"], _G["step"]
    tsz, top = _G["table"], _G["top"]
    cx, cy = tsz / 2, top + tsz / 2
    n_stock = int(pos["stock"])
    out.append(f'<g data-role="stock" data-count="{n_stock}">')
    if n_stock:
        out.append(_back(cx - cw / 2, cy - ch / 2, cw, ch))
    else:
        out.append(f'<rect class="empty" x="{cx - cw / 2:g}" y="{cy - ch / 2:g}" width="{cw}" height="{ch}" rx="4"/>')
    out.append(f'<text class="cnt" x="{cx:g}" y="{cy + 6:g}" text-anchor="middle">{n_stock}</text></g>')
    for p, name in enumerate(PILE_NAMES):
        dx, dy = _G["dirs"][p]
        d = _G["side"] if p < 4 else _G["corner"]
        bx, by = cx + dx * d, cy + dy * d
        pile = list(pos["piles"][p])
        out.append(f'<g class="pile" data-pile="{name}" data-cards="{" ".join(pile)}">')
        lx, ly = (cx + dx * (d - ch / 2 - 16), cy + dy * (d - ch / 2 - 16)) if p < 4 else (cx + dx * 62, cy + dy * 62)
        if p in (1, 3):
            lx = cx + dx * (d - cw / 2 - 14)
        out.append(f'<text class="lbl" x="{lx:g}" y="{ly + 4:g}" text-anchor="middle">{name}</text>')
        if not pile:
            out.append(f'<rect class="empty" x="{bx - cw / 2:g}" y="{by - ch / 2:g}" width="{cw}" height="{ch}" rx="4"/>')
        for i, c in enumerate(pile):
            x, y = bx + dx * step * i - cw / 2, by + dy * step * i - ch / 2
            out.append(_card(c, x, y, cw, ch, where == name and c in hot))
        out.append("</g>")


def _panel(out: list, pos: dict, height: int, hot: list, where, *, names, scores, dealer, show) -> None:
    """The seats' panel on the right: a line per seat (name, cards, score, penalty, dealer and
    to-play marks) and its hand, face up when shown, else face down."""
    tsz, top = _G["table"], _G["top"]
    px = tsz + _G["pad"]
    out.append(f'<rect class="panel" x="{px}" y="{top}" width="{_G["panel"] - 1}" height="{height - top - 1}"/>')
    y = top + _G["pad"]
    hw, hh, hstep = _G["hw"], _G["hh"], _G["hstep"]
    per_row = _PER_ROW
    seat = pos.get("seat")
    pens = pos.get("penalties")
    for s, (hand, n) in enumerate(zip(pos["hands"], pos["sizes"])):
        shown = _shown(pos, show, s)
        parts = [f"seat {s} \u00b7 {_seat_name(names, s)} \u00b7 {n} card{'s' if n != 1 else ''}"]
        if scores is not None and s < len(scores):
            parts.append(f"score {scores[s]}")
        if pens is not None and s < len(pens):
            parts.append(f"penalty {pens[s]}")
        if dealer == s:
            parts.append("dealer")
        if seat == s:
            parts.append("\u25b6 to play")
        cls = "seat tomove" if seat == s else "seat"
        cards_attr = " ".join(hand) if shown else ""
        out.append(f'<g class="hand" data-seat="{s}" data-count="{n}" data-hidden="{"false" if shown else "true"}" '
                   f'data-cards="{cards_attr}">')
        out.append(f'<text class="{cls}" x="{px + _G["pad"]}" y="{y + 15}">{escape(" · ".join(parts))}</text>')
        y += 24
        if shown:
            for i, c in enumerate(hand):
                r, k = divmod(i, per_row)
                out.append(_card(c, px + _G["pad"] + k * hstep, y + r * (hh + 6), hw, hh,
                                 where == f"hand {s}" and c in hot))
        else:
            for k in range(min(n, per_row)):
                out.append(_back(px + _G["pad"] + k * hstep, y, hw, hh))
        y += _rows(hand) * (hh + 6) + 8
        out.append("</g>")
