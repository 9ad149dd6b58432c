"""Browser replays of a round: one self-contained HTML page (``kc-sim replay --html``), or a
viewer block to put inside another page (the HTML report's sample rounds).

Nothing is fetched: the page carries its style, its script and the replay's data inline,
so it works offline, opened from disk. The data is the replay *document* that
:func:`kc_sim.play.seeing.replay_doc` builds (the round replayed in Python with kc-sim's own
``Game``): seat names, dealer, where each turn starts and the position after every
decision. The script draws a position with the geometry of :mod:`kc_sim.picture.svg`, the
same picture ``kc-sim render`` writes, with the same data attributes.

Controls: buttons and keys step one decision (Right / Left arrow), go to the first or the
last decision (Home / End), jump to a turn (the number box), and show or hide the hands of
the seats not to act (the check box, key H). The last action is highlighted and named
above the table; at the last decision the result is shown below it. Several viewers may
share one page: keys go to the viewer last clicked or focused.

DOM hooks (for tests and tools), inside each ``div.kc-replay``: ``data-step``/``data-steps``
on the div, ``[data-role=board] svg`` with ``g.pile[data-pile][data-cards]``,
``g.hand[data-seat][data-cards][data-hidden][data-count]``, ``[data-role=stock][data-count]``,
``[data-role=last]``, ``[data-role=result]``, and buttons ``[data-act=first|prev|next|last|go]``.
"""

from __future__ import annotations

import html
import json

from kc_sim.picture.svg import GEOMETRY, SUIT_GLYPH, SVG_CSS

__all__ = ["replay_page", "replay_block", "json_for_script", "PAGE_CSS", "PAGE_SCRIPT"]

PAGE_CSS = SVG_CSS + """
.kc-replay{font-family:Helvetica,Arial,sans-serif;margin:0.8em 0;outline:none;max-width:100%;overflow-x:auto}
.kc-replay:focus-within,.kc-replay:focus{box-shadow:0 0 0 2px #9bb7e0}
.kc-controls{display:flex;flex-wrap:wrap;gap:0.4em;align-items:center;margin:0.3em 0;font-size:14px}
.kc-controls button{font-size:14px;padding:0.2em 0.7em}
.kc-controls input[type=number]{width:4.5em}
.kc-title{font-weight:bold;margin:0.2em 0}
.kc-result{margin:0.4em 0;padding:0.4em 0.6em;background:#fff4d6;border:1px solid #e0c070;font-size:14px}
.kc-help{color:#666;font-size:12px}
"""

