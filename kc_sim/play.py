"""Playing in the terminal (``kc-sim play``), plus two helpers the environment shares.

* :class:`RecordedRound` - a :class:`~kc_sim.game.Game` that logs every turn, so the round
  can be written as a game record (docs/formats.md) at any point, finished or not.
* :class:`SeatAgent` - drives any kc-sim agent (compiled policy or Python agent) on a
  ``Game`` from Python, exactly as the runner does: a compiled policy gets the round state,
  its seat and its own memory row seeded per round with ``seed_policies``; a Python agent
  gets a :class:`~kc_sim.observation.SeatView` of its seat. Same seeds, same play.
* :func:`play_session` - the interactive loop: one round (or a whole match with
  ``match=True``) between people (``human``) and agents. Input is read with ``input()``
  so that scripts can drive it through stdin: a move's number, its text (``7H>E``,
  ``N>E``, ``stop``), ``table``, ``help`` or ``quit``. Bad input re-prompts with the
  reason; end of input (or ``quit``, or Ctrl-C) ends the session cleanly. Every round's
  record is written to the JSON Lines file after each round and on quitting (an
  interrupted round has ``result.end == "unfinished"``); its path is printed.
"""

from __future__ import annotations

import operator
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from kc_sim.actions import action_text, parse_action
from kc_sim.cards import PILES, RANK, card_text
from kc_sim.core import layout as L
from kc_sim.core import loop
from kc_sim.core.policy import MEM_SIZE
from kc_sim.core.rng import derive
from kc_sim.errors import UserError
from kc_sim.game import Game, IllegalActionError
from kc_sim.records import make_record, write_records
from kc_sim.render import RULE, hand_text, move_lines, order_moves, render_table
from kc_sim.rules import RuleSet, parse_rules
from kc_sim.runner import as_action

__all__ = ["HUMAN", "RecordedRound", "SeatAgent", "why_illegal", "play_session", "PlaySummary",
           "default_out_path"]

HUMAN = "human"
DEFAULT_DIR = Path("results") / "play"
HELP = ("Type the number of a move, or its text: 7H>E places 7H on E, N>E moves the whole N pile "
        "onto E, stop ends your turn. Also: 'table' shows the table again, 'help' this text, "
        "'quit' ends the game (the record is saved).")


class _Quit(Exception):
    """The person asked to stop (quit, end of input, Ctrl-C)."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


# --- a game that logs its turns ----------------------------------------------------------------

class RecordedRound:
    """A :class:`~kc_sim.game.Game` that logs its turns as game-record turn dicts.

    :meth:`play` applies one action (legal, or :class:`~kc_sim.game.IllegalActionError`);
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


# --- agents on a Game --------------------------------------------------------------------------

class SeatAgent:
    """One player: any kc-sim agent, driven from Python on a :class:`~kc_sim.game.Game`.

    ``agent`` is an agent name (``greedy``, ``module:Name``, ``file.py:Name``) or an
    :class:`~agents.base.AgentSpec`. Call :meth:`new_match` once per match (optional: the
    first :meth:`new_round` calls it), :meth:`new_round` before each round with the round
    seat it plays, then :meth:`act` at each of its decisions. A compiled policy is called
    with the round state, its seat and its memory row, seeded with
    ``kc_sim.core.loop.seed_policies`` from the round seed; a Python agent (one instance
    per match) gets a :class:`~kc_sim.observation.SeatView`; both exactly as in the runner."""

    def __init__(self, agent):
        from agents.registry import load_agent

        self.spec = load_agent(agent)
        self.name = self.spec.name
        self.mem = np.zeros((L.MAX_SEATS, MEM_SIZE), dtype=np.int64)
        self.instance = None
        self.seat = None
        self._matched = False

    @property
    def compiled(self) -> bool:
        return self.spec.compiled

    def new_match(self, seat: int, players: int, rules) -> None:
        """Start a match at match seat ``seat`` (a Python agent gets a fresh instance)."""
        if not self.compiled:
            self.instance = self.spec.factory()
            self.instance.new_match(int(seat), int(players), parse_rules(rules))
        self._matched = True

    def new_round(self, seat: int, players: int, rules, round_seed: int) -> None:
        """Prepare the round dealt from ``round_seed`` in which this player sits at round seat ``seat``."""
        seat, players, rules = int(seat), int(players), parse_rules(rules)
        if not self._matched:
            self.new_match(seat, players, rules)
        loop.seed_policies(self.mem, int(round_seed), players)
        self.seat = seat
        if self.instance is not None:
            self.instance.start_round(seat, players, rules, int(self.mem[seat, 0]))

    def act(self, game: Game, scores=()) -> int:
        """The agent's action id at its decision (its seat must be the seat to act).
        Raises UserError naming the agent if it returns something that is not an action."""
        s = self.seat
        if s is None:
            raise UserError(f"agent {self.name!r}: call new_round before act")
        if s != game.seat:
            raise UserError(f"agent {self.name!r} plays seat {s}, but seat {game.seat} is to act")
        if self.compiled:
            return int(self.spec.policy(game.state, s, self.mem[s]))
        from kc_sim.observation import SeatView

        value = self.instance.act(SeatView.from_game(game, scores))
        a = as_action(value)
        if a < 0:
            raise UserError(f"agent {self.name!r} (seat {s}) returned {value!r}, which is not an action "
                            "(expected an action id 0-448 or its text such as 7H>E, N>E, stop)")
        return a


