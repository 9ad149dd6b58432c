"""One game at the table: a match between a person (match seat 0) and 1-3 agents, played
one request at a time, and what the person's seat may see of it.

The match is dealt, seated and scored by :class:`kc_sim.play.driver.match.Match`, the agents
are driven by :class:`kc_sim.play.driver.seat.SeatedAgents` and every round is a
:class:`kc_sim.play.recording.recorded.RecordedRound` over the rules engine
:class:`kc_sim.play.table.game.Game`, exactly as ``kc-sim play --match`` plays (so a seed
deals the same rounds here, in the terminal and in a tournament). After each action of the
person the agents play until the person is to act again or the round is over; each of their
decisions is kept as a *step* (its action text and the table after it) for the page to show
one by one.

What the person's seat may see (:meth:`TableGame.view`): its own hand, the piles, the
number of cards in the stock and in each hand, whose turn it is, the legal actions, the
agents' actions (the cards they place are face up on the table) and whether they drew, never
which card. Opponents' hands and the stock appear only in a finished round's record.
"""

from __future__ import annotations

import dataclasses
import threading
import time

from kc_sim.core import layout
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.cards import PILES, card_text, sort_hand
from kc_sim.game.rules import RuleSet
from kc_sim.picture.svg import card_label, position_svg
from kc_sim.play.agents.names import short_name
from kc_sim.play.driver.match import Match
from kc_sim.play.driver.seat import SeatedAgents
from kc_sim.play.recording.recorded import RecordedRound
from kc_sim.play.table.game import Game, why_illegal
from kc_sim.play.table.position import position
from kc_sim.records.untrusted import display_text

__all__ = ["TableGame", "NotNow", "Illegal", "AgentFailed", "LENGTHS", "match_rule", "ANALYSIS", "warm_up"]

#: game lengths offered, as the rule texts name them, and their match switch
LENGTHS = {"1": "rounds:1", "3": "rounds:3", "5": "rounds:5", "to_25": "to_25"}
#: the most agent decisions run for one request (a round has a few hundred at most)
MAX_AGENT_STEPS = 20_000
#: what the page and the API say of a finished round's analysis (asked for apart: it takes seconds)
ANALYSIS = {"available": True,
            "how": "GET /api/games/ID/rounds/K/analysis: your decisions judged by rollouts (kc-sim analyse)"}


class NotNow(UserError):
    """A request that does not fit the game's phase (an action when it is not your turn)."""


class Illegal(UserError):
    """An action that is not legal now; the message says why in words."""


class AgentFailed(UserError):
    """An agent broke the rules or raised: the game cannot go on (the server's fault, not the request's)."""


def match_rule(rules: RuleSet, length: str) -> RuleSet:
    """``rules`` with the match switch of game length ``length`` (1, 3, 5 or to_25)."""
    if length not in LENGTHS:
        raise UserError(f"bad length {length!r}: expected one of {', '.join(LENGTHS)}")
    return dataclasses.replace(rules, match=LENGTHS[length])


def _moving(game: Game, a: int) -> list[str]:
    """The cards action ``a`` is about to put on a pile: the placed card, or the whole pile moved."""
    if a == layout.STOP:
        return []
    src = action_text(a).partition(">")[0]
    return [card_text(c) for c in game.pile(PILES.index(src))] if src in PILES else [src]


def _last_of(a: int, cards: list[str], label: str) -> dict:
    """The highlight of action ``a`` just played: ``cards`` on the pile they went to."""
    text = action_text(a)
    if a == layout.STOP:
        return {"text": f"{label} stops"}
    src, _, dst = text.partition(">")
    what = f"moves {src} onto {dst}" if src in PILES else f"{card_label(src)} on {dst}"
    return {"text": f"{label}: {what}", "cards": cards, "where": dst}


