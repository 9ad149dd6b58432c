"""Kings in the Corner as an OpenSpiel (pyspiel) Python game (needs ``pip install open-spiel``).

    import pyspiel
    import kc_sim.env.openspiel_game                      # registers the game
    game = pyspiel.load_game("python_kings_in_the_corner_v1(players=3,rules=draw_first)")
    state = game.new_initial_state()                     # a chance node: the deal
    state.apply_action(7)                                # deal round seed 7 (first_seed + 7)
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    state.returns()                                      # minus each seat's penalty

The rules stay in one home: a state wraps kc-sim's own readable round,
:class:`kc_sim.play.table.game.Game`, and every move goes through ``Game.play``; this module
only translates between the two APIs and keeps what each player has seen.

Parameters
    ``players`` (2 to 4; up to 8 with two decks), ``rules`` (any rule set kc-sim parses:
    ``classic``, ``draw_first``, ``classic,scoring=face``...), ``seeds`` (number of chance
    outcomes of the deal, default 65536) and ``first_seed`` (the round seed of outcome 0,
    default 0). OpenSpiel's game strings use ``,`` between parameters and ``=`` inside
    them, so in a game string write the rule set with ``;`` for ``,`` and ``:`` for ``=``
    (``rules=classic;scoring:face``); a parameter dict takes either spelling.

Chance: the deal
    A shuffle has 52! orders, far too many outcomes for a chance node. The deal is one
    chance node whose outcomes are round seeds, uniform: outcome i deals exactly the
    round kc-sim deals for round seed ``first_seed + i`` (same shuffle, same dealer, drawn
    from that seed as everywhere in kc-sim), so a pyspiel history replays a kc-sim round.
    The seed also fixes the order of the stock, so drawing during play is no further
    chance node: a uniformly shuffled stock drawn from the top gives each draw the same
    distribution as a draw at random from the unseen cards, and the stock order stays
    hidden information (:meth:`KingsInTheCornerState.resample_from_infostate` draws it
    anew).

Information
    A player sees its own hand, every pile, the stock size, every hand size and every
    action (placements show their card); the cards drawn by others and the stock order
    are hidden. The information state string (perfect recall) is the round header, the
    player's dealt hand and the layout, then every action with the cards drawn after it
    (``+1:7H`` for the observer's own draws, ``+2:?`` for another seat's). The observation
    string and tensor hold the current position only (:mod:`kc_sim.env.obs_planes`: 1,575
    values); the information state tensor adds, per relative seat, the cards that seat
    has placed from its hand (8 x 52 values).

Rewards
    Terminal only: each seat gets minus its penalty for the round (the AEC env's reward),
    so the game is general-sum (utilities from ``-max_penalty`` to 0).
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pyspiel

from kc_sim.core import layout as L
from kc_sim.env.obs_planes import PLANES_SIZE, planes_from_vector
from kc_sim.env.obs_vector import OBS_SIZE, fill_observation
from kc_sim.env.step import (
    I_DRAWER,
    I_DRAWN,
    ILLEGAL,
    INFO_SIZE,
    IllegalActionError,
    env_step,
)
from kc_sim.env.versions import OPENSPIEL_NAME
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text
from kc_sim.game.cards import N_CARDS, PILES, card_text, hand_text
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.table.game import Game, why_illegal

__all__ = ["GAME_NAME", "GAME_TYPE", "KingsInTheCornerGame", "KingsInTheCornerState", "load", "rules_param",
           "state_from_view"]

GAME_NAME = OPENSPIEL_NAME
DEFAULT_SEEDS = 1 << 16
CHANCE_OPEN = -1          # the action of the event "the first turn opens" (its draw under draw=start)
ACTION_TEXT = tuple(action_text(a) for a in range(L.N_ACTIONS))
PLAYED_SIZE = L.MAX_SEATS * N_CARDS


def rules_param(text) -> RuleSet:
    """The rule set of the ``rules`` parameter: kc-sim's syntax, or the game-string
    spelling with ``;`` for ``,`` and ``:`` for ``=`` (``classic;scoring:face``)."""
    if isinstance(text, RuleSet):
        return text
    tokens = []
    for token in str(text).replace(";", ",").split(","):
        token = token.strip()
        if token and "=" not in token and ":" in token:
            token = token.replace(":", "=", 1)      # scoring:face -> scoring=face (match:rounds:3 keeps its colon)
        tokens.append(token)
    return parse_rules(",".join(tokens))


def _safe_rules(text) -> str:
    """The rule set text in the game-string spelling (no ``,`` nor ``=``)."""
    if isinstance(text, RuleSet):
        text = text.spec()
    return ",".join(t.strip() for t in str(text).replace(";", ",").split(",") if t.strip()) \
        .replace("=", ":").replace(",", ";")


def max_game_length(players: int, decks: int) -> int:
    """A bound on the actions of a round (the deal included): every card is placed at most
    once (52 per deck), a pile move needs a side pile and only the layout or a placement
    makes one (8 + 4 king moves + the placements), at most 52 per deck draws, and a turn
    with no action and no draw is idle: ``players`` idle turns in a row end the round, so
    there are at most (placements + moves + draws + 1) * players turns, each ending with a stop."""
    placements = 52 * decks
    moves = 12 + placements
    draws = 52 * decks
    turns = (placements + moves + draws + 1) * players
    return 1 + placements + moves + turns


GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Kings in the Corner (kc-sim)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=L.MAX_SEATS,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"players": 2, "rules": "classic", "seeds": DEFAULT_SEEDS, "first_seed": 0},
)


class KingsInTheCornerGame(pyspiel.Game):
    """The game for one player count and rule set (see the module docstring)."""

    def __init__(self, params=None):
        params = dict(params or {})
        players = int(params.get("players", 2))
        self.rules = rules_param(params.get("rules", "classic"))
        self.rules.check_players(players)
        self.seeds = int(params.get("seeds", DEFAULT_SEEDS))
        self.first_seed = int(params.get("first_seed", 0))
        if self.seeds < 1:
            raise UserError(f"bad seeds={self.seeds}: expected at least 1 chance outcome")
        if self.first_seed < 0:
            raise UserError(f"bad first_seed={self.first_seed}: expected a non-negative round seed")
        self.players = players
        self.codes = self.rules.codes()
        info = pyspiel.GameInfo(
            num_distinct_actions=L.N_ACTIONS,
            max_chance_outcomes=self.seeds,
            num_players=players,
            min_utility=-float(self.rules.max_penalty),
            max_utility=0.0,
            utility_sum=None,
            max_game_length=max_game_length(players, self.rules.decks),
        )
        canonical = {"players": players, "rules": _safe_rules(params.get("rules", "classic")),
                     "seeds": self.seeds, "first_seed": self.first_seed}
        super().__init__(GAME_TYPE, info, canonical)
        self._outcomes = None

    def new_initial_state(self):
        return KingsInTheCornerState(self)

    def max_chance_nodes_in_history(self):
        return 1

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"{GAME_NAME} takes no observation parameters; got {params}")
        return _Observer(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))

    def chance_outcomes(self) -> list:
        """The deal's outcomes: every seed index, with probability 1/seeds (built once)."""
        if self._outcomes is None:
            p = 1.0 / self.seeds
            self._outcomes = [(i, p) for i in range(self.seeds)]
        return self._outcomes