# --- explaining an illegal action ---------------------------------------------------------------

def why_illegal(game: Game, a: int) -> str | None:
    """Why action ``a`` is not legal now (for a person), or None if it is."""
    a = int(a)
    if game.over:
        return "the round is over"
    if not 0 <= a < L.N_ACTIONS:
        return f"no such action id {a} (expected 0 to {L.N_ACTIONS - 1})"
    if game.legal_mask()[a]:
        return None
    piles = game.piles
    if a == L.STOP:
        return "you may not stop while you hold a king and a corner is empty (must_play_kings=true)"
    if a < L.MOVE_BASE:
        c, p = divmod(a, 8)
        if c not in game.hand(game.seat):
            return f"{card_text(c)} is not in your hand (your hand: {hand_text(game.hand(game.seat))})"
        target = piles[p]
        if target:
            top = target[-1]
            if RANK[top] == 1:
                return f"nothing goes on an ace: {PILES[p]}'s top is {card_text(top)}"
            return (f"{card_text(c)} does not fit on {PILES[p]}'s top {card_text(top)} "
                    f"(it takes a {'red' if card_text(top)[1] in 'CS' else 'black'} "
                    f"{'A23456789TJQK'[int(RANK[top]) - 2]})")
        if p >= 4:
            return f"the empty corner {PILES[p]} takes nothing but a king"
        return f"the empty side {PILES[p]} takes no king (king_on_empty_side=false)"
    s, p = divmod(a - L.MOVE_BASE, 8)
    moving, target = piles[s], piles[p]
    if not moving:
        return f"side {PILES[s]} is empty: there is no pile to move"
    if s == p:
        return "a pile cannot move onto itself"
    if target:
        return f"{PILES[s]}'s base {card_text(moving[0])} does not fit on {PILES[p]}'s top {card_text(target[-1])}"
    if p >= 4:
        return f"only a pile whose base is a king may move into the empty corner {PILES[p]}"
    return f"a pile never moves onto an empty side ({PILES[p]})"


# --- the session -------------------------------------------------------------------------------

@dataclass
class PlaySummary:
    """What a session did: the record file, the records written, and whether it was quit."""

    path: Path
    records: list[dict] = field(default_factory=list)
    quit: bool = False
    seed: int = 0


def default_out_path(seed: int) -> Path:
    """``results/play/play-YYYYmmdd-HHMMSS-seed<seed>.jsonl`` (relative to the current folder)."""
    return DEFAULT_DIR / f"play-{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}.jsonl"


