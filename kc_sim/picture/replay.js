// The replay viewer of kc-sim (kc_sim/picture/replay_page.py): one home for the script of the
// replay page (kc-sim replay --html, kc-sim analyse -o OUT.html, the HTML report) and of the
// kc-sim serve page (served as /static/replay.js). It draws a position with the geometry of
// kc_sim.picture.svg, steps through a round, and, when the round was judged (kc-sim analyse),
// draws the evaluation graph and the best alternative of each judged decision on the board.
// Every text from a record is escaped (esc) or set with textContent; nothing is evaluated.
// The geometry G and the suits GLYPH below are put in by Python (replay_page.replay_script).
(function () {
  "use strict";
  var G = __GEOMETRY__, GLYPH = __GLYPHS__, PILES = ["N", "E", "S", "W", "NE", "SE", "SW", "NW"];
  var PER_ROW = Math.floor((G.panel - 2 * G.pad - G.hw) / G.hstep) + 1;
  var LABELS = ["blunder", "mistake", "inaccuracy"];
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function fix1(x) { return (+x).toFixed(1); }
  function signed(x) { return (x >= 0 ? "+" : "\u2212") + fix1(Math.abs(x)); }
  function label(t) { return (t[0] === "T" ? "10" : t[0]) + (GLYPH[t[1]] || t[1]); }
  function card(t, x, y, w, h, cls) {
    var pc = "DH".indexOf(t[1]) >= 0 ? "red" : "blk", col = pc + (t[0] === "T" ? " ten" : ""), lab = esc(label(t));
    return '<g class="card' + cls + '" data-card="' + esc(t) + '" transform="translate(' + x + ',' + y + ')">' +
      '<rect class="face" width="' + w + '" height="' + h + '" rx="4"/>' +
      '<text class="idx ' + col + '" x="3" y="13">' + lab + '</text>' +
      '<text class="pip ' + pc + '" x="' + (w / 2) + '" y="' + (h / 2 + 7) + '" text-anchor="middle">' + (GLYPH[t[1]] || "") + '</text>' +
      '<text class="idx ' + col + '" x="' + (w - 3) + '" y="' + (h - 4) + '" text-anchor="end">' + lab + '</text></g>';
  }
  function back(x, y, w, h) { return '<rect class="back" x="' + x + '" y="' + y + '" width="' + w + '" height="' + h + '" rx="4"/>'; }
  function rows(hand) { return Math.max(1, Math.ceil((hand ? hand.length : 0) / PER_ROW)); }
  function name(doc, s) { return doc.names && s < doc.names.length ? String(doc.names[s]) : "seat " + s; }

  // an action's record text as what it moves: {card, to}, {from, to} (a side pile) or {stop}
  function parseAction(text) {
    var m = /^([2-9TJQKA][CDHS])>([A-Z]{1,2})$/.exec(text || "");
    if (m) return {card: m[1], to: m[2]};
    m = /^([NESW])>([NESW])$/.exec(text || "");
    if (m) return {from: m[1], to: m[2]};
    return text === "stop" ? {stop: true} : null;
  }
  // the class a card or pile gets from the marked moves: kc-best (the best action), kc-played
  function marks(mark, test) {
    var out = "";
    if (!mark) return out;
    if (mark.best && test(mark.best)) out += " kc-best";
    if (mark.played && test(mark.played)) out += " kc-played";
    return out;
  }
  function arrow(cls, a, b) {
    if (!a || !b) return "";
    var dx = b[0] - a[0], dy = b[1] - a[1], len = Math.sqrt(dx * dx + dy * dy) || 1, ux = dx / len, uy = dy / len;
    var hx = b[0] - ux * 12, hy = b[1] - uy * 12;
    return '<g class="kc-arrow ' + cls + '"><line x1="' + a[0] + '" y1="' + a[1] + '" x2="' + hx + '" y2="' + hy + '"/>' +
      '<polygon points="' + b[0] + ',' + b[1] + ' ' + (hx - uy * 7) + ',' + (hy + ux * 7) + ' ' + (hx + uy * 7) + ',' + (hy - ux * 7) + '"/></g>';
  }

  // the same picture as kc_sim.picture.svg.position_svg (show: "all" or null = the seat to act);
  // mark: {seat, best, played, text} draws the judged decision's best action and the action played
  function draw(doc, pos, show, mark) {
    var cw = G.cw, ch = G.ch, tsz = G.table, top = G.top, cx = tsz / 2, cy = top + tsz / 2, px = tsz + G.pad;
    var width = tsz + G.pad + G.panel, ph = G.pad, s, i, at = {};
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
    o.push('<g class="stock' + marks(mark, function (a) { return a.stop; }) + '" data-role="stock" data-count="' + pos.stock + '">');
    o.push(pos.stock ? back(cx - cw / 2, cy - ch / 2, cw, ch) :
      '<rect class="empty" x="' + (cx - cw / 2) + '" y="' + (cy - ch / 2) + '" width="' + cw + '" height="' + ch + '" rx="4"/>');
    o.push('<text class="cnt" x="' + cx + '" y="' + (cy + 6) + '" text-anchor="middle">' + pos.stock + '</text></g>');
    for (var p = 0; p < 8; p++) {
      var dx = G.dirs[p][0], dy = G.dirs[p][1], d = p < 4 ? G.side : G.corner, nm = PILES[p];
      var bx = cx + dx * d, by = cy + dy * d, pile = pos.piles[p], lx, ly;
      var to = marks(mark, function (a) { return a.to === nm; }), from = marks(mark, function (a) { return a.from === nm; });
      at["to " + nm] = [bx + dx * G.step * pile.length, by + dy * G.step * pile.length];
      at["from " + nm] = [bx, by];
      o.push('<g class="pile' + (to ? to.replace(/ kc-(\w+)/g, " kc-$1-to") : "") + '" data-pile="' + nm + '" data-cards="' + pile.join(" ") + '">');
      if (p < 4) { lx = cx + dx * (d - ch / 2 - 16); ly = cy + dy * (d - ch / 2 - 16); } else { lx = cx + dx * 62; ly = cy + dy * 62; }
      if (p === 1 || p === 3) lx = cx + dx * (d - cw / 2 - 14);
      o.push('<text class="lbl" x="' + lx + '" y="' + (ly + 4) + '" text-anchor="middle">' + nm + '</text>');
      if (!pile.length) o.push('<rect class="empty" x="' + (bx - cw / 2) + '" y="' + (by - ch / 2) + '" width="' + cw + '" height="' + ch + '" rx="4"/>');
      for (i = 0; i < pile.length; i++)
        o.push(card(pile[i], bx + dx * G.step * i - cw / 2, by + dy * G.step * i - ch / 2, cw, ch,
          (where === nm && hot.indexOf(pile[i]) >= 0 ? " last" : "") + from));
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
          var r = Math.floor(i / PER_ROW), k = i % PER_ROW, hx = px + G.pad + k * G.hstep, hy = y + r * (G.hh + 6), t = hand[i];
          var mine = mark && mark.seat === s ? marks(mark, function (a) { return a.card === t; }) : "";
          if (mine) at["card " + t] = [hx + G.hw / 2, hy + G.hh / 2];
          o.push(card(t, hx, hy, G.hw, G.hh, (where === "hand " + s && hot.indexOf(t) >= 0 ? " last" : "") + mine));
        }
      } else {
        for (i = 0; i < Math.min(n, PER_ROW); i++) o.push(back(px + G.pad + i * G.hstep, y, G.hw, G.hh));
      }
      y += rows(hand) * (G.hh + 6) + 8;
      o.push('</g>');
    }
    if (mark) {
      [["kc-played", mark.played], ["kc-best", mark.best]].forEach(function (m) {
        var a = m[1];
        if (!a || a.stop || (m[0] === "kc-played" && mark.same)) return;
        o.push(arrow(m[0], at[a.card ? "card " + a.card : "from " + a.from], at["to " + a.to]));
      });
      if (mark.text) o.push('<text class="kc-besttext" x="10" y="' + (height - 12) + '" data-role="best">' + esc(mark.text) + '</text>');
    }
    o.push('</svg>');
    return o.join("");
  }

  // --- the evaluation graph: each judged seat's win probability along the round ---------------
  var GW = 640, GH = 190, GL = 38, GR = 10, GT = 10, GB = 26;
  function gx(step, n) { return +(GL + (GW - GL - GR) * step / Math.max(1, n - 1)).toFixed(1); }
  function gy(win) { return +(GT + (GH - GT - GB) * (1 - Math.max(0, Math.min(100, win)) / 100)).toFixed(1); }
  function pointTitle(doc, pt) {
    var who = "seat " + pt.seat + " (" + name(doc, pt.seat) + ")";
    if (pt.kind === "deal") return who + ": dealt, win " + fix1(pt.win) + "% (luck " + signed(pt.luck) + " points)";
    if (pt.kind === "draw") return who + " drew " + (pt.card || "a card") + ": luck " + signed(pt.luck) + " points, win " + fix1(pt.win) + "%";
    return who + ", step " + pt.step + ": played " + pt.played + (pt.label ? " (" + pt.label + ", " + fix1(pt.loss) + " points lost)" : "") +
      ", win " + fix1(pt.win) + "%" + (pt.best !== pt.played ? "; best " + pt.best + " " + fix1(pt.best_win) + "%" : "");
  }
  function graph(doc, ev, n) {
    var o = ['<svg xmlns="http://www.w3.org/2000/svg" class="kc-graph" width="' + GW + '" height="' + GH + '" viewBox="0 0 ' + GW + ' ' + GH + '">'];
    o.push('<rect class="kc-gbg" x="' + GL + '" y="' + GT + '" width="' + (GW - GL - GR) + '" height="' + (GH - GT - GB) + '"/>');
    [0, 25, 50, 75, 100].forEach(function (w) {
      o.push('<line class="kc-grid" x1="' + GL + '" x2="' + (GW - GR) + '" y1="' + gy(w) + '" y2="' + gy(w) + '"/>' +
        '<text class="kc-gtxt" x="' + (GL - 4) + '" y="' + (gy(w) + 4) + '" text-anchor="end">' + w + '%</text>');
    });
    o.push('<text class="kc-gtxt" x="' + GL + '" y="' + (GH - 8) + '">step 0</text><text class="kc-gtxt" x="' + (GW - GR) +
      '" y="' + (GH - 8) + '" text-anchor="end">step ' + (n - 1) + '</text>');
    o.push('<line class="kc-cursor" data-role="cursor" x1="' + GL + '" x2="' + GL + '" y1="' + GT + '" y2="' + (GH - GB) + '"/>');
    ev.seats.forEach(function (s) {
      var pts = ev.points.filter(function (p) { return p.seat === s; });
      if (pts.length > 1) o.push('<polyline class="kc-line s' + (s % 6) + '" data-seat="' + s + '" points="' +
        pts.map(function (p) { return gx(p.step, n) + "," + gy(p.win); }).join(" ") + '"/>');
    });
    ev.points.forEach(function (p) {
      var x = gx(p.step, n), y = gy(p.win), shape;
      if (p.kind === "decision") {
        shape = '<circle class="kc-dot s' + (p.seat % 6) + (p.label ? " " + p.label : "") + '" cx="' + x + '" cy="' + y + '" r="' + (p.label ? 6 : 4) + '"/>';
      } else {
        var up = p.luck >= 0, d = up ? -1 : 1, sure = p.luck_ci && (p.luck_ci[0] > 0 || p.luck_ci[1] < 0);
        shape = '<polygon class="kc-luck ' + (up ? "good" : "bad") + (sure ? "" : " unsure") + '" points="' + x + ',' + (y + 6 * d) + ' ' +
          (x - 5) + ',' + (y - 3 * d) + ' ' + (x + 5) + ',' + (y - 3 * d) + '"/>';
      }
      o.push('<g class="kc-pt" data-kind="' + p.kind + '" data-step="' + p.step + '" data-seat="' + p.seat + '" data-label="' +
        esc(p.label || "") + '"><title>' + esc(pointTitle(doc, p)) + '</title>' + shape + '</g>');
    });
    o.push('</svg>');
    return o.join("");
  }
  function legend(doc, ev) {
    var o = ev.seats.map(function (s) { return '<span class="kc-key s' + (s % 6) + '">\u2501 ' + esc(name(doc, s)) + '</span>'; });
    o.push('<span class="kc-key"><span class="kc-sw blunder"></span>blunder \u2265 ' + ev.labels.blunder + '</span>',
      '<span class="kc-key"><span class="kc-sw mistake"></span>mistake \u2265 ' + ev.labels.mistake + '</span>',
      '<span class="kc-key"><span class="kc-sw inaccuracy"></span>inaccuracy \u2265 ' + ev.labels.inaccuracy + ' points</span>',
      '<span class="kc-key">\u25cb a judged decision, not labelled</span>');
    if (ev.points.some(function (p) { return p.kind === "draw"; }))
      o.push('<span class="kc-key">\u25b2\u25bc luck of a draw (hollow: not told apart from 0)</span>');
    return o.join(" ");
  }
  // the judged decision and the draws at one step, as text and as the board's marks
  function judged(doc, ev, step) {
    var dec = null, lines = [];
    ev.points.forEach(function (p) {
      if (p.step !== step) return;
      if (p.kind === "decision") dec = p;
      else if (p.kind === "deal") lines.push("seat " + p.seat + " (" + name(doc, p.seat) + ") was dealt a hand worth a win " +
        "probability of " + fix1(p.win) + "%: luck " + signed(p.luck) + " points [" + fix1(p.luck_ci[0]) + ", " + fix1(p.luck_ci[1]) + "].");
      else if (p.kind === "draw") lines.push("seat " + p.seat + " (" + name(doc, p.seat) + ") drew " + (p.card || "a card") +
        ": luck " + signed(p.luck) + " points [" + fix1(p.luck_ci[0]) + ", " + fix1(p.luck_ci[1]) + "], win " + fix1(p.win) + "%.");
    });
    if (!dec) return {lines: lines.length ? lines : ["No judged decision at this step."], mark: null};
    var same = dec.best === dec.played, who = "seat " + dec.seat + " (" + name(doc, dec.seat) + ")";
    var text = "best: " + dec.best + (same ? " (played)" : dec.loss > 0 ? " (+" + fix1(dec.loss) + " points)" : " (as good as the move played)");
    lines.unshift(who + ", turn " + dec.turn + ": played " + dec.played + ", win " + fix1(dec.win) + "%" +
      (same ? ", the best." : "; loss " + fix1(dec.loss) + " points [" + fix1(dec.loss_ci[0]) + ", " + fix1(dec.loss_ci[1]) + "]" +
        (dec.label ? " (" + dec.label + ")" : " (not labelled)") + "; best " + dec.best + ", win " + fix1(dec.best_win) + "%."));
    return {lines: lines, dec: dec,
      mark: {seat: dec.seat, best: parseAction(dec.best), played: parseAction(dec.played), same: same, text: text}};
  }

  var CONTROLS = '<div class="kc-controls">' +
    '<button type="button" data-act="first" title="first decision (Home)">|&#x25C0; first</button>' +
    '<button type="button" data-act="prev" title="one decision back (Left arrow)">&#x25C0; back</button>' +
    '<button type="button" data-act="next" title="one decision forward (Right arrow)">next &#x25B6;</button>' +
    '<button type="button" data-act="last" title="last decision (End)">last &#x25B6;|</button>' +
    '<label>turn <input type="number" data-act="turn" min="1" value="1"></label>' +
    '<button type="button" data-act="go">go</button>' +
    '<label><input type="checkbox" data-act="hands"> show every hand (H)</label>' +
    '<span data-role="where"></span></div>';
  var JUDGE = '<div class="kc-eval"><div class="kc-controls">' +
    '<button type="button" data-act="prevlab" title="the labelled decision before (P)">&#x25C0; labelled</button>' +
    '<button type="button" data-act="nextlab" title="the next labelled decision (L)">labelled &#x25B6;</button>' +
    '<span data-role="evaluator"></span></div>' +
    '<div data-role="graph"></div><div class="kc-legend" data-role="legend"></div>' +
    '<div class="kc-judge" data-role="judge"></div></div>';

  // one registry per page, whichever script element (a report, Jupyter outputs) starts it
  var reg = window.kcReplays = window.kcReplays || {viewers: [], active: null, keys: false};
  var viewers = reg.viewers;
  function data(el, role) {
    var s = el.querySelector('script[data-role="' + role + '"]');
    return s ? JSON.parse(s.textContent) : null;
  }
  // a viewer in el (div.kc-replay): doc is the replay document, ev the evaluation (or null);
  // without them, both are read from the div's JSON script elements
  function Viewer(el, doc, ev) {
    doc = doc || data(el, "doc");
    ev = ev === undefined ? data(el, "eval") : ev;
    var me = this, n = doc.steps.length, head = el.querySelector(".kc-title");
    el.textContent = "";
    if (head) el.appendChild(head);
    el.insertAdjacentHTML("beforeend", CONTROLS + '<div data-role="board"></div>' + (ev ? JUDGE : "") +
      '<div class="kc-result" data-role="result" hidden></div>');
    var q = function (s) { return el.querySelector(s); };
    var board = q('[data-role="board"]'), where = q('[data-role="where"]'), result = q('[data-role="result"]');
    var hands = q('[data-act="hands"]'), turnBox = q('[data-act="turn"]'), cursor = null, panel = null;
    hands.checked = el.getAttribute("data-hands") !== "false";
    turnBox.max = doc.turn_starts.length + 1;
    result.textContent = "Result: " + doc.result;
    var labelled = [];
    if (ev) {
      q('[data-role="graph"]').innerHTML = graph(doc, ev, n);
      q('[data-role="legend"]').innerHTML = legend(doc, ev);
      q('[data-role="evaluator"]').textContent = "judged by rollouts of " + ev.evaluator + " (" + (ev.view === "hindsight" ?
        "every card known" : "what each seat knew") + ", at most " + ev.budget + " worlds a decision)";
      cursor = q('[data-role="cursor"]');
      panel = q('[data-role="judge"]');
      q('[data-role="graph"]').addEventListener("click", function (e) {
        var pt = e.target.closest && e.target.closest("g.kc-pt");
        if (pt) me.show(+pt.getAttribute("data-step"));
      });
      labelled = ev.points.filter(function (p) { return p.kind === "decision" && p.label; }).map(function (p) { return p.step; });
    }
    this.step = 0;
    this.show = function (i) {
      me.step = Math.max(0, Math.min(n - 1, i));
      var pos = doc.steps[me.step], j = ev ? judged(doc, ev, me.step) : null;
      board.innerHTML = draw(doc, pos, hands.checked ? "all" : null, j && j.mark);
      el.setAttribute("data-step", me.step);
      el.setAttribute("data-turn", pos.turn);
      where.textContent = "decision " + me.step + " of " + (n - 1) + " \u00b7 turn " + pos.turn + " of " + doc.turn_starts.length;
      if (document.activeElement !== turnBox) turnBox.value = pos.turn;   // the box follows, unless being typed in
      result.hidden = me.step !== n - 1;
      if (ev) {
        var x = gx(me.step, n);
        cursor.setAttribute("x1", x); cursor.setAttribute("x2", x);
        panel.textContent = "";
        j.lines.forEach(function (t) { var d = document.createElement("div"); d.textContent = t; panel.appendChild(d); });
        el.setAttribute("data-judged", j.dec ? "true" : "false");
      }
    };
    this.go = function (t) {
      t = parseInt(t, 10);
      if (isNaN(t)) return;
      if (t > doc.turn_starts.length) me.show(n - 1); else me.show(doc.turn_starts[Math.max(1, t) - 1]);
    };
    this.jump = function (dir) {   // to the labelled decision before or after this step
      var s = dir > 0 ? labelled.filter(function (x) { return x > me.step; })[0]
        : labelled.filter(function (x) { return x < me.step; }).pop();
      if (s !== undefined) me.show(s);
    };
    this.toggle = function () { hands.checked = !hands.checked; me.show(me.step); };
    q('[data-act="first"]').onclick = function () { me.show(0); };
    q('[data-act="prev"]').onclick = function () { me.show(me.step - 1); };
    q('[data-act="next"]').onclick = function () { me.show(me.step + 1); };
    q('[data-act="last"]').onclick = function () { me.show(n - 1); };
    q('[data-act="go"]').onclick = function () { me.go(turnBox.value); };
    if (ev) {
      q('[data-act="prevlab"]').onclick = function () { me.jump(-1); };
      q('[data-act="nextlab"]').onclick = function () { me.jump(1); };
      q('[data-act="prevlab"]').disabled = q('[data-act="nextlab"]').disabled = !labelled.length;
    }
    turnBox.addEventListener("keydown", function (e) { if (e.key === "Enter") { me.go(turnBox.value); e.preventDefault(); } });
    hands.onchange = function () { me.show(me.step); };
    el.addEventListener("mousedown", function () { reg.active = me; });
    el.addEventListener("focusin", function () { reg.active = me; });
    el.setAttribute("data-steps", n);
    this.show(0);
  }
  if (!reg.keys) document.addEventListener("keydown", function (e) {
    var t = e.target && e.target.tagName, on = viewers.filter(function (x) { return x.el.isConnected; });
    var v = reg.active && reg.active.el.isConnected ? reg.active : on[0];
    if (!v || (t === "INPUT" && e.target.type !== "checkbox") || t === "SELECT" || t === "TEXTAREA") return;
    if (e.key === "ArrowRight") v.show(v.step + 1);
    else if (e.key === "ArrowLeft") v.show(v.step - 1);
    else if (e.key === "Home") v.show(0);
    else if (e.key === "End") v.show(1e9);
    else if (e.key === "h" || e.key === "H") v.toggle();
    else if (e.key === "l" || e.key === "L") v.jump(1);
    else if (e.key === "p" || e.key === "P") v.jump(-1);
    else return;
    e.preventDefault();
  });
  reg.keys = true;
  function add(el, doc, ev) {
    var v = new Viewer(el, doc, ev);
    v.el = el;
    el.kcViewer = v;
    viewers.push(v);
    return v;
  }
  // for pages that get the data otherwise (kc-sim serve fetches it): a viewer in el
  reg.mount = function (el, doc, ev) { return add(el, doc, ev || null); };
  function start() {
    var els = document.querySelectorAll("div.kc-replay");
    for (var i = 0; i < els.length; i++) if (!els[i].kcViewer && els[i].querySelector('script[data-role="doc"]')) add(els[i]);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