class _Round:
    """Everything a state changes, in one object so a clone is one fast copy (OpenSpiel
    clones a Python state by deep-copying its attributes).

    ``game``: the kc-sim round; ``header``: public text of how the round began (the
    layout, or the position a seat's view started from); ``start``: by seat, the cards
    it held at that moment; ``events``: (seat, action, gains) for every action since,
    ``gains`` the (seat, card) draws that followed it; ``played``: cards placed from
    hand, by seat (counts)."""

    __slots__ = ("game", "seed", "header", "start", "events", "played")

    def __deepcopy__(self, memo):
        r = _Round.__new__(_Round)
        g = copy.copy(self.game)             # the rules and the dealt snapshot are shared, never changed
        g.state = self.game.state.copy()
        g._mask = self.game._mask.copy()     # the legal-mask scratch buffer of Game
        r.game = g
        r.seed = self.seed
        r.header = self.header
        r.start = list(self.start)
        r.events = list(self.events)         # events are tuples, never changed in place
        r.played = self.played.copy()
        return r


def _pile_text(piles) -> str:
    return " ".join(f"{PILES[p]}:{''.join(card_text(c) for c in pile)}" for p, pile in enumerate(piles) if pile)


class KingsInTheCornerState(pyspiel.State):
    """One round: a chance node (the deal), then the seats' actions (kc-sim action ids)."""

    def __init__(self, game):
        super().__init__(game)
        self._r = None
        self._rewards = np.zeros(L.MAX_SEATS, dtype=np.float64)   # env_step's scratch (returns() reads the game)
        self._info = np.zeros(INFO_SIZE, dtype=np.int64)

    # --- the kc-sim side ------------------------------------------------------------------
    @property
    def kc_game(self) -> Game | None:
        """The wrapped :class:`kc_sim.play.table.game.Game` (the full round: not for agents), or None before the deal."""
        return None if self._r is None else self._r.game

    @property
    def round_seed(self) -> int | None:
        """The kc-sim round seed of the deal (None before it, -1 for a state made from a view)."""
        return None if self._r is None else self._r.seed

    def _deal(self, seed: int) -> None:
        gm = self.get_game()
        g = Game(gm.players, gm.rules, seed)
        r = _Round()
        r.game, r.seed = g, seed
        r.header = (f"{gm.players} players, rules {gm.rules.spec()}, dealer {g.dealer}, "
                    f"layout {_pile_text(g.initial['piles'])}")
        r.start = [tuple(h) for h in g.initial["hands"]]
        r.events = []
        r.played = np.zeros((L.MAX_SEATS, N_CARDS), dtype=np.int8)
        if g.drew is not None:                   # the first turn opened with a draw (draw=start / if_stuck)
            r.events.append((g.seat, CHANCE_OPEN, ((g.seat, g.drew),)))
        self._r = r

    # --- OpenSpiel API ------------------------------------------------------------------
    def current_player(self):
        if self._r is None:
            return pyspiel.PlayerId.CHANCE
        g = self._r.game
        if g.over:
            return pyspiel.PlayerId.TERMINAL
        return g.seat

    def _legal_actions(self, player):
        return self._r.game.legal_actions()

    def chance_outcomes(self):
        return self.get_game().chance_outcomes()

    def _apply_action(self, action):
        if self._r is None:
            gm = self.get_game()
            if not 0 <= action < gm.seeds:
                raise ValueError(f"bad deal outcome {action}: expected 0 to {gm.seeds - 1}")
            self._deal(gm.first_seed + int(action))
            return
        r = self._r
        g = r.game
        seat = g.seat
        info = self._info
        if env_step(g.state, int(action), self._rewards, info) == ILLEGAL:
            raise IllegalActionError(f"illegal action {action} for seat {seat}: {why_illegal(g, int(action))}")
        gains = ()
        if info[I_DRAWER] >= 0:                   # one draw at most per action (around a stop)
            gains = ((int(info[I_DRAWER]), int(info[I_DRAWN])),)
        if action < L.MOVE_BASE:
            r.played[seat, action >> 3] += 1
        r.events.append((seat, int(action), gains))

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal round seed {self.get_game().first_seed + action}"
        return ACTION_TEXT[action]

    def is_terminal(self):
        return self._r is not None and self._r.game.over

    def returns(self):
        if self._r is None or not self._r.game.over:
            return [0.0] * self.get_game().players
        return [float(-p) for p in self._r.game.penalties]

    def __str__(self):
        if self._r is None:
            return "before the deal"
        g = self._r.game
        hands = " | ".join(f"{s}: {hand_text(g.hand(s))}" for s in range(g.players))
        stock = "".join(card_text(c) for c in g.stock)
        state = (f"over {g.end} winner {g.winner} penalties {g.penalties}" if g.over else
                 f"seat {g.seat} to act, turn actions {g.turn_actions}, drew "
                 f"{'-' if g.drew is None else card_text(g.drew)}, idle {int(g.state[L.IDLE])}")
        return f"hands {hands}\npiles {_pile_text(g.piles)}\nstock {stock or '-'}\n{state}"

    # --- information ----------------------------------------------------------------------
    def information_state_text(self, player: int) -> str:
        """What ``player`` knows (perfect recall): see the module docstring."""
        r = self._r
        if r is None:
            return f"p{player} before the deal"
        parts = [f"p{player} | {r.header} | hand {''.join(card_text(c) for c in r.start[player])} |"]
        for seat, a, gains in r.events:
            t = f"{seat}:{'open' if a == CHANCE_OPEN else ACTION_TEXT[a]}"
            for s, c in gains:
                t += f"+{s}:{card_text(c) if s == player else '?'}"
            parts.append(t)
        return " ".join(parts)

    def observation_text(self, player: int) -> str:
        """What ``player`` sees now (no memory)."""
        r = self._r
        if r is None:
            return f"p{player} before the deal"
        g = r.game
        sizes = " ".join(str(int(g.state[L.HAND_N + (player + k) % g.players])) for k in range(g.players))
        to_act = "over" if g.over else f"seat {g.seat}"
        own = not g.over and g.seat == player
        drew = card_text(g.drew) if own and g.drew is not None else "-"
        return (f"p{player} hand {''.join(card_text(c) for c in g.hand(player)) or '-'} | piles {_pile_text(g.piles)} | "
                f"hands {sizes} | stock {len(g.stock)} | {to_act} | turn actions {g.turn_actions if own else 0} "
                f"| drew {drew}")

    def resample_from_infostate(self, player, probability_sampler):
        """A state ``player`` cannot tell from this one: the cards it cannot see (the other
        hands and the stock) dealt again uniformly at random, each hand keeping its size.

        The other seats' records are relabelled to match: the cards a seat still holds
        take the places, in its dealt hand and its draws, of the cards it held, so its own
        information state stays consistent with its new hand (the same key always gives the
        same legal actions, which IS-MCTS relies on). Played cards never change. The
        sample is uniform over the hidden cards; it does not weigh deals by how likely they
        make the others' past choices (e.g. a draw under draw=if_stuck, which tells that the
        drawer could not play), an approximation documented in docs/openspiel.md.
        ``probability_sampler()`` gives the uniform numbers in [0, 1) of the shuffle."""
        clone = self.clone()
        r = clone._r
        if r is None or r.game.over:
            return clone
        g = r.game
        st = g.state
        others = [s for s in range(g.players) if s != player]
        old = {s: g.hand(s) for s in others}
        pos, n = int(st[L.STOCK_POS]), int(st[L.STOCK_LEN])
        pool = [c for s in others for c in old[s]] + [int(c) for c in st[L.STOCK + pos:L.STOCK + n]]
        for i in range(len(pool) - 1, 0, -1):                # Fisher-Yates from the sampler
            j = min(int(probability_sampler() * (i + 1)), i)
            pool[i], pool[j] = pool[j], pool[i]
        k = 0
        new = {}
        for s in others:
            new[s] = pool[k:k + len(old[s])]
            k += len(old[s])
        g.redeal_hidden(new, pool[k:])
        _relabel(r, old, new)
        return clone