class _Session:
    def __init__(self, names, rules: RuleSet, seed: int, out: Path, input_fn, echo):
        self.names = list(names)
        self.rules = rules
        self.seed = seed
        self.out = out
        self.input = input_fn
        self.echo = echo
        self.agents = {}
        for s, n in enumerate(self.names):
            if n != HUMAN:
                self.agents[s] = SeatAgent(n)
                self.agents[s].new_match(s, len(self.names), rules)
        self.names = [HUMAN if n == HUMAN else self.agents[s].name for s, n in enumerate(self.names)]
        self.humans = [s for s, n in enumerate(self.names) if n == HUMAN]
        self.records: list[dict] = []
        self.match = False

    # labels
    def label(self, match_seat: int) -> str:
        n = self.names[match_seat]
        if n == HUMAN:
            return "you" if len(self.humans) == 1 else f"human {self.humans.index(match_seat) + 1}"
        return n.rsplit(":", 1)[1] if ":" in n else n   # module:Name, file.py:Name -> Name

    def save(self, extra: dict | None = None) -> Path:
        return write_records(self.out, self.records + ([extra] if extra else []))

    # input
    def ask(self, prompt: str) -> str:
        try:
            line = self.input(prompt)
        except EOFError:
            self.echo("")
            raise _Quit("end of input") from None
        except KeyboardInterrupt:
            self.echo("")
            raise _Quit("interrupted") from None
        return line.strip()

    def human_choice(self, rr: RecordedRound, seat_map, scores) -> int:
        """Read one legal action from the person at the seat to act."""
        g = rr.game
        moves = order_moves(g.legal_actions())
        while True:
            line = self.ask(f"move [1-{len(moves)}, text, help, quit]> ")
            low = line.lower()
            if not line:
                self.echo(f"  empty input: type a move's number (1-{len(moves)}) or its text, e.g. "
                          f"{action_text(moves[0])}; 'help' explains")
                continue
            if low in ("q", "quit", "exit"):
                raise _Quit("quit")
            if low in ("h", "help", "?"):
                self.echo("  " + HELP)
                continue
            if low in ("t", "table", "show", "moves"):
                self.show(rr, seat_map, scores)
                continue
            if line.isdigit():
                k = int(line)
                if 1 <= k <= len(moves):
                    return moves[k - 1]
                self.echo(f"  no move numbered {k}: choose 1 to {len(moves)}")
                continue
            try:
                a = parse_action(line)
            except UserError as e:
                self.echo(f"  {e}")
                continue
            reason = why_illegal(g, a)
            if reason:
                self.echo(f"  {action_text(a)} is not legal now: {reason}")
                continue
            return a

    def show(self, rr: RecordedRound, seat_map, scores) -> None:
        g = rr.game
        names = [self.label(m) for m in seat_map]
        viewer = g.seat
        self.echo(render_table(g, viewer, names=names, scores=scores, you=self.names[seat_map[viewer]] == HUMAN))
        if rr.turn_actions:
            self.echo("played this turn: " + ", ".join(action_text(a) for a in rr.turn_actions))
        self.echo("Your moves:")
        for line in move_lines(g):
            self.echo(line)

    def play_round(self, seed: int, dealer: int, seat_map, scores, r: int, match: int) -> dict:
        k = len(seat_map)
        g = Game(k, self.rules, seed, dealer=dealer)
        rr = RecordedRound(g, seed)
        round_names = [self.names[m] for m in seat_map]
        labels = [self.label(m) for m in seat_map]
        for s, m in enumerate(seat_map):
            if m in self.agents:
                self.agents[m].new_round(s, k, self.rules, seed)
        self.echo(RULE)
        rules = self.rules.spec() if self.match else self.rules.spec().rsplit(",match", 1)[0]
        self.echo(f"Round {r + 1}: seed {seed}, dealer seat {dealer} ({labels[dealer]}), rules {rules}")
        try:
            while not g.over:
                seat = g.seat
                m = seat_map[seat]
                if self.names[m] == HUMAN:
                    self.human_turn(rr, seat_map, scores)
                else:
                    self.agent_turn(rr, seat, self.agents[m], labels, scores)
        except KeyboardInterrupt:
            self.save(rr.record(round_names, match=match, round=r))
            self.echo("")
            raise _Quit("interrupted") from None
        except (_Quit, UserError):   # quitting, or an agent that broke the rules: keep the round
            self.save(rr.record(round_names, match=match, round=r))
            raise
        rec = rr.record(round_names, match=match, round=r)
        self.records.append(rec)
        self.save()
        self.echo(RULE)
        self.echo(render_table(g, self._viewer(seat_map), names=labels, scores=scores, reveal=True,
                               you=len(self.humans) == 1))
        pens = ", ".join(f"{labels[s]} {p}" for s, p in enumerate(g.penalties))
        how = f"{labels[g.winner]} went out" if g.winner is not None else "the round is blocked"
        self.echo(f"Round over: {how}. Penalties: {pens}.")
        return rec

    def _viewer(self, seat_map) -> int:
        for s, m in enumerate(seat_map):
            if self.names[m] == HUMAN:
                return s
        return 0

    def human_turn(self, rr: RecordedRound, seat_map, scores) -> None:
        g = rr.game
        seat = g.seat
        start = len(rr.turns)
        self.echo(RULE)
        if len(self.humans) > 1:
            self.echo(f"{self.label(seat_map[seat])}: your turn (seat {seat})")
        if g.drew is not None:
            self.echo(f"You drew {card_text(g.drew)}.")
        while True:
            self.show(rr, seat_map, scores)
            a = self.human_choice(rr, seat_map, scores)
            rr.play(a)
            self.echo(f"  you played {action_text(a)}")
            if g.over or len(rr.turns) != start:
                drew = rr.turns[start - 1]["drew"]
                if a == L.STOP and drew is not None and g.rules.draw == "end":
                    self.echo(f"  You drew {drew}.")
                return

    def agent_turn(self, rr: RecordedRound, seat: int, agent: SeatAgent, labels, scores) -> None:
        g = rr.game
        start = len(rr.turns)
        actions = []
        while not g.over and len(rr.turns) == start:
            a = agent.act(g, scores)
            if not (0 <= a < L.N_ACTIONS and g.legal_mask()[a]):
                raise UserError(f"agent {agent.name!r} (seat {seat}) played the illegal action {action_text(a)}: "
                                f"{why_illegal(g, a)}")
            rr.play(a)
            if a != L.STOP:
                actions.append(action_text(a))
        turn = rr.turns[start - 1]
        did = ", ".join(actions) if actions else "no action"
        drew = "; drew a card" if turn["drew"] is not None else ""
        self.echo(f"seat {seat} {labels[seat]}: {did}{'' if g.over and actions else ', stop'}{drew} "
                  f"({int(g.state[L.HAND_N + seat])} card{'s' if int(g.state[L.HAND_N + seat]) != 1 else ''} left)")

    def run_round(self) -> None:
        k = len(self.names)
        dealer = int(loop.first_dealer(self.seed, k))
        self.play_round(self.seed, dealer, list(range(k)), [0] * k, 0, 0)

    def run_match(self) -> None:
        players = len(self.names)
        kind = {"to_25": 0, "rounds": 1, "eliminate_25": 2}[self.rules.match_kind]
        totals = np.zeros(players, dtype=np.int64)
        active = np.ones(players, dtype=np.bool_)
        last_active = active.copy()
        dealer = int(loop.first_dealer(self.seed, players))
        r = 0
        while True:
            seat_map = [s for s in range(players) if active[s]]
            round_dealer = seat_map.index(dealer)
            seed = int(derive(self.seed, loop.ROUND_STREAM + r))
            scores = [int(totals[m]) for m in seat_map]
            rec = self.play_round(seed, round_dealer, seat_map, scores, r, 0)
            for s, m in enumerate(seat_map):
                totals[m] += rec["result"]["penalties"][s]
            r += 1
            last_active[:] = active
            over = loop.match_over(kind, self.rules.match_rounds, r, totals, active, players)
            self.echo("Match scores: " + ", ".join(f"{self.label(m)} {int(totals[m])}" for m in range(players)))
            if over:
                break
            out = [self.label(m) for m in range(players) if last_active[m] and not active[m]]
            if out:
                self.echo(f"Out of the match (25 or more): {', '.join(out)}.")
            dealer = (dealer + 1) % players
            while not active[dealer]:
                dealer = (dealer + 1) % players
        mask = int(loop.match_winners(kind, totals, active, last_active, players))
        winners = [self.label(m) for m in range(players) if mask >> m & 1]
        self.echo(f"Match over after {r} round{'s' if r != 1 else ''}: "
                  f"{' and '.join(winners)} win{'s' if winners != ['you'] and len(winners) == 1 else ''} "
                  f"({self.rules.match}).")


