"""Playing in the terminal (``kc-sim play``): :func:`play_session`, the interactive loop.

One round (or a whole match with ``match=True``) between people (``human``) and agents.
Agents are driven by the seat driver (:class:`kc_sim.play.driver.seat.SeatedAgents`) and a match
by :class:`kc_sim.play.driver.match.Match`, exactly as the runner plays them, so the same seed
gives the same rounds as ``kc-sim tournament``. Input is read with ``input()`` so that
scripts can drive it through stdin: a move's number, its text (``7H>E``, ``N>E``,
``stop``), ``table``, ``help`` or ``quit``. Bad input re-prompts with the reason
(:func:`kc_sim.play.table.game.why_illegal`); end of input (or ``quit``, or Ctrl-C) ends the
session cleanly. Every round's record is written to the JSON Lines file after each round
and on quitting (an interrupted round has ``result.end == "unfinished"``); its path is printed.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kc_sim.core import layout
from kc_sim.core.step import first_dealer
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.cards import card_text
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.table.game import Game, why_illegal
from kc_sim.play.driver.match import Match
from kc_sim.play.agents.names import short_name
from kc_sim.play.recording.recorded import RecordedRound
from kc_sim.play.agents.names import parse_agent_list
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.seat import SeatedAgents
from kc_sim.records.format import write_records
from kc_sim.records.untrusted import display_text
from kc_sim.ui.render import RULE, move_lines, order_moves, render_table

__all__ = ["HUMAN", "play_session", "PlaySummary", "default_out_path"]

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


#: when the end of a round offers its analysis: ask, always (without asking) or never
ANALYSE_CHOICES = ("ask", "yes", "no")
#: worlds per decision of the end-of-round analysis (the judge's default)
ANALYSE_BUDGET = 256


class _Session:
    def __init__(self, names, rules: RuleSet, seed: int, out: Path, input_fn, echo, analyse: str = "no"):
        self.names = list(names)
        self.rules = rules
        self.seed = seed
        self.out = out
        self.input = input_fn
        self.echo = echo
        self.agents = SeatedAgents([None if n == HUMAN else load_agent(n) for n in self.names], rules)
        self.agents.new_match()
        self.names = [HUMAN if n == HUMAN else self.agents.names[s] for s, n in enumerate(self.names)]
        self.humans = [s for s, n in enumerate(self.names) if n == HUMAN]
        self.records: list[dict] = []
        self.match = False
        self.analyse = analyse

    # labels
    def label(self, match_seat: int) -> str:
        n = self.names[match_seat]
        if n == HUMAN:
            return "you" if len(self.humans) == 1 else f"human {self.humans.index(match_seat) + 1}"
        return display_text(short_name(n))

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
        self.agents.new_round(seed, seat_map)
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
                    self.agent_turn(rr, seat, labels, scores)
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
        self.offer_analysis(rec, [s for s, m in enumerate(seat_map) if self.names[m] == HUMAN])
        return rec

    def offer_analysis(self, rec: dict, seats: list[int]) -> None:
        """At a round's end, as ``self.analyse`` says: ask whether to analyse it (end of input
        is no), and on yes print the judge's tables of the human seats' decisions and luck
        (every seat when no one is human)."""
        if self.analyse == "no":
            return
        if self.analyse == "ask":
            try:
                answer = self.ask("Analyse this round? (takes a few seconds) [y/N] ").lower()
            except _Quit:
                return
            if answer not in ("y", "yes"):
                return
        # lazy: the judge compiles its rollouts; a session that never analyses does not load it
        import io

        from kc_sim.judge.analyse import analyse_records
        from kc_sim.judge.text import print_report

        self.echo("Analysing: every legal action of each decision rolled out by the planner ...")
        report = analyse_records([(len(self.records) - 1, rec)], source=str(self.out), seats=seats or None,
                                 budget=ANALYSE_BUDGET)
        buf = io.StringIO()
        print_report(report, file=buf)
        self.echo(buf.getvalue().rstrip())

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
                if a == layout.STOP and drew is not None and g.rules.draw == "end":
                    self.echo(f"  You drew {drew}.")
                return

    def agent_turn(self, rr: RecordedRound, seat: int, labels, scores) -> None:
        g = rr.game
        start = len(rr.turns)
        actions = []
        while not g.over and len(rr.turns) == start:
            a = self.agents.act(g, scores)
            reason = why_illegal(g, a)
            if reason is not None:
                raise UserError(f"agent {self.agents.name(seat)!r} (seat {seat}) played the illegal action "
                                f"{action_text(a)}: {reason}")
            rr.play(a)
            if a != layout.STOP:
                actions.append(action_text(a))
        turn = rr.turns[start - 1]
        did = ", ".join(actions) if actions else "no action"
        drew = "; drew a card" if turn["drew"] is not None else ""
        self.echo(f"seat {seat} {labels[seat]}: {did}{'' if g.over and actions else ', stop'}{drew} "
                  f"({int(g.state[layout.HAND_N + seat])} card{'s' if int(g.state[layout.HAND_N + seat]) != 1 else ''} left)")

    def run_round(self) -> None:
        k = len(self.names)
        dealer = int(first_dealer(self.seed, k))
        self.play_round(self.seed, dealer, list(range(k)), [0] * k, 0, 0)

    def run_match(self) -> None:
        players = len(self.names)
        match = Match(self.seed, players, self.rules)
        for rnd in match.rounds():
            rec = self.play_round(rnd.seed, rnd.dealer, rnd.seat_map, list(rnd.scores), rnd.index, 0)
            match.add_round(rec["result"]["penalties"])
            self.echo("Match scores: " + ", ".join(f"{self.label(m)} {int(match.totals[m])}" for m in range(players)))
            out = [self.label(m) for m in match.eliminated]
            if out and not match.over:
                self.echo(f"Out of the match (25 or more): {', '.join(out)}.")
        r = match.rounds_played
        winners = [self.label(m) for m in range(players) if match.winners >> m & 1]
        self.echo(f"Match over after {r} round{'s' if r != 1 else ''}: "
                  f"{' and '.join(winners)} win{'s' if winners != ['you'] and len(winners) == 1 else ''} "
                  f"({self.rules.match}).")


def play_session(agents, *, rules: str | RuleSet = "classic", seed: int | None = None, match: bool = False,
                 out: Path | str | None = None, input_fn: Callable[[str], str] = input,
                 echo: Callable[[str], None] = print, analyse: str = "no") -> PlaySummary:
    """Play one round (or a whole match under the rules' match switch with ``match``) in
    the terminal. ``agents`` are names by seat; ``human`` marks a person (several people
    take turns at one keyboard). The round is dealt from ``seed`` (default: a random seed,
    printed); a match deals its rounds as ``kc-sim tournament --matches`` does. Records
    go to ``out`` (default :func:`default_out_path`) after each round and on quitting.
    ``analyse`` (:data:`ANALYSE_CHOICES`): at each round's end, ask whether to analyse it
    (``ask``), analyse it (``yes``) or not (``no``)."""
    if analyse not in ANALYSE_CHOICES:
        raise UserError(f"bad --analyse {analyse!r}: expected one of {', '.join(ANALYSE_CHOICES)}")
    names = [HUMAN if n.lower() == HUMAN else n for n in parse_agent_list(agents)]
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
    session = _Session(names, rules, seed, path, input_fn, echo, analyse)
    seats = ", ".join(f"seat {s} {session.label(s)}" + (f" ({display_text(session.names[s])})"
                                                         if session.names[s] != HUMAN
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
