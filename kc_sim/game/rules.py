"""The rule set: one frozen value holding every switch on which the published rules disagree.

Rule sets are written as comma-separated presets and ``switch=value`` pairs, read
left to right, e.g. ``classic``, ``draw_first``, ``classic,draw=start,scoring=face``,
``decks=2,match=rounds:3``. Unknown switches or values are refused with the list of
what is allowed (and the closest one, "did you mean draw=end?"), so a typo never
silently runs the wrong game.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass

import numpy as np

from kc_sim.errors import UserError
from kc_sim.game.variants import (  # noqa: F401 - the R_* indices are re-exported for their users
    MATCH_TARGET,
    N_RULE_CODES,
    R_DECKS,
    R_DRAW,
    R_KING_ON_EMPTY_SIDE,
    R_LAYOUT_KINGS,
    R_MUST_PLAY_KINGS,
    R_SCORING,
    Draw,
    LayoutKings,
    MatchKind,
    Scoring,
    names,
)

# the value names, in the order of their numbers in the compiled rule vector (variants)
DRAW = names(Draw)
LAYOUT_KINGS = names(LayoutKings)
SCORING = names(Scoring)
MATCH_KIND_NAMES = names(MatchKind)
MATCH_HELP = f"to_{MATCH_TARGET}, rounds:N (N >= 1), eliminate_{MATCH_TARGET}"
_BOOLS = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}


@dataclass(frozen=True)
class RuleSet:
    """Every switch of the rule book; the defaults are the ``classic`` preset."""

    draw: str = "end"
    layout_kings: str = "stay"
    king_on_empty_side: bool = True
    decks: int = 1
    must_play_kings: bool = False
    scoring: str = "kings10"
    match: str = "to_25"

    def __post_init__(self):
        _check_choice("draw", self.draw, DRAW)
        _check_choice("layout_kings", self.layout_kings, LAYOUT_KINGS)
        _check_choice("scoring", self.scoring, SCORING)
        if self.decks not in (1, 2):
            raise UserError(f"bad rule value decks={self.decks!r}: expected one of 1, 2")
        if not isinstance(self.king_on_empty_side, bool) or not isinstance(self.must_play_kings, bool):
            raise UserError("bad rule value: king_on_empty_side and must_play_kings take true or false")
        _parse_match(self.match)

    @property
    def max_players(self) -> int:
        """Most players a round may seat: 4 with one deck, 8 with two."""
        return 8 if self.decks == 2 else 4

    @property
    def max_penalty(self) -> int:
        """The penalty of a hand holding every card of the deck(s), a bound on any round's
        penalty: 88 per deck with kings10 (4 kings at 10, 48 cards at 1), 340 with face."""
        per_deck = 88 if self.scoring == "kings10" else 4 * (sum(range(1, 11)) + 30)
        return per_deck * self.decks

    @property
    def match_kind(self) -> str:
        """``to_25``, ``rounds`` or ``eliminate_25``."""
        return _parse_match(self.match)[0]

    @property
    def match_code(self) -> MatchKind:
        """The match kind as the compiled core's number (``kc_sim.game.variants.MatchKind``)."""
        return MatchKind(MATCH_KIND_NAMES.index(self.match_kind))

    @property
    def match_rounds(self) -> int:
        """N for ``match=rounds:N``, else 0."""
        return _parse_match(self.match)[1]

    def check_players(self, players: int) -> None:
        """Refuse a player count these rules cannot seat."""
        if not 2 <= int(players) <= self.max_players:
            more = "" if self.decks == 2 else " (decks=2 allows up to 8)"
            raise UserError(f"bad player count {players}: these rules take 2 to {self.max_players} players{more}")

    def codes(self) -> np.ndarray:
        """The round switches as the int64 array the compiled core reads."""
        out = np.zeros(N_RULE_CODES, dtype=np.int64)
        out[R_DRAW] = DRAW.index(self.draw)
        out[R_LAYOUT_KINGS] = LAYOUT_KINGS.index(self.layout_kings)
        out[R_KING_ON_EMPTY_SIDE] = int(self.king_on_empty_side)
        out[R_DECKS] = self.decks
        out[R_MUST_PLAY_KINGS] = int(self.must_play_kings)
        out[R_SCORING] = SCORING.index(self.scoring)
        return out

    def round_dict(self) -> dict:
        """The round-level switches as written in a game record (the match switch is not one)."""
        d = dataclasses.asdict(self)
        del d["match"]
        return d

    def spec(self) -> str:
        """Canonical text form: every switch spelled out, parseable by :func:`parse_rules`."""
        parts = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            parts.append(f"{f.name}={str(v).lower() if isinstance(v, bool) else v}")
        return ",".join(parts)

    def __str__(self) -> str:
        return self.spec()