def _relabel(r: _Round, old: dict, new: dict) -> None:
    """Rewrite each seat's private records (dealt hand, draws) so the cards it held
    (``old[s]``) become the ones it now holds (``new[s]``): walking back from the last
    record, the latest copies of the held cards are the ones still held."""
    for s, held in old.items():
        if not held:
            continue
        need = {}
        for c in held:
            need[c] = need.get(c, 0) + 1
        slots = []                                   # (event index or -1 for start, position), latest first
        for i in range(len(r.events) - 1, -1, -1):
            for j, (who, c) in enumerate(r.events[i][2]):
                if who == s and need.get(c, 0) > 0:
                    need[c] -= 1
                    slots.append((i, j))
        start = list(r.start[s])
        for j in range(len(start) - 1, -1, -1):
            c = start[j]
            if need.get(c, 0) > 0:
                need[c] -= 1
                slots.append((-1, j))
        replacement = list(new[s])
        for (i, j), c in zip(slots, replacement):
            if i < 0:
                start[j] = c
            else:
                seat, a, gains = r.events[i]
                gains = list(gains)
                gains[j] = (s, c)
                r.events[i] = (seat, a, tuple(gains))
        r.start[s] = tuple(sorted(start))


class _Observer:
    """OpenSpiel's PyObserver interface: ``tensor``/``dict`` filled by ``set_from``, text by ``string_from``.

    The observation (``perfect_recall=False``) is the 1,575-value encoding of
    :mod:`kc_sim.env.obs_planes`; the information state adds ``played``: how many copies of
    each card each relative seat has placed from its hand (8 x 52)."""

    def __init__(self, game: KingsInTheCornerGame, iig_obs_type):
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(f"{GAME_NAME} observes for a single player with public information only")
        self.perfect_recall = iig_obs_type.perfect_recall
        self.codes = game.codes
        size = PLANES_SIZE + (PLAYED_SIZE if self.perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[:PLANES_SIZE]}
        if self.perfect_recall:
            self.dict["played"] = self.tensor[PLANES_SIZE:].reshape(L.MAX_SEATS, N_CARDS)
        self._vec = np.zeros(OBS_SIZE, dtype=np.int8)

    def set_from(self, state, player):
        self.tensor.fill(0)
        r = state._r
        if r is None:
            return
        g = r.game
        fill_observation(g.state, player, self._vec)
        planes_from_vector(self._vec, self.codes, self.tensor[:PLANES_SIZE])
        if self.perfect_recall:
            n = g.players
            self.dict["played"][:n] = r.played[[(player + k) % n for k in range(n)]]

    def string_from(self, state, player):
        return state.information_state_text(player) if self.perfect_recall else state.observation_text(player)


