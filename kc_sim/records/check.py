"""Checking game records: replay every round of a JSON Lines file through the reference engine.

A game record (docs/formats.md, format ``kc-sim/game/1``) holds a round's deal, the layout,
the stock and every turn. :func:`check_record` rebuilds the position with
:meth:`RefRound.from_position` and replays it: each turn's seat, the card drawn, every
action (legal when made), the stop that ends the list, and finally the result. It stops
at the first problem of a record, since later turns would be meaningless.

Action text (part of the public record format):
``CARD>PILE`` places a card from the hand (``7H>E``, ``KS>NE``); ``PILE>PILE`` moves a
whole side pile (``N>E``, ``W>NW``); ``stop`` is the stop action (448), which records
leave implicit: a turn's action list ends where the player stopped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kc_sim.errors import UserError
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.cards import card_text, parse_card, parse_pile
from kc_sim.game.reference import STOP, RefRound
from kc_sim.game.rules import RuleSet
from kc_sim.records.format import FORMAT
from kc_sim.records.untrusted import MAX_LINE_BYTES, loads, preview

REQUIRED = ("format", "rules", "seed", "match", "round", "players", "dealer",
            "hands", "table", "stock", "turns", "result")
RULE_SWITCHES = ("draw", "layout_kings", "king_on_empty_side", "decks", "must_play_kings", "scoring")


# --- loading -------------------------------------------------------------------------

@dataclass
class _Turn:
    seat: int
    drew: int | None
    actions: list[int]


@dataclass
class ParsedRecord:
    """A record's content as ids."""

    rules: RuleSet
    players: int
    dealer: int
    hands: list[list[int]]
    piles: list[list[int]]
    stock: list[int]
    turns: list[_Turn]
    end: object
    winner: object
    penalties: list


def _int(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"field {where}: got {preview(value)}, expected an integer")
    return value


def _text(value, where: str, what: str, longest: int) -> str:
    """A short string field (card, pile or action text), checked before it is parsed."""
    if not isinstance(value, str) or len(value) > longest:
        raise UserError(f"field {where}: got {preview(value)}, expected {what}")
    return value


def _list(value, where: str, what: str) -> list:
    if not isinstance(value, list):
        raise UserError(f"field {where}: got {type(value).__name__}, expected a list of {what}")
    return value


def _cards(value, where: str) -> list[int]:
    out = []
    for i, text in enumerate(_list(value, where, "card texts")):
        try:
            out.append(parse_card(_text(text, f"{where}[{i}]", "a card text such as 7H or TD", 4)))
        except UserError as e:
            raise UserError(f"field {where}[{i}]: {e}") from None
    return out


def _rules(value) -> RuleSet:
    if not isinstance(value, dict):
        raise UserError(f"field rules: got {type(value).__name__}, expected an object with {', '.join(RULE_SWITCHES)}")
    missing = [k for k in RULE_SWITCHES if k not in value]
    unknown = [k for k in value if k not in RULE_SWITCHES and k != "match"]
    if missing or unknown:
        raise UserError(f"field rules: missing {missing} / unknown {preview(unknown)}; expected the switches "
                        f"{', '.join(RULE_SWITCHES)}")
    try:
        return RuleSet(**{k: value[k] for k in RULE_SWITCHES})
    except UserError as e:
        raise UserError(f"field rules: {e}") from None