class TableGame:
    """A match between the person at match seat 0, named ``human``, and ``agents``
    (AgentSpecs loaded when the server started), under ``rules`` (its match switch set by
    :func:`match_rule`), dealt from ``seed``. ``on_round`` is called with each finished
    round's record (the server appends it to the data folder) and returns None when it was
    saved, or why not. All methods are to be called under :attr:`lock`."""

    def __init__(self, human: str, agents, rules: RuleSet, seed: int, *, tag: str, length: str, on_round):
        self.names = [human] + [a.name for a in agents]
        self.labels = [f"{display_text(human)} (you)"] + [display_text(short_name(a.name)) for a in agents]
        self.rules, self.seed, self.tag, self.length = rules, int(seed), tag, length
        self.on_round = on_round
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self.agents = SeatedAgents([None] + list(agents), rules)
        self.agents.new_match()
        self.match = Match(self.seed, len(self.names), rules)
        self._rounds = self.match.rounds()
        self.records: list[dict] = []
        self.your_seats: list[int] = []          # the human's seat in each finished round
        self.analyses: dict[int, dict] = {}       # finished round -> its analysis, once asked for
        self.saved: list[str | None] = []          # by round: None saved, else why not
        self.agent_seconds = 0.0                   # agents' thinking in the current request
        self.failed: str | None = None             # why the game cannot go on (an agent failed)
        self._deal()

    # --- the match ---------------------------------------------------------------------
    def _deal(self) -> None:
        self.rnd = next(self._rounds)
        k = len(self.rnd.seat_map)
        self.game = Game(k, self.rules, self.rnd.seed, dealer=self.rnd.dealer)
        self.rr = RecordedRound(self.game, self.rnd.seed)
        self.agents.new_round(self.rnd.seed, self.rnd.seat_map)
        self.you = self.rnd.seat_map.index(0)
        self.steps: list[dict] = []
        self.last_turns: dict[int, dict] = {}
        self._agents_play()

    @property
    def phase(self) -> str:
        """``your_turn``, ``round_over``, ``match_over``, or ``failed`` (an agent failed)."""
        if self.failed is not None:
            return "failed"
        if not self.game.over:
            return "your_turn"
        return "match_over" if self.match.over else "round_over"

    def round_labels(self) -> list[str]:
        return [self.labels[m] for m in self.rnd.seat_map]

    def scores(self) -> list[int]:
        """Match totals by round seat (after the round's penalties once it is over)."""
        return [int(self.match.totals[m]) for m in self.rnd.seat_map] if self.game.over else list(self.rnd.scores)

    def next_round(self) -> None:
        """Deal the next round of the match (only once a round is over and the match is not)."""
        if self.failed is not None:
            raise AgentFailed(self.failed)
        if self.phase != "round_over":
            raise NotNow("the round is not over yet" if not self.game.over else "the match is over: no more rounds")
        self._deal()

    # --- playing -----------------------------------------------------------------------
    def play(self, text: str) -> None:
        """The person's action in record text (``7H>E``, ``N>E``, ``stop``); then the agents
        play until it is the person's turn again or the round ends."""
        if self.failed is not None:
            raise AgentFailed(self.failed)
        if self.phase != "your_turn":
            raise NotNow("the round is over: deal the next round or start a new game"
                         if self.phase == "round_over" else "the match is over: start a new game")
        a = parse_action(text)
        reason = why_illegal(self.game, a)
        if reason is not None:
            raise Illegal(f"{action_text(a)} is not legal now: {reason}")
        self.steps = []
        start = len(self.rr.turns)
        self.rr.play(a)
        self._note_turn(self.you, start)
        self._agents_play()

    def _note_turn(self, seat: int, start: int) -> None:
        """Keep seat's turn (actions, whether it drew) as its last turn, once it is closed."""
        turn = self.rr.turns[start - 1]
        if self.game.over or len(self.rr.turns) != start:
            self.last_turns[seat] = {"actions": list(turn["actions"]), "drew": turn["drew"] is not None,
                                     "done": True}
            if seat == self.you:                  # the person may know the card they drew
                self.last_turns[seat]["card"] = turn["drew"]
        else:
            self.last_turns[seat] = {"actions": list(turn["actions"]), "drew": False, "done": False}

    def _agents_play(self) -> None:
        """Run the agents' decisions until the person is to act or the round is over."""
        g, t0 = self.game, time.perf_counter()
        try:
            self._agent_steps(g)
        except AgentFailed as e:
            self.failed = str(e)
            raise
        except UserError as e:                    # SeatFault: the agent raised or returned no action
            self.failed = f"{e}; this game cannot go on, start a new one"
            raise AgentFailed(self.failed) from e
        finally:
            self.agent_seconds += time.perf_counter() - t0
        if g.over:
            self._finish()

    def _agent_steps(self, g: Game) -> None:
        """The agents' decisions, each kept as a step with the table after it."""
        for _ in range(MAX_AGENT_STEPS):
            if g.over or g.seat == self.you:
                return
            seat, start = g.seat, len(self.rr.turns)
            a = self.agents.act(g, self.scores())
            reason = why_illegal(g, a)
            if reason is not None:
                raise AgentFailed(f"agent {self.agents.name(seat)!r} (seat {seat}) played the illegal action "
                                  f"{action_text(a)}: {reason}; this game cannot go on, start a new one")
            moving = _moving(g, a)
            self.rr.play(a)
            self._note_turn(seat, start)
            closed = g.over or len(self.rr.turns) != start
            self.steps.append({"seat": seat, "name": self.round_labels()[seat], "action": action_text(a),
                               "drew": bool(closed and self.last_turns[seat]["drew"]),
                               "cards": int(g.state[layout.HAND_N + seat]),
                               "position": self._position(_last_of(a, moving, self.round_labels()[seat]))})

    def _finish(self) -> None:
        """The round is over: its record to the data folder, its penalties to the match."""
        rec = self.rr.record([self.names[m] for m in self.rnd.seat_map], match=0, round=self.rnd.index)
        rec["served"] = {"game": self.tag, "human_seat": self.you, "length": self.length}
        self.records.append(rec)
        self.your_seats.append(self.you)
        self.saved.append(self.on_round(rec))
        self.match.add_round(rec["result"]["penalties"])

    # --- what the person's seat sees -----------------------------------------------------
    def _position(self, last=None) -> dict:
        """The picture's position dict with every hidden card taken out: the other hands
        are None (drawn face down) while the round goes on, and no highlight names a card
        drawn into a hand the person cannot see."""
        g = self.game
        pos = position(g, names=self.round_labels(), last=last)
        if not g.over:
            pos["hands"] = [h if s == self.you else None for s, h in enumerate(pos["hands"])]
            lst = pos.get("last")
            if lst and str(lst.get("where", "")).startswith("hand ") and lst["where"] != f"hand {self.you}":
                pos["last"] = {"text": lst["text"]}
        return pos

    def svg(self, pos: dict | None = None) -> str:
        """The table as ``kc-sim render`` draws it, from the person's seat."""
        pos = self._position() if pos is None else pos
        return position_svg(pos, names=self.round_labels(), scores=self.scores(), dealer=self.game.dealer,
                            show=self.you if not self.game.over else "all",
                            title=f"round {self.rnd.index + 1}")

    def view(self, *, svg: bool = False) -> dict:
        """The game as the person's seat may see it (docs/serve.md, The state)."""
        g, you, over = self.game, self.you, self.game.over
        labels, scores = self.round_labels(), self.scores()
        players = []
        for s in range(g.players):
            players.append({"seat": s, "name": labels[s], "you": s == you, "cards": int(g.state[layout.HAND_N + s]),
                            "score": scores[s], "last_turn": self.last_turns.get(s)})
        v = {
            "phase": self.phase, "round": self.rnd.index + 1, "length": self.length, "rules": self.rules.spec(),
            "you": you, "to_play": None if over else g.seat, "dealer": g.dealer, "turn": g.turns,
            "players": players, "hand": [card_text(c) for c in sort_hand(g.hand(you))],
            "piles": {PILES[p]: [card_text(c) for c in pile] for p, pile in enumerate(g.piles)},
            "stock": len(g.stock), "drew": card_text(g.drew) if not over and g.drew is not None else None,
            "this_turn": [action_text(a) for a in self.rr.turn_actions] if not over else [],
            "legal": g.legal_texts() if not over else [],
            "steps": [{k: v for k, v in st.items() if k != "position"} for st in self.steps],
            "rounds_played": len(self.records), "result": None,
        }
        if self.failed is not None:
            v.update(legal=[], to_play=None, failed=self.failed)
        if over:
            rec = self.records[-1]
            v["result"] = {**rec["result"], "record": len(self.records) - 1, "saved": self.saved[-1] is None,
                           "not_saved": self.saved[-1], "analysis": ANALYSIS}
        if self.match.over:
            v["match"] = {"winners": [self.labels[m] for m in range(len(self.names)) if self.match.winners >> m & 1],
                          "totals": [int(t) for t in self.match.totals], "names": list(self.labels)}
        if svg:
            v["svg"] = self.svg()
            for out, st in zip(v["steps"], self.steps):
                out["svg"] = self.svg(st["position"])
        return v


def warm_up(agents, rules: RuleSet) -> None:
    """Play one short round of each agent against itself, so that the compiled core and each
    agent's code are compiled (or read from numba's cache) before the first person waits."""
    for spec in agents:
        g = Game(2, rules, 0)
        seated = SeatedAgents([spec, spec], rules)
        seated.new_match()
        seated.new_round(0, [0, 1])
        for _ in range(MAX_AGENT_STEPS):
            if g.over:
                break
            g.play(seated.act(g))
