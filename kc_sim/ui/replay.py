"""``kc-sim replay``: step through a recorded round turn by turn, with the picture of
``kc-sim play`` (``kc_sim.ui.render``).

The record (docs/formats.md) is rebuilt with :meth:`kc_sim.play.table.game.Game.from_position` from its
hands, table, stock and dealer (:func:`kc_sim.play.seeing.start_position`), and every turn is played again: the seat, each action
(legal when made), the stop that ends the list and the card drawn. At the end the replayed
result is compared with the recorded one. A record saved by ``kc-sim play`` when the player
quit (``result.end == "unfinished"``) replays up to where it stopped.

Records are chosen by position in the file (``--round K``: the K-th record, from 0).

:func:`write_replay_html` (``kc-sim replay --html``) writes the round as a browser replay
and :func:`write_position_svg` (``kc-sim render``) one position as SVG; both replay the
record with :func:`kc_sim.play.seeing.replay_doc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kc_sim.core import layout
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text
from kc_sim.play.table.game import why_illegal
from kc_sim.play.recording.recorded import RecordedRound
from kc_sim.play.seeing import record_position, record_turn, replay_doc, start_position
from kc_sim.support.atomic import write_text_atomic
from kc_sim.records.check import iter_records
from kc_sim.picture.replay_page import replay_page
from kc_sim.picture.svg import position_svg
from kc_sim.records.untrusted import display_names
from kc_sim.ui.render import RULE, render_table

__all__ = ["pick_record", "replay_record", "ReplayResult", "run_replay", "write_replay_html",
           "write_position_svg", "write_text", "record_label"]


@dataclass
class ReplayResult:
    """How a replay ended: the replayed round, whether its result equals the record's
    (None for an unfinished record), and the differences."""

    round: RecordedRound
    matches: bool | None
    differences: list[str]
    quit: bool = False


def _result_text(end, winner, penalties, names) -> str:
    if end == "unfinished":
        return "unfinished"
    who = f"winner seat {winner} ({names[winner]})" if winner is not None and 0 <= winner < len(names) else "no winner"
    return f"{end}, {who}, penalties {' '.join(str(p) for p in penalties)}"


def replay_record(rec: dict, *, echo: Callable[[str], None] = print, pause: Callable[[str], str] | None = None,
                  reveal: bool = False, where: str = "record") -> ReplayResult:
    """Replay one record, printing the table before every turn and what the turn did.
    ``pause`` (e.g. ``input``) is called between turns: ``q`` stops, end of input stops.
    Raises UserError for a record that cannot be replayed (an illegal action, a turn by the
    wrong seat)."""
    try:
        game = start_position(rec)
    except UserError as e:
        raise UserError(f"{where}: {e}") from None
    rr = RecordedRound(game, rec.get("seed"))
    names = display_names(rec["players"])          # shown cut and cleaned of terminal escapes
    turns = rec["turns"]
    if not isinstance(turns, list):
        raise UserError(f"{where}: field turns: expected a list of turn objects")
    total = len(turns)
    quit = False
    for t, turn in enumerate(turns):
        actions, ids = record_turn(where, t, turn, game)
        echo(RULE)
        echo(f"Turn {t + 1} of {total}: seat {game.seat} ({names[game.seat]})")
        echo(render_table(game, game.seat, names=names, reveal=reveal))
        for a in ids:
            reason = why_illegal(game, a) if a != layout.STOP else "stop inside an action list"
            if reason:
                raise UserError(f"{where}: turn {t}: action {action_text(a)} is illegal: {reason} "
                                "(check the file with kc-sim check)")
            rr.play(a)
        last = t == total - 1
        unfinished_end = last and rec["result"].get("end") == "unfinished" if isinstance(rec["result"], dict) else False
        stopped = False
        if not game.over and not unfinished_end:
            reason = why_illegal(game, layout.STOP)
            if reason:
                raise UserError(f"{where}: turn {t}: the action list ends, but stopping is illegal: {reason}")
            rr.play(layout.STOP)
            stopped = True
        drew = rr.turns[t]["drew"]
        played = ", ".join(actions) if actions else "no action"
        tail = ", stop" if stopped else (" (went out)" if game.over and game.winner is not None else "")
        drew_text = f"; drew {drew}" if drew is not None else ""
        echo(f"seat {turn['seat']} ({names[turn['seat']]}) plays: {played}{tail}{drew_text}")
        if drew != turn["drew"]:
            echo(f"  note: the record says drew {turn['drew']}, the replay drew {drew}")
        if pause is not None and not last:
            try:
                answer = pause("[Enter] next turn, q quit> ")
            except (EOFError, KeyboardInterrupt):
                echo("")
                answer = "q"
            if answer.strip().lower() in ("q", "quit", "exit"):
                quit = True
                break
    if quit:
        echo("replay stopped.")
        return ReplayResult(rr, None, [], quit=True)
    echo(RULE)
    echo(render_table(game, None if not game.over else (game.winner or 0), names=names, reveal=True))
    result = rec["result"] if isinstance(rec["result"], dict) else {}
    if result.get("end") == "unfinished":
        echo(f"The record is unfinished (the game was stopped after {total} turn{'s' if total != 1 else ''}); "
             "the replay stops here.")
        return ReplayResult(rr, None, [])
    if not game.over:
        diffs = [f"the record ends after {total} turns but the round is not over (seat {game.seat} to play)"]
    else:
        diffs = []
        if result.get("end") != game.end:
            diffs.append(f"end: recorded {result.get('end')!r}, replayed {game.end!r}")
        if result.get("winner") != game.winner:
            diffs.append(f"winner: recorded {result.get('winner')!r}, replayed {game.winner!r}")
        if result.get("penalties") != game.penalties:
            diffs.append(f"penalties: recorded {result.get('penalties')}, replayed {game.penalties}")
    replayed = _result_text(game.end, game.winner, game.penalties or [], names) if game.over else "not over"
    if diffs:
        echo(f"Replayed result: {replayed}")
        echo("DIFFERS from the record: " + "; ".join(diffs))
        return ReplayResult(rr, False, diffs)
    echo(f"Result: {replayed} (as recorded)")
    return ReplayResult(rr, True, [])


def pick_record(path, k: int) -> tuple[int, dict, int]:
    """(line, record, records in the file) of the ``k``-th record (from 0) of a game record
    file, unfinished ones included; the file is read one record at a time, and every record
    is checked (a malformed one is a UserError naming its line)."""
    found, count = None, 0
    for line, rec in iter_records(path, unfinished_ok=True):
        if count == k:
            found = (line, rec)
        count += 1
    if not count:
        raise UserError(f"{path}: no game records in the file (expected JSON Lines, one round per line)")
    if found is None:
        raise UserError(f"bad --round {k}: {path} holds {count} record{'s' if count != 1 else ''}, "
                        f"numbered 0 to {count - 1}")
    return (*found, count)


def write_text(out, text: str):
    """Write ``text`` to the file ``out`` (its folder made; a folder given is a UserError)."""
    from pathlib import Path

    out = Path(out)
    if out.is_dir():
        raise UserError(f"{out} is a folder: give a file name to write")
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(out, text)


def record_label(rec: dict) -> str:
    """Where a record comes from, for titles: the ``--seed`` of the command that made it when
    the record names it (``run_seed``: kc-sim record and tournaments write it), then the
    match, the round and the round's own deal seed (derived from the run's)."""
    where = f"match {rec['match']}, round {rec['round']}"
    run_seed = rec.get("run_seed")
    if isinstance(run_seed, int) and not isinstance(run_seed, bool):
        return f"--seed {run_seed}, {where} (deal seed {rec['seed']})"
    return f"seed {rec['seed']}, {where}"


def write_replay_html(path, k: int, out, judge=None) -> tuple:
    """Write the ``k``-th record of ``path`` as a self-contained replay page; returns
    (path written, the replay document). ``judge(path, k)``, when given, returns the
    evaluation data (:mod:`kc_sim.picture.evaluation`) of the round, drawn on the page; it is
    called once the record has replayed."""
    line, rec, _ = pick_record(path, k)
    title = f"{', '.join(display_names(rec['players']))} — {record_label(rec)}"
    doc = replay_doc(rec, where=f"{path}:{line}", title=title)
    evaluation = judge(path, k) if judge is not None else None
    return write_text(out, replay_page(doc, title=f"kc-sim replay: {title}", evaluation=evaluation)), doc


def parse_hands(text: str, players: int):
    """``--hands``: 'all', 'to-play' (None: the seat to act) or a seat number."""
    t = str(text).strip().lower()
    if t == "all":
        return "all"
    if t in ("to-play", "to_play", "toplay"):
        return None
    if t.isdigit() and int(t) < players:
        return int(t)
    raise UserError(f"bad --hands {text!r}: expected all, to-play, or a seat number from 0 to {players - 1}")


def write_position_svg(path, k: int, out, *, turn: int | None = None, hands: str = "all") -> tuple:
    """Write one position of the ``k``-th record of ``path`` as SVG (before turn ``turn``,
    from 1; default the end); returns (path written, replay document, position)."""
    line, rec, _ = pick_record(path, k)
    doc, pos = record_position(rec, turn, where=f"{path}:{line}")
    show = parse_hands(hands, doc["players"])
    svg = position_svg(pos, names=doc["names"], dealer=doc["dealer"], show=show,
                       title=record_label(rec))
    return write_text(out, svg), doc, pos


def run_replay(path, k: int = 0, *, pause: Callable[[str], str] | None = None, reveal: bool = False,
               echo: Callable[[str], None] = print) -> ReplayResult:
    """Replay the ``k``-th record (from 0) of a game record file."""
    line, rec, count = pick_record(path, k)
    echo(f"{path}: record {k} of {count} (line {line}): {record_label(rec)}, players {', '.join(display_names(rec['players']))}, dealer seat {rec['dealer']}")
    return replay_record(rec, echo=echo, pause=pause, reveal=reveal, where=f"{path}:{line}")