def parse_record(rec, unfinished_ok: bool = False) -> ParsedRecord:
    """Turn a record dict into ids; raises UserError naming the field that is missing or
    malformed. ``unfinished_ok`` accepts ``result.end == "unfinished"`` (a round stopped by a
    fault or by a player quitting), which can be replayed but not checked."""
    if not isinstance(rec, dict):
        raise UserError(f"got {type(rec).__name__}, expected a JSON object (one game record per line)")
    missing = [k for k in REQUIRED if k not in rec]
    if missing:
        raise UserError(f"missing field(s) {', '.join(missing)}: a game record needs {', '.join(REQUIRED)}")
    if rec["format"] != FORMAT:
        raise UserError(f"field format: got {preview(rec['format'])}, expected {FORMAT!r}")
    for key in ("seed", "match", "round"):
        _int(rec[key], key)
    rules = _rules(rec["rules"])
    names = _list(rec["players"], "players", "agent names")
    if not all(isinstance(n, str) for n in names):
        raise UserError(f"field players: got {preview(names)}, expected a list of agent names (strings)")
    players = len(names)
    hands = [_cards(h, f"hands[{i}]") for i, h in enumerate(_list(rec["hands"], "hands", "hands"))]
    if not isinstance(rec["table"], dict):
        raise UserError("field table: expected an object {pile: [cards base first]}")
    piles: list[list[int]] = [[] for _ in range(8)]
    for name, cards in rec["table"].items():
        try:
            pile = parse_pile(_text(name, "table", "pile names (N E S W NE SE SW NW)", 2))
        except UserError as e:
            raise UserError(f"field table: {e}") from None
        piles[pile] = _cards(cards, f"table.{name}")
    turns = []
    for i, turn in enumerate(_list(rec["turns"], "turns", "turn objects")):
        where = f"turns[{i}]"
        if not isinstance(turn, dict):
            raise UserError(f"field {where}: expected an object with seat, drew, actions")
        absent = [k for k in ("seat", "drew", "actions") if k not in turn]
        if absent:
            raise UserError(f"field {where}: missing {', '.join(absent)}; expected seat, drew, actions")
        drew = None if turn["drew"] is None else _cards([turn["drew"]], f"{where}.drew")[0]
        actions = []
        for j, text in enumerate(_list(turn["actions"], f"{where}.actions", "action texts")):
            try:
                actions.append(parse_action(_text(text, f"{where}.actions[{j}]", "an action text such as 7H>E, "
                                                  "N>E or stop", 8)))
            except UserError as e:
                raise UserError(f"field {where}.actions[{j}]: {e}") from None
        turns.append(_Turn(_int(turn["seat"], f"{where}.seat"), drew, actions))
    result = rec["result"]
    if not isinstance(result, dict) or any(k not in result for k in ("end", "winner", "penalties")):
        raise UserError("field result: expected an object with end, winner, penalties")
    ends = ("out", "blocked", "unfinished") if unfinished_ok else ("out", "blocked")
    if result["end"] not in ends:
        raise UserError(f"field result.end: got {preview(result['end'])}, expected {' or '.join(map(repr, ends))}")
    if result["winner"] is not None:
        _int(result["winner"], "result.winner")
    penalties = [_int(p, f"result.penalties[{i}]")
                 for i, p in enumerate(_list(result["penalties"], "result.penalties", "integers"))]
    return ParsedRecord(rules, players, _int(rec["dealer"], "dealer"), hands, piles,
                   _cards(rec["stock"], "stock"), turns, result["end"], result["winner"], penalties)


def iter_records(path, unfinished_ok: bool = False):
    """(line number, record) for every non-blank line of a game record file, read one line
    at a time, each parsed (see :func:`parse_record`); raises a one-line UserError naming
    the file and line of the first bad one. A line is at most
    :data:`~kc_sim.records.untrusted.MAX_LINE_BYTES` long and nests at most
    :data:`~kc_sim.records.untrusted.MAX_DEPTH` deep, so no file can exhaust memory or the
    parser's stack."""
    path = Path(path)
    expected = "a game record file (JSON Lines)"
    try:
        f = path.open("rb")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file: expected {expected}") from None
    except IsADirectoryError:
        raise UserError(f"{path}: a folder: expected {expected}") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read ({e.strerror or e}): expected {expected} you can read") from None
    with f:
        n = 0
        while True:
            try:
                line = f.readline(MAX_LINE_BYTES + 1)
            except OSError as e:
                raise UserError(f"{path}: cannot read ({e.strerror or e}): expected {expected}") from None
            if not line:
                return
            n += 1
            if len(line) > MAX_LINE_BYTES:
                raise UserError(f"{path}:{n}: a line of over {MAX_LINE_BYTES:,} bytes: expected one game record "
                                "per line (a record is a few kB)")
            if not line.strip():
                continue
            rec = loads(line, f"{path}:{n}", expected="one game record object per line")
            try:
                parse_record(rec, unfinished_ok)
            except UserError as e:
                raise UserError(f"{path}:{n}: {e}") from None
            yield n, rec


def read_records(path, unfinished_ok: bool = False) -> list[tuple[int, dict]]:
    """Every (line number, record) of :func:`iter_records`, as a list."""
    return list(iter_records(path, unfinished_ok))


def load_records(path) -> list[dict]:
    """The game records of a JSON Lines file, each checked for required fields and well-formed
    card/pile/action texts (not yet replayed). Raises UserError naming the file and line."""
    return [rec for _, rec in read_records(path)]


# --- replay --------------------------------------------------------------------------

@dataclass
class Problem:
    """One thing wrong with a record: where (record index, seed/match/round, turn index,
    action text) and what, with the legal actions at that point as text."""

    record: int
    seed: object
    match: object
    round: object
    turn: int | None
    action: str | None
    message: str
    legal: list[str] = field(default_factory=list)
    line: int | None = None

    def __str__(self) -> str:
        where = f"record {self.record}"
        if self.line is not None:
            where += f" (line {self.line})"
        where += f" seed {self.seed} match {self.match} round {self.round}"
        if self.turn is not None:
            where += f", turn {self.turn}"
        if self.action is not None:
            where += f", action {self.action}"
        legal = f" [legal: {' '.join(self.legal)}]" if self.legal else ""
        return f"{where}: {self.message}{legal}"