#: draws a position (the dict of kc_sim.picture.svg) and runs the controls of every viewer
PAGE_SCRIPT = r"""
(function () {
  "use strict";
  var G = __GEOMETRY__, GLYPH = __GLYPHS__, PILES = ["N", "E", "S", "W", "NE", "SE", "SW", "NW"];
  var PER_ROW = Math.floor((G.panel - 2 * G.pad - G.hw) / G.hstep) + 1;
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function label(t) { return (t[0] === "T" ? "10" : t[0]) + (GLYPH[t[1]] || t[1]); }
  function card(t, x, y, w, h, hot) {
    var pc = "DH".indexOf(t[1]) >= 0 ? "red" : "blk", col = pc + (t[0] === "T" ? " ten" : ""), lab = esc(label(t));
    return '<g class="card' + (hot ? ' last' : '') + '" data-card="' + esc(t) + '" transform="translate(' + x + ',' + y + ')">' +
      '<rect class="face" width="' + w + '" height="' + h + '" rx="4"/>' +
      '<text class="idx ' + col + '" x="3" y="13">' + lab + '</text>' +
      '<text class="pip ' + pc + '" x="' + (w / 2) + '" y="' + (h / 2 + 7) + '" text-anchor="middle">' + (GLYPH[t[1]] || "") + '</text>' +
      '<text class="idx ' + col + '" x="' + (w - 3) + '" y="' + (h - 4) + '" text-anchor="end">' + lab + '</text></g>';
  }
  function back(x, y, w, h) { return '<rect class="back" x="' + x + '" y="' + y + '" width="' + w + '" height="' + h + '" rx="4"/>'; }
  function rows(hand) { return Math.max(1, Math.ceil((hand ? hand.length : 0) / PER_ROW)); }
  function name(doc, s) { return doc.names && s < doc.names.length ? String(doc.names[s]) : "seat " + s; }
  // the same picture as kc_sim.picture.svg.position_svg (show: "all" or null = the seat to act)
  function draw(doc, pos, show) {
    var cw = G.cw, ch = G.ch, tsz = G.table, top = G.top, cx = tsz / 2, cy = top + tsz / 2, px = tsz + G.pad;
    var width = tsz + G.pad + G.panel, ph = G.pad, s, i;
    for (s = 0; s < pos.hands.length; s++) ph += 24 + rows(pos.hands[s]) * (G.hh + 6) + 8;
    var height = Math.max(top + tsz, top + ph) + G.pad;
    var last = pos.last || {}, hot = last.cards || [], where = last.where;
    var o = ['<svg xmlns="http://www.w3.org/2000/svg" class="kc" width="' + width + '" height="' + height +
      '" viewBox="0 0 ' + width + ' ' + height + '" data-turn="' + pos.turn + '">',
      '<rect class="bar" x="0" y="0" width="' + width + '" height="' + top + '"/>',
      '<rect class="felt" x="0" y="' + top + '" width="' + tsz + '" height="' + (height - top) + '"/>',
      '<text class="cap" x="10" y="18" data-role="status">' + esc(pos.status) + '</text>'];
    if (last.text) {   // a drawn card is named only when its hand is shown
      var hs = where && where.indexOf("hand ") === 0 ? +where.slice(5) : -1;
      var seen = hs < 0 || show === "all" || (show === null && pos.seat === hs);
      o.push('<text class="cap2" x="10" y="36" data-role="last">last: ' + esc(seen && last.full ? last.full : last.text) + '</text>');
    }
    o.push('<g data-role="stock" data-count="' + pos.stock + '">');
    o.push(pos.stock ? back(cx - cw / 2, cy - ch / 2, cw, ch) :
      '<rect class="empty" x="' + (cx - cw / 2) + '" y="' + (cy - ch / 2) + '" width="' + cw + '" height="' + ch + '" rx="4"/>');
    o.push('<text class="cnt" x="' + cx + '" y="' + (cy + 6) + '" text-anchor="middle">' + pos.stock + '</text></g>');
    for (var p = 0; p < 8; p++) {
      var dx = G.dirs[p][0], dy = G.dirs[p][1], d = p < 4 ? G.side : G.corner;
      var bx = cx + dx * d, by = cy + dy * d, pile = pos.piles[p], lx, ly;
      o.push('<g class="pile" data-pile="' + PILES[p] + '" data-cards="' + pile.join(" ") + '">');
      if (p < 4) { lx = cx + dx * (d - ch / 2 - 16); ly = cy + dy * (d - ch / 2 - 16); } else { lx = cx + dx * 62; ly = cy + dy * 62; }
      if (p === 1 || p === 3) lx = cx + dx * (d - cw / 2 - 14);
      o.push('<text class="lbl" x="' + lx + '" y="' + (ly + 4) + '" text-anchor="middle">' + PILES[p] + '</text>');
      if (!pile.length) o.push('<rect class="empty" x="' + (bx - cw / 2) + '" y="' + (by - ch / 2) + '" width="' + cw + '" height="' + ch + '" rx="4"/>');
      for (i = 0; i < pile.length; i++)
        o.push(card(pile[i], bx + dx * G.step * i - cw / 2, by + dy * G.step * i - ch / 2, cw, ch, where === PILES[p] && hot.indexOf(pile[i]) >= 0));
      o.push('</g>');
    }
    o.push('<rect class="panel" x="' + px + '" y="' + top + '" width="' + (G.panel - 1) + '" height="' + (height - top - 1) + '"/>');
    var y = top + G.pad;
    for (s = 0; s < pos.hands.length; s++) {
      var hand = pos.hands[s], n = pos.sizes[s];
      var shown = hand !== null && (show === "all" || (show === null && pos.seat === s));
      var parts = ["seat " + s + " \u00b7 " + name(doc, s) + " \u00b7 " + n + " card" + (n !== 1 ? "s" : "")];
      if (doc.scores && s < doc.scores.length) parts.push("score " + doc.scores[s]);
      if (pos.penalties && s < pos.penalties.length) parts.push("penalty " + pos.penalties[s]);
      if (doc.dealer === s) parts.push("dealer");
      if (pos.seat === s) parts.push("\u25b6 to play");
      o.push('<g class="hand" data-seat="' + s + '" data-count="' + n + '" data-hidden="' + (shown ? "false" : "true") +
        '" data-cards="' + (shown ? hand.join(" ") : "") + '">');
      o.push('<text class="seat' + (pos.seat === s ? ' tomove' : '') + '" x="' + (px + G.pad) + '" y="' + (y + 15) + '">' +
        esc(parts.join(" \u00b7 ")) + '</text>');
      y += 24;
      if (shown) {
        for (i = 0; i < hand.length; i++) {
          var r = Math.floor(i / PER_ROW), k = i % PER_ROW;
          o.push(card(hand[i], px + G.pad + k * G.hstep, y + r * (G.hh + 6), G.hw, G.hh, where === "hand " + s && hot.indexOf(hand[i]) >= 0));
        }
      } else {
        for (i = 0; i < Math.min(n, PER_ROW); i++) o.push(back(px + G.pad + i * G.hstep, y, G.hw, G.hh));
      }
      y += rows(hand) * (G.hh + 6) + 8;
      o.push('</g>');
    }
    o.push('</svg>');
    return o.join("");
  }
  // one registry per page, whichever script element (a report, Jupyter outputs) starts it
  var reg = window.kcReplays = window.kcReplays || {viewers: [], active: null, keys: false};
  var viewers = reg.viewers;
  function Viewer(el) {
    var doc = JSON.parse(el.querySelector('script[data-role="doc"]').textContent);
    var me = this, n = doc.steps.length, board = el.querySelector('[data-role="board"]');
    var where = el.querySelector('[data-role="where"]'), result = el.querySelector('[data-role="result"]');
    var hands = el.querySelector('[data-act="hands"]'), turnBox = el.querySelector('[data-act="turn"]');
    this.step = 0;
    this.show = function (i) {
      me.step = Math.max(0, Math.min(n - 1, i));
      var pos = doc.steps[me.step];
      board.innerHTML = draw(doc, pos, hands.checked ? "all" : null);
      el.setAttribute("data-step", me.step);
      el.setAttribute("data-turn", pos.turn);
      where.textContent = "decision " + me.step + " of " + (n - 1) + " \u00b7 turn " + pos.turn + " of " + doc.turn_starts.length;
      if (document.activeElement !== turnBox) turnBox.value = pos.turn;   // the box follows, unless being typed in
      result.hidden = me.step !== n - 1;
    };
    this.go = function (t) {
      t = parseInt(t, 10);
      if (isNaN(t)) return;
      if (t > doc.turn_starts.length) me.show(n - 1); else me.show(doc.turn_starts[Math.max(1, t) - 1]);
    };
    this.toggle = function () { hands.checked = !hands.checked; me.show(me.step); };
    el.querySelector('[data-act="first"]').onclick = function () { me.show(0); };
    el.querySelector('[data-act="prev"]').onclick = function () { me.show(me.step - 1); };
    el.querySelector('[data-act="next"]').onclick = function () { me.show(me.step + 1); };
    el.querySelector('[data-act="last"]').onclick = function () { me.show(n - 1); };
    el.querySelector('[data-act="go"]').onclick = function () { me.go(turnBox.value); };
    turnBox.addEventListener("keydown", function (e) { if (e.key === "Enter") { me.go(turnBox.value); e.preventDefault(); } });
    hands.onchange = function () { me.show(me.step); };
    el.addEventListener("mousedown", function () { reg.active = me; });
    el.addEventListener("focusin", function () { reg.active = me; });
    el.setAttribute("data-steps", n);
    this.show(0);
  }
  if (!reg.keys) document.addEventListener("keydown", function (e) {
    var v = reg.active || viewers[0];
    if (!v || (e.target && e.target.tagName === "INPUT" && e.target.type === "number")) return;
    if (e.key === "ArrowRight") v.show(v.step + 1);
    else if (e.key === "ArrowLeft") v.show(v.step - 1);
    else if (e.key === "Home") v.show(0);
    else if (e.key === "End") v.show(1e9);
    else if (e.key === "h" || e.key === "H") v.toggle();
    else return;
    e.preventDefault();
  });
  reg.keys = true;
  function start() {
    var els = document.querySelectorAll("div.kc-replay");
    for (var i = 0; i < els.length; i++) if (!els[i].kcViewer) { els[i].kcViewer = new Viewer(els[i]); viewers.push(els[i].kcViewer); }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
"""


