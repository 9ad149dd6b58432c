// The page of kc-sim serve: it plays through the same JSON API as any client (docs/serve.md).
// The table picture is the server's (kc_sim.picture.svg, as kc-sim render draws it); every other
// text is set with textContent, never parsed as HTML. The game's id is kept in the address
// (#game=ID), so a reload keeps the game and each tab plays its own.
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var app = $("app"), gid = null, view = null, selected = null, busy = false;

  function api(method, path, body) {
    var opts = {method: method, headers: {}};
    if (body !== undefined) {
      opts.headers["content-type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (r) {
      return r.json().catch(function () { return {error: "the server answered " + r.status}; }).then(function (j) {
        if (!r.ok) { var e = new Error(j.error || ("error " + r.status)); e.status = r.status; throw e; }
        return j;
      });
    });
  }

  function say(text, ok) { var m = $("msg"); m.textContent = text || ""; m.className = ok ? "ok" : ""; }
  function setBusy(b) { busy = b; app.dataset.busy = b ? "true" : "false"; }
  function pace() { return +$("pace").value; }
  function wait(ms) { return new Promise(function (res) { setTimeout(res, ms); }); }

  // --- setup --------------------------------------------------------------------------
  function loadConfig() {
    return api("GET", "/api/config").then(function (cfg) {
      ["opp1", "opp2", "opp3"].forEach(function (id, i) {
        var sel = $(id);
        sel.textContent = "";
        if (i > 0) { var none = document.createElement("option"); none.value = ""; none.textContent = "(none)"; sel.appendChild(none); }
        cfg.agents.forEach(function (a) {
          var o = document.createElement("option");
          o.value = a.name; o.textContent = a.name; o.title = a.description;
          sel.appendChild(o);
        });
        if (i === 1 && cfg.agents.length > 1) sel.value = cfg.agents[1].name;
      });
    });
  }

  function startGame(ev) {
    ev.preventDefault();
    var opps = ["opp1", "opp2", "opp3"].map(function (id) { return $(id).value; }).filter(Boolean);
    var body = {opponents: opps, rules: $("rules").value.trim() || "classic", length: $("length").value};
    if ($("name").value.trim()) body.name = $("name").value.trim();
    if ($("seed").value !== "") body.seed = +$("seed").value;
    say("");
    api("POST", "/api/games?svg=true", body).then(function (st) {
      gid = st.game;
      history.replaceState(null, "", "#game=" + encodeURIComponent(gid));
      $("log").textContent = "";
      show(true);
      return render(st, true);
    }).catch(function (e) { say(e.message); });
  }

  function show(playing) {
    $("setup").hidden = playing; $("play").hidden = !playing;
    app.dataset.phase = playing ? (view ? view.phase : "loading") : "setup";
  }

  // --- drawing --------------------------------------------------------------------------
  function board(svg) {
    $("board").innerHTML = svg;        // the server's picture: its text is escaped there
    selected = null;
    if (!view) return;
    var mine = $("board").querySelector('g.hand[data-seat="' + view.you + '"]');
    if (mine) mine.dataset.mine = "true";
  }

  function logLine(text) {
    var li = document.createElement("li");
    li.textContent = text;
    $("log").insertBefore(li, $("log").firstChild);
  }

  function stepText(st) {
    var what = st.action === "stop" ? "stops" : "plays " + st.action;
    return st.name + " " + what + (st.drew ? " and draws a card" : "") + " (" + st.cards + " card" + (st.cards === 1 ? "" : "s") + " left)";
  }

  async function render(st, animate) {
    var steps = st.steps || [];
    view = st;
    if (animate && steps.length) {
      setBusy(true);
      app.dataset.phase = "agents";
      for (var i = 0; i < steps.length; i++) {
        logLine(stepText(steps[i]));
        if (pace() > 0) { board(steps[i].svg); await wait(pace()); }
      }
    }
    board(st.svg);
    setBusy(false);
    app.dataset.phase = st.phase;
    $("info").textContent = "Round " + st.round + (st.length === "to_25" ? " (to 25 points)" : " of " + st.length) +
      " \u00b7 " + st.players.map(function (p) { return p.name + " " + p.score; }).join(", ");
    legal(st);
    result(st);
    if (st.phase === "your_turn" && st.drew && animate) say("You drew " + st.drew + ".", true);
    if (st.failed) say(st.failed + " (New game starts another.)");
  }

  function legal(st) {
    var box = $("legal");
    box.textContent = "";
    st.legal.forEach(function (a) {
      var b = document.createElement("button");
      b.type = "button"; b.textContent = a; b.dataset.action = a;
      b.addEventListener("click", function () { play(a); });
      box.appendChild(b);
    });
    $("stop").disabled = st.phase !== "your_turn";
    $("controls").hidden = $("legal-box").hidden = st.phase !== "your_turn";
  }

  function result(st) {
    var r = st.result, box = $("result");
    box.hidden = !r;
    if (!r) { $("review").textContent = ""; return; }
    var names = st.players.map(function (p) { return p.name; });
    var how = r.winner !== null ? names[r.winner] + " went out" : "the round is blocked";
    $("result-title").textContent = "Round " + st.round + " over: " + how + ".";
    var tb = box.querySelector("tbody");
    tb.textContent = "";
    st.players.forEach(function (p, s) {
      var tr = document.createElement("tr");
      [p.name, r.penalties[s], p.score].forEach(function (x) { var td = document.createElement("td"); td.textContent = x; tr.appendChild(td); });
      tb.appendChild(tr);
    });
    $("saved").textContent = r.saved ? "The round is saved as a kc-sim/game/1 record (round " + r.record + " of this game: GET /api/games/ID/rounds/" + r.record + ")."
      : "The round could not be saved: " + r.not_saved;
    showAnalysis(r.record);
    $("next").hidden = st.phase !== "round_over";
    if (st.match) {
      $("result-title").textContent += " The game is over: " + st.match.winners.join(" and ") + (st.match.winners.length > 1 ? " share the win." : " wins.");
    }
  }

  // the finished round's analysis: asked for once the round is shown (it takes seconds); the
  // round is then replayed below with its evaluation graph and the costliest decision's better
  // action on the board (the viewer of kc-sim replay --html: /static/replay.js)
  function showAnalysis(k) {
    var box = $("analysis"), forGame = gid;
    $("review").textContent = "";
    box.textContent = "Analysis of your play in this round: judging your decisions...";
    api("GET", "/api/games/" + encodeURIComponent(gid) + "/rounds/" + k + "/analysis").then(function (a) {
      if (gid !== forGame) return;
      var l = a.labels, head = document.createElement("p");
      box.textContent = "";
      head.textContent = "Analysis (evaluator " + a.evaluator + "): error rate " + a.error_rate.toFixed(2) +
        " points of win probability per decision, accuracy " + a.accuracy.toFixed(1) + "%; " + l.blunder +
        " blunder(s), " + l.mistake + " mistake(s), " + l.inaccuracy + " inaccuracy(ies)." +
        (a.costliest.length ? " Your costliest decisions (click one to see it on the board):" : "");
      box.appendChild(head);
      var viewer = review(a);
      a.costliest.forEach(function (d, i) {
        var b = document.createElement("button");
        b.type = "button"; b.className = "costly"; b.dataset.step = d.step;
        b.textContent = "Turn " + d.turn + ": you played " + d.played + ", " + d.better + " was better by " +
          d.loss.toFixed(1) + " points [" + d.loss_ci[0].toFixed(1) + ", " + d.loss_ci[1].toFixed(1) + "] (" + d.label + ").";
        b.addEventListener("click", function () { if (viewer) { viewer.show(d.step); $("review").scrollIntoView(); } });
        box.appendChild(b);
        if (i === 0 && viewer) viewer.show(d.step);
      });
    }).catch(function (e) { if (gid === forGame) box.textContent = "Analysis is not available: " + e.message; });
  }

  // the judged round in a replay viewer: the graph of your win probability, each decision on the board
  function review(a) {
    if (!window.kcReplays || !a.replay || !a.graph) return null;
    var el = document.createElement("div");
    el.className = "kc-replay"; el.tabIndex = 0; el.dataset.hands = "false";
    var t = document.createElement("div");
    t.className = "kc-title"; t.textContent = "The round replayed: your win probability along it, as judged";
    el.appendChild(t);
    $("review").appendChild(el);
    return window.kcReplays.mount(el, a.replay, a.graph);
  }

  // --- playing --------------------------------------------------------------------------
  function play(action) {
    if (busy || !gid) return;
    setBusy(true);
    api("POST", "/api/games/" + encodeURIComponent(gid) + "/actions?svg=true", {action: action}).then(function (st) {
      var mine = st.players[st.you], drew = action === "stop" && mine.last_turn && mine.last_turn.card;
      say("You played " + action + "." + (drew ? " You drew " + drew + "." : ""), true);
      logLine("you play " + action + (drew ? " and draw " + drew : ""));
      return render(st, true);
    }).catch(function (e) { setBusy(false); clearSel(); say(e.message); if (e.status === 404) gone(); });
  }

  function nextRound() {
    if (busy || !gid) return;
    setBusy(true);
    api("POST", "/api/games/" + encodeURIComponent(gid) + "/next?svg=true").then(function (st) {
      say(""); logLine("round " + st.round + " dealt");
      return render(st, true);
    }).catch(function (e) { setBusy(false); say(e.message); });
  }

  function gone() { gid = null; view = null; history.replaceState(null, "", "#"); show(false); }

  function clearSel() {
    selected = null;
    Array.prototype.forEach.call($("board").querySelectorAll(".sel"), function (n) { n.classList.remove("sel"); });
  }

  function mark(node, sel) { clearSel(); selected = sel; node.classList.add("sel"); }

  function onBoardClick(ev) {
    if (dragged) { dragged = false; return; }        // the end of a drag is no click
    if (busy || !view || view.phase !== "your_turn") return;
    var card = ev.target.closest("[data-card]"), hand = ev.target.closest("g.hand"), pile = ev.target.closest("g.pile");
    if (card && hand && hand.dataset.mine === "true") {
      if (selected && selected.card === card.dataset.card) { clearSel(); return; }
      mark(card, {card: card.dataset.card});
      say("Selected " + card.dataset.card + ": now click the pile to put it on.", true);
      return;
    }
    if (!pile) return;
    var name = pile.dataset.pile;
    if (selected && selected.card) { play(selected.card + ">" + name); return; }
    if (selected && selected.pile) {
      if (selected.pile === name) { clearSel(); return; }
      play(selected.pile + ">" + name); return;
    }
    if (["N", "E", "S", "W"].indexOf(name) >= 0 && pile.dataset.cards) {
      mark(pile, {pile: name});
      say("Selected the pile " + name + ": now click the pile to move it onto.", true);
    } else {
      say("Select a card of your hand (or a side pile to move) first.");
    }
  }

  // dragging: press on a card of your hand (or a side pile), let go over the target pile
  var drag = null, dragged = false;
  function source(target) {
    var card = target.closest("[data-card]"), hand = target.closest("g.hand"), pile = target.closest("g.pile");
    if (card && hand && hand.dataset.mine === "true") return card.dataset.card;
    if (pile && ["N", "E", "S", "W"].indexOf(pile.dataset.pile) >= 0 && pile.dataset.cards) return pile.dataset.pile;
    return null;
  }
  function onDown(ev) {
    if (busy || !view || view.phase !== "your_turn") return;
    var src = source(ev.target);
    drag = src ? {src: src, x: ev.clientX, y: ev.clientY} : null;
  }
  function onUp(ev) {
    var d = drag;
    drag = null;
    if (!d || Math.abs(ev.clientX - d.x) + Math.abs(ev.clientY - d.y) < 8) return;   // a click, not a drag
    var under = document.elementFromPoint(ev.clientX, ev.clientY), pile = under && under.closest("g.pile");
    dragged = true;
    if (pile && pile.dataset.pile !== d.src) play(d.src + ">" + pile.dataset.pile);
    else { clearSel(); say("Let go over the pile to put it on."); }
  }

  function onKey(ev) {
    var typing = ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT");
    if (ev.target === $("move") && ev.key === "Enter") { ev.preventDefault(); sendTyped(); return; }
    if (typing) return;
    if (ev.key === "Escape") { clearSel(); say(""); }
    else if (ev.key === "s" || ev.key === "S") { if (view && view.phase === "your_turn") play("stop"); }
    else if (ev.key === "n" || ev.key === "N") { if (view && view.phase === "round_over") nextRound(); }
    else if (ev.key === "/") { ev.preventDefault(); $("move").focus(); }
  }

  function sendTyped() {
    var t = $("move").value.trim();
    if (!t) return;
    $("move").value = "";
    play(t);
  }

  function resume() {
    var m = /[#&]game=([A-Za-z0-9_-]+)/.exec(location.hash);
    if (!m) { show(false); return; }
    gid = m[1];
    api("GET", "/api/games/" + gid + "?svg=true").then(function (st) { show(true); return render(st, false); })
      .catch(function (e) { gone(); say(e.message); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var p = localStorage.getItem("kc-pace");
    if (p !== null) $("pace").value = p;
    $("pace").addEventListener("change", function () { localStorage.setItem("kc-pace", $("pace").value); });
    $("setup").addEventListener("submit", startGame);
    $("board").addEventListener("click", onBoardClick);
    $("board").addEventListener("pointerdown", onDown);
    document.addEventListener("pointerup", onUp);
    $("stop").addEventListener("click", function () { play("stop"); });
    $("send").addEventListener("click", sendTyped);
    $("next").addEventListener("click", nextRound);
    $("newgame").addEventListener("click", function () {
      if (gid) api("DELETE", "/api/games/" + gid).catch(function () {});
      gone(); say("");
    });
    document.addEventListener("keydown", onKey);
    loadConfig().then(resume).catch(function (e) { say(e.message); });
  });
})();