pyspiel.register_game(GAME_TYPE, KingsInTheCornerGame)


def load(players: int = 2, rules="classic", seeds: int = DEFAULT_SEEDS, first_seed: int = 0):
    """``pyspiel.load_game`` of this game with these parameters (rules in either spelling)."""
    return pyspiel.load_game(GAME_NAME, {"players": int(players), "rules": _safe_rules(rules),
                                         "seeds": int(seeds), "first_seed": int(first_seed)})


# --- a state from a seat's view, for agents ----------------------------------------------------

def state_from_view(game: KingsInTheCornerGame, view, idle: int = 0, rng: random.Random | None = None):
    """A state of ``game`` in which the seat of ``view`` (a :class:`kc_sim.play.table.view.SeatView`)
    sees exactly what the view shows: its hand, the piles, the hand sizes, the stock size and
    its turn so far. The cards it cannot see are dealt at random (``rng``) among the other
    hands and the stock; a search then redraws them with :meth:`resample_from_infostate`.

    The view holds no history, so the state's information starts at this position
    (the header is the position), and the dealer (which no rule of a round reads) is taken
    as the seat to the right of the acting one. ``idle`` is the number of idle turns in a
    row before this one (the blocked-round count; the view does not show it)."""
    if view.players != game.players or view.rules != game.rules:
        raise UserError(f"view of {view.players} players under {view.rules.spec()} does not match the game "
                        f"({game.players} players, {game.rules.spec()})")
    rng = rng or random.Random(0)
    seat, players = view.seat, view.players
    hidden = [c for c in range(N_CARDS) for _ in range(game.rules.decks)]
    for c in list(view.hand) + [c for pile in view.piles for c in pile]:
        hidden.remove(c)
    rng.shuffle(hidden)
    sizes = view.hand_sizes
    hands, k = [], 0
    for s in range(players):
        if s == seat:
            hands.append(list(view.hand))
        else:
            hands.append(hidden[k:k + sizes[s]])
            k += sizes[s]
    stock = hidden[k:]
    if len(stock) != view.stock_size:
        raise UserError(f"inconsistent view: {len(stock)} unseen cards left for a stock of {view.stock_size}")
    g = Game.mid_turn(hands, [list(p) for p in view.piles], stock, seat, game.rules,
                      turn_actions=view.turn_actions, drew=view.drew, idle=idle)
    state = game.new_initial_state()
    r = _Round()
    r.game, r.seed = g, -1
    r.header = (f"{players} players, rules {game.rules.spec()}, from the view of seat {seat}: "
                f"piles {_pile_text(view.piles)}, hands {' '.join(map(str, sizes))}, stock {view.stock_size}, "
                f"turn actions {view.turn_actions}, drew {'-' if view.drew is None else card_text(view.drew)}, "
                f"idle {idle}")
    r.start = [tuple(sorted(h)) for h in hands]
    r.events = []
    r.played = np.zeros((L.MAX_SEATS, N_CARDS), dtype=np.int8)
    state._r = r
    return state