def _script() -> str:
    return (PAGE_SCRIPT.replace("__GEOMETRY__", json.dumps(GEOMETRY))
            .replace("__GLYPHS__", json.dumps(SUIT_GLYPH)))


#: what JSON embedded in HTML escapes: ``<`` ``>`` ``&`` (so neither ``</script>`` nor ``<!--``
#: can end or comment out the script) and, by ``ensure_ascii``, every non-ASCII character,
#: U+2028 and U+2029 among them (line ends in older JavaScript); lone surrogates too
_HTML_JSON = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def json_for_script(doc) -> str:
    """``doc`` as JSON that is safe inside any HTML ``<script>`` element: nothing in it can
    end the element, open a comment or break the page's encoding; ``JSON.parse`` reads it
    back unchanged."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True).translate(_HTML_JSON)


def replay_block(doc: dict, uid: str, *, heading: str | None = None, hands: bool = True) -> str:
    """One viewer (``<div class="kc-replay">``) for a replay document; the page that holds
    it needs :data:`PAGE_CSS` and the script once (:func:`page_assets`). ``hands``: start
    with every hand shown."""
    e = html.escape
    head = f'<div class="kc-title">{e(heading)}</div>' if heading else ""
    n_turns = len(doc["turn_starts"])
    return (
        f'<div class="kc-replay" id="{e(uid)}" tabindex="0">{head}'
        '<div class="kc-controls">'
        '<button type="button" data-act="first" title="first decision (Home)">|&#x25C0; first</button>'
        '<button type="button" data-act="prev" title="one decision back (Left arrow)">&#x25C0; back</button>'
        '<button type="button" data-act="next" title="one decision forward (Right arrow)">next &#x25B6;</button>'
        '<button type="button" data-act="last" title="last decision (End)">last &#x25B6;|</button>'
        f'<label>turn <input type="number" data-act="turn" min="1" max="{n_turns + 1}" value="1"></label>'
        '<button type="button" data-act="go">go</button>'
        f'<label><input type="checkbox" data-act="hands"{" checked" if hands else ""}> show every hand (H)</label>'
        '<span data-role="where"></span></div>'
        '<div data-role="board"></div>'
        f'<div class="kc-result" data-role="result" hidden>Result: {e(str(doc["result"]))}</div>'
        f'<script type="application/json" data-role="doc">{json_for_script(doc)}</script></div>'
    )


def page_assets() -> str:
    """The style and script a page with viewers needs, once (put the script after the viewers
    or anywhere: it starts when the page has loaded)."""
    return f"<style>{PAGE_CSS}</style><script>{_script()}</script>"


def replay_page(doc: dict, *, title: str = "kc-sim replay") -> str:
    """A whole HTML page with one viewer."""
    e = html.escape
    names = ", ".join(f"seat {s}: {n}" for s, n in enumerate(doc["names"]))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(title)}</title><style>{PAGE_CSS}"
        "body{margin:1em;color:#222}</style></head><body>"
        f"<h1 style=\"font-size:1.3em\">{e(title)}</h1>"
        f'<p class="kc-help">{e(names)} &middot; rules {e(doc["rules"])} &middot; '
        "keys: Left/Right arrow step one decision, Home/End first/last, H hides or shows the other hands</p>"
        + replay_block(doc, "replay") +
        f"<script>{_script()}</script></body></html>"
    )
