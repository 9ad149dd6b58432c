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

With an evaluation (``kc-sim analyse -o OUT.html``, ``kc-sim replay --html --analyse``;
:mod:`kc_sim.picture.evaluation`), the viewer also draws the evaluation graph (one SVG: each
judged seat's win probability along the round, decisions marked by their label, draws by
their luck; a click on a point goes to its step) and, at each judged decision, the best
action and the action played on the board (arrows, highlighted cards and target) with the
text ``best: 7H>E (+8.1 points)``. The script is :file:`replay.js` of this package, the one
kc-sim serve serves too.

DOM hooks (for tests and tools), inside each ``div.kc-replay``: ``data-step``/``data-steps``
on the div, ``[data-role=board] svg`` with ``g.pile[data-pile][data-cards]``,
``g.hand[data-seat][data-cards][data-hidden][data-count]``, ``[data-role=stock][data-count]``,
``[data-role=last]``, ``[data-role=result]``, and buttons ``[data-act=first|prev|next|last|go]``;
with an evaluation: ``data-judged`` on the div, ``[data-role=graph] svg`` with
``g.kc-pt[data-kind=decision|draw|deal][data-step][data-seat][data-label]``, the board's
``g.card.kc-best``/``.kc-played``, ``g.pile.kc-best-to``, ``[data-role=best]`` (the text on
the board), ``[data-role=judge]`` (the decision in words), buttons ``[data-act=prevlab|nextlab]``.
"""

from __future__ import annotations

import html
import importlib.resources
import json

from kc_sim.picture.svg import GEOMETRY, SUIT_GLYPH, SVG_CSS

__all__ = ["analysis_page", "replay_page", "replay_block", "json_for_script", "replay_script", "EVAL_CSS", "PAGE_CSS", "PAGE_SCRIPT"]

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

#: the marks of a judged decision on the board and the evaluation graph (shared with kc-sim serve)
EVAL_CSS = """
.kc .kc-best .face{stroke:#1b9e3e;stroke-width:4}.kc .kc-played .face{stroke:#d84315;stroke-width:3;stroke-dasharray:5 3}
.kc .kc-best-to .empty,.kc .stock.kc-best .back,.kc .stock.kc-best .empty{stroke:#7CFC8A;stroke-width:3.5}
.kc .kc-arrow line{stroke-width:4;stroke-linecap:round}.kc .kc-arrow.kc-best line{stroke:#7CFC8A}
.kc .kc-arrow.kc-best polygon{fill:#7CFC8A}.kc .kc-arrow.kc-played line{stroke:#ffab91;stroke-dasharray:7 5}
.kc .kc-arrow.kc-played polygon{fill:#ffab91}.kc .kc-besttext{font-size:16px;font-weight:bold;fill:#eaffea}
.kc-eval{margin:0.3em 0;max-width:660px}.kc-graph{display:block;max-width:100%;height:auto;background:#fff}
.kc-gbg{fill:#fafafa;stroke:#ccc}.kc-grid{stroke:#e4e4e4}.kc-gtxt{font:11px Helvetica,Arial,sans-serif;fill:#666}
.kc-cursor{stroke:#555;stroke-width:1.5;stroke-dasharray:3 3}.kc-line{fill:none;stroke-width:2}
.kc-pt{cursor:pointer}.kc-dot{fill:#fff;stroke-width:2}.kc-dot.inaccuracy,.kc-sw.inaccuracy{fill:#f9c80e;background:#f9c80e}
.kc-dot.mistake,.kc-sw.mistake{fill:#f08a24;background:#f08a24}.kc-dot.blunder,.kc-sw.blunder{fill:#d62828;background:#d62828}
.kc-luck{stroke-width:1.2}.kc-luck.good{fill:#2e7d32;stroke:#2e7d32}.kc-luck.bad{fill:#c62828;stroke:#c62828}
.kc-luck.unsure{fill:#fff}
.s0{stroke:#1f5fbf;color:#1f5fbf}.s1{stroke:#8e44ad;color:#8e44ad}.s2{stroke:#00897b;color:#00897b}
.s3{stroke:#6d4c41;color:#6d4c41}.s4{stroke:#546e7a;color:#546e7a}.s5{stroke:#c2185b;color:#c2185b}
.kc-legend{font-size:12px;color:#444;margin:0.2em 0}.kc-key{margin-right:0.9em;white-space:nowrap}
.kc-sw{display:inline-block;width:0.8em;height:0.8em;border-radius:50%;margin-right:0.25em;vertical-align:-1px}
.kc-judge{font-size:14px;margin:0.3em 0;padding:0.3em 0.5em;background:#eef6ee;border:1px solid #b9d8b9}
"""

PAGE_CSS = PAGE_CSS + EVAL_CSS

#: the viewer's script (:file:`replay.js`, package data): one file for this page and kc-sim serve
PAGE_SCRIPT = importlib.resources.files("kc_sim.picture").joinpath("replay.js").read_text(encoding="utf-8")


def replay_script() -> str:
    """The viewer's script with the table's geometry put in (what a page inlines and kc-sim
    serve serves as ``/static/replay.js``)."""
    return (PAGE_SCRIPT.replace("__GEOMETRY__", json.dumps(GEOMETRY))
            .replace("__GLYPHS__", json.dumps(SUIT_GLYPH)))


_script = replay_script


#: what JSON embedded in HTML escapes: ``<`` ``>`` ``&`` (so neither ``</script>`` nor ``<!--``
#: can end or comment out the script) and, by ``ensure_ascii``, every non-ASCII character,
#: U+2028 and U+2029 among them (line ends in older JavaScript); lone surrogates too
_HTML_JSON = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def json_for_script(doc) -> str:
    """``doc`` as JSON that is safe inside any HTML ``<script>`` element: nothing in it can
    end the element, open a comment or break the page's encoding; ``JSON.parse`` reads it
    back unchanged."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True).translate(_HTML_JSON)


def replay_block(doc: dict, uid: str, *, heading: str | None = None, hands: bool = True,
                 evaluation: dict | None = None) -> str:
    """One viewer (``<div class="kc-replay">``) for a replay document, with the evaluation
    graph and the judged decisions' best actions when ``evaluation`` (from
    :func:`kc_sim.picture.evaluation.evaluation_data`) is given; the page that holds it needs
    :data:`PAGE_CSS` and the script once (:func:`page_assets`). ``hands``: start with every
    hand shown. The script builds the controls; the data rides in JSON script elements."""
    e = html.escape
    head = f'<div class="kc-title">{e(heading)}</div>' if heading else ""
    judged = (f'<script type="application/json" data-role="eval">{json_for_script(evaluation)}</script>'
              if evaluation is not None else "")
    return (
        f'<div class="kc-replay" id="{e(uid)}" tabindex="0" data-hands="{"true" if hands else "false"}">{head}'
        f'<script type="application/json" data-role="doc">{json_for_script(doc)}</script>{judged}</div>'
    )


def page_assets() -> str:
    """The style and script a page with viewers needs, once (put the script after the viewers
    or anywhere: it starts when the page has loaded)."""
    return f"<style>{PAGE_CSS}</style><script>{_script()}</script>"


_KEYS = ("keys: Left/Right arrow step one decision, Home/End first/last, H hides or shows the other hands")
_JUDGE_KEYS = "; L/P the next/previous labelled decision; click a point of the graph to go to its step"


def _page(title: str, intro: str, blocks: str) -> str:
    e = html.escape
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(title)}</title><style>{PAGE_CSS}"
        "body{margin:1em;color:#222}</style></head><body>"
        f"<h1 style=\"font-size:1.3em\">{e(title)}</h1>"
        f'<p class="kc-help">{intro}</p>' + blocks + f"<script>{_script()}</script></body></html>"
    )


def replay_page(doc: dict, *, title: str = "kc-sim replay", evaluation: dict | None = None) -> str:
    """A whole HTML page with one viewer (with the evaluation graph when ``evaluation`` is given)."""
    e = html.escape
    names = ", ".join(f"seat {s}: {n}" for s, n in enumerate(doc["names"]))
    intro = f"{e(names)} &middot; rules {e(doc['rules'])} &middot; {_KEYS}" + (_JUDGE_KEYS if evaluation else "")
    return _page(title, intro, replay_block(doc, "replay", evaluation=evaluation))


def analysis_page(rounds: list, *, title: str, intro: str) -> str:
    """A whole HTML page with one viewer per judged round: ``rounds`` lists ``(heading,
    replay doc, evaluation)``; ``intro`` is plain text (escaped here)."""
    blocks = "".join(replay_block(doc, f"round-{i}", heading=head, evaluation=ev)
                     for i, (head, doc, ev) in enumerate(rounds))
    return _page(title, html.escape(intro) + " &middot; " + _KEYS + _JUDGE_KEYS, blocks)