PRESETS: dict[str, dict] = {
    "classic": {},
    "draw_first": {"draw": "start", "layout_kings": "to_corner", "king_on_empty_side": False},
}

_SWITCH_HELP = {
    "draw": ", ".join(DRAW),
    "layout_kings": ", ".join(LAYOUT_KINGS),
    "king_on_empty_side": "true, false",
    "decks": "1, 2",
    "must_play_kings": "true, false",
    "scoring": ", ".join(SCORING),
    "match": MATCH_HELP,
}


def did_you_mean(word: str, choices, template: str = "{}") -> str:
    """`` (did you mean classic?)`` for the choice closest to a mistyped ``word`` (difflib's
    ratio at least 0.6), written through ``template``; empty when none is close."""
    close = difflib.get_close_matches(str(word).lower(), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {template.format(close[0])}?)" if close else ""


def _check_choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise UserError(f"bad rule value {name}={value!r}{did_you_mean(value, allowed, name + '={}')}: "
                        f"expected one of {', '.join(allowed)}")


def _parse_match(value: str) -> tuple[str, int]:
    v = str(value)
    if v in (MATCH_KIND_NAMES[MatchKind.TO_25], MATCH_KIND_NAMES[MatchKind.ELIMINATE_25]):
        return v, 0
    if v.startswith(MATCH_KIND_NAMES[MatchKind.ROUNDS] + ":"):
        n = v.split(":", 1)[1]
        if n.isdigit() and int(n) >= 1:
            return MATCH_KIND_NAMES[MatchKind.ROUNDS], int(n)
    raise UserError(f"bad rule value match={value!r}: expected one of {MATCH_HELP}")


def _coerce(name: str, raw: str):
    if name in ("king_on_empty_side", "must_play_kings"):
        if raw.lower() not in _BOOLS:
            raise UserError(f"bad rule value {name}={raw!r}: expected one of true, false")
        return _BOOLS[raw.lower()]
    if name == "decks":
        if raw not in ("1", "2"):
            raise UserError(f"bad rule value decks={raw!r}: expected one of 1, 2")
        return int(raw)
    return raw


def parse_rules(text: str | RuleSet | None = "classic") -> RuleSet:
    """Parse ``classic,draw=start,...`` into a :class:`RuleSet` (a RuleSet passes through)."""
    if isinstance(text, RuleSet):
        return text
    values: dict = {}
    for token in (text or "classic").split(","):
        token = token.strip()
        if not token:
            continue
        if "=" not in token:
            if token not in PRESETS:
                hint = did_you_mean(token, PRESETS) or did_you_mean(token, _SWITCH_HELP, "{}=VALUE")
                raise UserError(f"unknown rule preset {token!r}{hint}: expected one of {', '.join(PRESETS)} "
                                "or switch=value")
            values.update(PRESETS[token])
            continue
        name, raw = (s.strip() for s in token.split("=", 1))
        if name not in _SWITCH_HELP:
            raise UserError(f"unknown rule switch {name!r}{did_you_mean(name, _SWITCH_HELP, '{}=' + raw)}: "
                            f"expected one of {', '.join(_SWITCH_HELP)}")
        values[name] = _coerce(name, raw)
    return RuleSet(**values)


def rules_help() -> str:
    """One line per switch with its allowed values, for --help texts."""
    return "; ".join(f"{k}: {v}" for k, v in _SWITCH_HELP.items())
