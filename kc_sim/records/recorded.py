"""A :class:`~kc_sim.play.game.Game` that logs every turn, so the round can be written as a game
record (docs/formats.md) at any point, finished or not."""

from __future__ import annotations

import operator

from kc_sim.core import layout as L
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.cards import card_text
from kc_sim.play.game import Game, IllegalActionError, why_illegal
from kc_sim.records.format import make_record


class RecordedRound:
    """A :class:`~kc_sim.play.game.Game` that logs its turns as game-record turn dicts.

    :meth:`play` applies one action (legal, or :class:`~kc_sim.play.game.IllegalActionError`);
    ``turns`` is the log so far and :meth:`record` the game record of the round so far.
    Every attribute of the game (``seat``, ``over``, ``hand()``...) is reachable through
    ``.game``."""

    def __init__(self, game: Game, seed: int | None = None):
        self.game = game
        self.seed = game.seed if seed is None else int(seed)
        self.turns: list[dict] = []
        self._ids: list[int] = []          # action ids of the open turn
        self._open()

    def _open(self) -> None:
        g = self.game
        if not g.over:
            self.turns.append({"seat": g.seat, "drew": None, "actions": []})
            self._ids = []

    def _close(self, drew) -> None:
        self.turns[-1]["drew"] = card_text(drew) if drew is not None else None

    def play(self, action) -> None:
        """Apply an action id or its text; stop ends the turn (draws, passes the turn)."""
        g = self.game
        a = parse_action(action) if isinstance(action, str) else operator.index(action)
        if g.over:
            raise IllegalActionError(f"the round is over; no action {action_text(a)} possible")
        if not 0 <= a < L.N_ACTIONS:
            raise IllegalActionError(f"bad action id {a}: expected 0 to {L.N_ACTIONS - 1}")
        if a == L.STOP:
            if not g.legal_mask()[L.STOP]:
                raise IllegalActionError(f"illegal action stop for seat {g.seat}: {why_illegal(g, a)}")
            drew, over = g.stop_split()
            self._close(drew)
            if not over:
                g.next_turn()
                self._open()
            return
        g.play(a)
        self.turns[-1]["actions"].append(action_text(a))
        self._ids.append(a)
        if g.over:
            self._close(g.drew)

    @property
    def turn_actions(self) -> list[int]:
        """Action ids of the current turn so far."""
        return list(self._ids)

    def record(self, names, *, match: int = 0, round: int = 0) -> dict:
        """The game record of the round so far; ``result.end`` is ``unfinished`` (winner
        null, no penalties) while the round goes on."""
        g = self.game
        return make_record(
            rules=g.rules, names=names, seed=self.seed, initial=g.initial, turns=[dict(t) for t in self.turns],
            end=g.end if g.over else "unfinished", winner=g.winner, penalties=g.penalties or [],
            match=match, round=round,
        )