def play_session(agents, *, rules: str | RuleSet = "classic", seed: int | None = None, match: bool = False,
                 out: Path | str | None = None, input_fn: Callable[[str], str] = input,
                 echo: Callable[[str], None] = print) -> PlaySummary:
    """Play one round (or a whole match under the rules' match switch with ``match``) in
    the terminal. ``agents`` are names by seat; ``human`` marks a person (several people
    take turns at one keyboard). The round is dealt from ``seed`` (default: a random seed,
    printed); a match deals its rounds as ``kc-sim tournament --matches`` does. Records
    go to ``out`` (default :func:`default_out_path`) after each round and on quitting."""
    names = [a.strip() for a in (agents.split(",") if isinstance(agents, str) else agents)]
    names = [HUMAN if n.lower() == HUMAN else n for n in names if n]
    rules = parse_rules(rules)
    rules.check_players(len(names))
    if seed is None:
        seed = secrets.randbits(31)
    seed = int(seed)
    if seed < 0:
        raise UserError(f"bad seed {seed}: expected a non-negative integer")
    path = Path(out) if out is not None else default_out_path(seed)
    if path.exists() and path.is_dir():
        path = path / default_out_path(seed).name
    session = _Session(names, rules, seed, path, input_fn, echo)
    seats = ", ".join(f"seat {s} {session.label(s)}" + (f" ({session.names[s]})" if session.names[s] != HUMAN
                                                         and session.label(s) != session.names[s] else "")
                      for s in range(len(names)))
    echo(f"Kings in the Corner: {seats}. Seed {seed} (play this deal again with --seed {seed}).")
    if not session.humans:
        echo("(no 'human' seat: the agents play on their own)")
    echo("Type 'help' at any prompt for how to enter moves.")
    summary = PlaySummary(path=path, seed=seed)
    session.match = bool(match)
    try:
        if match:
            session.run_match()
        else:
            session.run_round()
    except _Quit as q:
        summary.quit = True
        echo(f"{q.why}: game stopped.")
    except UserError as e:
        if path.exists():
            raise UserError(f"{e}; the game records so far are saved to {path}") from e
        raise
    summary.records = list(session.records)
    if path.exists():
        n = len(path.read_text(encoding="utf-8").splitlines())
        echo(f"Game record{'s' if n != 1 else ''} saved to {path} (replay with: kc-sim replay {path})")
    return summary