def _legal_text(ref: RefRound) -> list[str]:
    return [action_text(a) for a in sorted(ref.legal_actions())]


def _card_count_message(p: ParsedRecord) -> str | None:
    """'Every card present the right number of times': once, or twice with decks=2."""
    seen = Counter(c for h in p.hands for c in h)
    seen.update(c for pile in p.piles for c in pile)
    seen.update(p.stock)
    want = p.rules.decks
    missing = [card_text(c) for c in range(52) if seen[c] < want]
    extra = [card_text(c) for c in range(52) if seen[c] > want]
    if not missing and not extra:
        return None
    return (f"cards in hands/table/stock: missing {' '.join(missing) or '-'}, too many {' '.join(extra) or '-'} "
            f"(expected each of the 52 cards {want} time(s))")


def _drew_text(c: int | None) -> str:
    return "null" if c is None else card_text(c)


def check_record(rec: dict, index: int = 0, line: int | None = None) -> list[Problem]:
    """Replay one record through the reference; [] if it is valid, else the first problem.

    A round a fault stopped (the record kc-sim saves with a ``fault`` field, ``result.end``
    "unfinished") is checked as far as it went: every turn legal, the last one the actions
    played before the fault (no stop, no draw), and the round not over."""
    ids = rec if isinstance(rec, dict) else {}
    fault_record = isinstance(rec, dict) and "fault" in rec

    def problem(message, turn=None, action=None, ref=None):
        legal = _legal_text(ref) if ref is not None else []
        return [Problem(index, ids.get("seed"), ids.get("match"), ids.get("round"),
                        turn, action, message, legal, line)]

    try:
        p = parse_record(rec, unfinished_ok=fault_record)
        if len(p.hands) != p.players:
            raise UserError(f"{len(p.hands)} hands for {p.players} players")
        bad_cards = _card_count_message(p)
        if bad_cards:
            raise UserError(bad_cards)
        ref = RefRound.from_position(p.rules, p.players, p.dealer, p.hands, p.piles, p.stock)
    except UserError as e:
        return problem(str(e))

    for t, turn in enumerate(p.turns):
        if ref.over:
            return problem(f"the round already ended ({ref.end}); no turn should follow", t)
        if turn.seat != ref.seat:
            return problem(f"seat {turn.seat} plays, but it is seat {ref.seat}'s turn", t, ref=ref)
        if p.rules.draw != "end" and turn.drew != ref.drew:
            return problem(f"drew {_drew_text(turn.drew)}, but with draw={p.rules.draw} the draw "
                           f"at the start of this turn is {_drew_text(ref.drew)}", t, ref=ref)
        for a in turn.actions:
            text = action_text(a)
            if ref.over:
                return problem(f"action after the round ended ({ref.end})", t, text)
            if a == STOP:
                return problem("stop inside an action list: the list ends where the player stopped", t, text, ref)
            reason = ref.why_illegal(a)
            if reason:
                return problem(f"illegal: {reason}", t, text, ref)
            ref.play(a)
        if p.end == "unfinished" and t == len(p.turns) - 1:
            break                                   # the turn the fault stopped
        if not ref.over:
            reason = ref.why_illegal(STOP)
            if reason:
                return problem(f"the action list ends here, but stopping is illegal: {reason}", t, "stop", ref)
            ref.play(STOP)
        expected = ref.history[-1].drew
        if turn.drew != expected:
            return problem(f"drew {_drew_text(turn.drew)}, but the reference drew {_drew_text(expected)} "
                           f"(draw={p.rules.draw})", t)

    if p.end == "unfinished":
        return problem(f"result: end 'unfinished', but the round ended ({ref.end})") if ref.over else []
    if not ref.over:
        return problem(f"the record ends after {len(p.turns)} turns but the round is not over "
                       f"(next: seat {ref.seat})", len(p.turns), ref=ref)
    diffs = []
    if p.end != ref.end:
        diffs.append(f"end {p.end!r}, expected {ref.end!r}")
    if p.winner != ref.winner:
        diffs.append(f"winner {p.winner!r}, expected {ref.winner!r}")
    if p.penalties != ref.penalties:
        diffs.append(f"penalties {p.penalties}, expected {ref.penalties} (scoring={p.rules.scoring})")
    if diffs:
        return problem("result: " + "; ".join(diffs))
    return []


def check_file(path) -> tuple[int, list[Problem]]:
    """(number of records, problems over all records) for a game record file, read one
    record at a time."""
    problems: list[Problem] = []
    count = 0
    for i, (n, rec) in enumerate(iter_records(path, unfinished_ok=True)):
        problems.extend(check_record(rec, i, n))
        count += 1
    return count, problems
