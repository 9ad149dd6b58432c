"""A batched compiled environment: B rounds stepped together, one compiled call per step
(in the manner of pgx / EnvPool).

    from kc_sim.env.batch import BatchEnv

    env = BatchEnv(1024, players=2, rules="classic", opponents={1: "greedy"})
    out = env.reset(seeds)                 # int64[B] round seeds (or one int)
    while True:
        out = env.step(env.sample())       # int64[B] action ids of the seats to act

``BatchEnv(batch_size, players=2, rules="classic", opponents=None, auto_reset=True,
observation="vector")``; ``observation="planes"`` gives the learnable encoding of
:mod:`kc_sim.env.obs_planes` (float32[B, 1575]) instead of the 143-value vector, and
``"planes_opens"`` that encoding with what each action opens (float32[B, 2024]).
``opponents`` maps seats to compiled kc-sim agents (``{1: "greedy"}``): they play inside
the compiled call, after each learner action, until a learner seat must act or the round
ends. The other seats are learners; ``step`` takes their actions.

Arrays (``env.out``, preallocated: ``reset`` and ``step`` overwrite and return them; copy to keep)
    ``current_player`` int64[B]: learner seat to act, -1 in a finished round (no auto-reset);
    ``observation`` int8[B, 143]: the AEC env's layout (:mod:`kc_sim.env.obs_vector`) for that seat (for the last
    learner seat to act once the round is over); ``legal_action_mask`` int8[B, 449] (zeros
    once over); ``rewards`` float32[B, players]: minus each seat's penalty on the step that
    ends a round, else 0; ``terminated`` bool[B]: true on that step. ``state`` int64[B,
    STATE_SIZE] and ``memory`` int64[B, players, MEM_SIZE] are the rounds and the policy
    memories (``kc_sim.core.layout``, ``kc_sim.core.policy``).

Seeding
    ``reset(seeds)`` deals env i's round 0 from round seed ``seeds[i]`` exactly as the
    compiled round loop does (dealer ``first_dealer(seed, players)``, policy memories
    seeded from the round seed), so rounds equal ``kc_sim.play.driver.runner.play_rounds`` and
    the AEC env's ``reset(options={"round_seed": seed})``. ``reset(S)`` with one int uses
    ``seeds[i] = derive(S, i)``. With ``auto_reset``, env i's round k >= 1 is dealt from
    ``derive(seeds[i], k)`` (``round_seeds`` and ``episodes`` hold the current ones), at
    once when round k-1 ends: ``terminated`` and the rewards are then the old round's,
    the other arrays the new round's. A round the opponents end before any learner acts
    is then not reported: it counts in ``skipped`` and the next one is dealt. Without
    auto-reset a finished env stays over and ignores its actions until the next
    ``reset`` (a round the opponents end at once is reported by ``reset`` itself).

Actions
    An illegal action raises ``ValueError`` naming the env and the action before any env
    is stepped (checked in compiled code). ``sample(rng_seed=None)`` draws a uniformly
    random legal action per env from per-env generators (reseeded as ``derive(rng_seed, i)``
    when a seed is given).

The observation is :mod:`kc_sim.env.obs_vector`'s (no PettingZoo needed).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numba as nb
import numpy as np
from numba import types
from numba.experimental import structref

from kc_sim.core import layout as L
from kc_sim.core.bits import nth_bit, popcount
from kc_sim.core.ids import place_id
from kc_sim.core.legal import (
    count_moves,
    hand_mask,
    is_legal,
    nth_play,
    place_mask,
    stop_legal,
)
from kc_sim.core.loop import MAX_DECISIONS, POLICIES_TYPE, seed_policies
from kc_sim.core.policy import MEM_SIZE, compiled_policy, compiling
from kc_sim.core.rng import below, derive
from kc_sim.core.step import deal, first_dealer
from kc_sim.env.obs_planes import OBSERVATIONS, SIZES, planes_opens_rows, planes_rows
from kc_sim.env.obs_vector import OBS_SIZE
from kc_sim.env.step import INFO_SIZE, STEPPED, IllegalActionError, env_step, observe
from kc_sim.errors import UserError
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.agents.registry import load_agent

__all__ = ["BatchEnv", "BatchOutput"]

N_ACTIONS = L.N_ACTIONS

OK = -1                      # kernel status: all stepped
_OPP_ILLEGAL = 1             # opponent status codes (kernel returns -(2 + i) and writes them)
_OPP_TOO_LONG = 2


class BatchOutput(NamedTuple):
    """What ``reset`` and ``step`` return: the env's own preallocated arrays."""
    current_player: np.ndarray
    observation: np.ndarray
    legal_action_mask: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray


# --- compiled parts --------------------------------------------------------------------------
#
# The opponents' policies reach the kernels in a structref built once per env: a tuple of
# first-class functions passed from Python is converted at every call (about 60 us per
# policy, 0.5 ms for the 8-seat tuple), a structref is one pointer.

@structref.register
class _PoliciesType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((n, types.unliteral(t)) for n, t in fields)


class _Policies(structref.StructRefProxy):
    """The 8-seat policy tuple (``POLICIES_TYPE``) held for the compiled kernels."""


structref.define_proxy(_Policies, _PoliciesType, ["policies"])
POLICIES_BOX = _PoliciesType([("policies", POLICIES_TYPE)])


def _box_policies(policies):
    return _Policies(policies)


@nb.njit(cache=True, inline="always")
def _write(i, st, last, cur, obs, mask):
    """Env i's current player, observation and mask (those of the last learner seat to act
    once the round is over)."""
    if st[L.DONE]:
        cur[i] = -1
    else:
        cur[i] = st[L.SEAT]
        last[i] = st[L.SEAT]
    observe(st, last[i], obs[i], mask[i])


@nb.njit(cache=True, inline="always")
def _opponents(st, m, policies, learner, opp_status, i, r, info):
    """Play the opponent seats of round ``st`` (memories ``m``) until a learner seat must
    act or the round ends (its rewards then in ``r``). False (and ``opp_status`` row i
    written) on a bad opponent."""
    for _ in range(MAX_DECISIONS):
        if st[L.DONE]:
            return True
        seat = st[L.SEAT]
        if learner[seat]:
            return True
        a = policies.policies[seat](st, seat, m[seat])
        if env_step(st, a, r, info) != STEPPED:
            opp_status[i, 0] = _OPP_ILLEGAL
            opp_status[i, 1] = seat
            opp_status[i, 2] = a
            return False
    opp_status[i, 0] = _OPP_TOO_LONG
    opp_status[i, 1] = st[L.SEAT]
    opp_status[i, 2] = -1
    return False


@nb.njit(cache=True, inline="always")
def _settle(i, st, m, fresh, seeds, episodes, round_seeds, skipped, policies, learner, players, rules,
            auto_reset, rew, term, opp_status, r, info):
    """After a deal (``fresh``) or a learner action (its rewards in ``r``): let the opponents
    play; report a finished round's rewards and, with auto-reset, deal env i's next one (a
    round over before any learner action is only counted in ``skipped``). False on a bad opponent."""
    for _ in range(MAX_DECISIONS):
        if not _opponents(st, m, policies, learner, opp_status, i, r, info):
            return False
        if not st[L.DONE]:
            return True
        if auto_reset and fresh:
            skipped[i] += 1
        else:
            term[i] = True
            for s in range(players):
                rew[i, s] = r[s]
        if not auto_reset:
            return True
        episodes[i] += 1
        seed = derive(seeds[i], episodes[i])
        round_seeds[i] = seed
        deal(st, seed, players, first_dealer(seed, players), rules)
        seed_policies(m, seed, players)
        fresh = True
    return True


def _reset_kernel(states, mem, seeds, episodes, round_seeds, skipped, last, policies, learner, players, rules,
                  auto_reset, cur, obs, mask, rew, term, opp_status):
    """Deal every env's round 0 from ``seeds``; returns OK or -(2 + i) for a bad opponent in env i."""
    r = np.zeros(L.MAX_SEATS, dtype=np.float32)
    info = np.zeros(INFO_SIZE, dtype=np.int64)
    for i in range(states.shape[0]):
        st = states[i]
        m = mem[i]
        seed = seeds[i]
        episodes[i] = 0
        skipped[i] = 0
        round_seeds[i] = seed
        deal(st, seed, players, first_dealer(seed, players), rules)
        seed_policies(m, seed, players)
        rew[i, :] = 0
        term[i] = False
        last[i] = 0
        for s in range(players):          # the first learner seat from the first player on
            k = (st[L.SEAT] + s) % players
            if learner[k]:
                last[i] = k
                break
        if not _settle(i, st, m, True, seeds, episodes, round_seeds, skipped, policies, learner, players, rules,
                       auto_reset, rew, term, opp_status, r, info):
            return -(2 + i)
        _write(i, st, last, cur, obs, mask)
    return OK


def _step_kernel(states, mem, actions, seeds, episodes, round_seeds, skipped, last, policies, learner, players, rules,
                 auto_reset, cur, obs, mask, rew, term, opp_status):
    """Check every action, then step every env. Returns OK, i >= 0 for an illegal action
    in env i (nothing stepped), or -(2 + i) for a bad opponent in env i."""
    n = states.shape[0]
    r = np.zeros(L.MAX_SEATS, dtype=np.float32)
    info = np.zeros(INFO_SIZE, dtype=np.int64)
    for i in range(n):                    # all or nothing: env_step would refuse an illegal action
        st = states[i]                    # after the envs before it were stepped
        if not st[L.DONE] and not is_legal(st, actions[i]):
            return i
    for i in range(n):
        st = states[i]
        rew[i, :] = 0
        if env_step(st, actions[i], r, info) != STEPPED:    # over, no auto-reset: frozen
            term[i] = True
            continue
        term[i] = False
        if not _settle(i, st, mem[i], False, seeds, episodes, round_seeds, skipped, policies, learner, players,
                       rules, auto_reset, rew, term, opp_status, r, info):
            return -(2 + i)
        _write(i, st, last, cur, obs, mask)
    return OK


@nb.njit(cache=True)
def _sample_kernel(states, rng, out):
    """A uniformly random legal action per env (stop for a finished one)."""
    for i in range(states.shape[0]):
        st = states[i]
        if st[L.DONE]:
            out[i] = L.STOP
            continue
        hand = hand_mask(st, st[L.SEAT])
        k = 0
        for p in range(L.N_PILES):
            k += popcount(place_mask(st, hand, p))
        total = k + count_moves(st)
        stop = 1 if stop_legal(st) else 0
        r = below(rng, i, total + stop)
        if r >= total:
            out[i] = L.STOP
        elif r >= k:
            out[i] = nth_play(st, r)
        else:
            for p in range(L.N_PILES):
                m = place_mask(st, hand, p)
                c = popcount(m)
                if r < c:
                    out[i] = place_id(nth_bit(m, r), p)
                    break
                r -= c


@nb.njit(cache=True)
def _derive_all(seed, n, out):
    for i in range(n):
        out[i] = derive(seed, i)


def _no_policy(st, seat, mem):
    """Stands in the policy tuple for learner seats (never called)."""
    return L.STOP


I1 = types.int64[::1]
I2 = types.int64[:, ::1]
I3 = types.int64[:, :, ::1]
_OUT = (I1, types.int8[:, ::1], types.int8[:, ::1], types.float32[:, ::1], types.boolean[::1], I2)
_RESET_SIG = types.int64(I2, I3, I1, I1, I1, I1, I1, POLICIES_BOX, I1, types.int64, I1, types.boolean, *_OUT)
_STEP_SIG = types.int64(I2, I3, I1, I1, I1, I1, I1, I1, POLICIES_BOX, I1, types.int64, I1, types.boolean, *_OUT)
_kernels: dict = {}
_lock = threading.Lock()


def _compiled():
    """(reset kernel, step kernel, the stand-in policy), compiled or loaded from numba's cache on first use."""
    with _lock:
        if not _kernels:
            with compiling():
                reset = nb.njit(cache=True)(_reset_kernel)
                reset.compile(_RESET_SIG)
                reset.disable_compile()
                step = nb.njit(cache=True)(_step_kernel)
                step.compile(_STEP_SIG)
                step.disable_compile()
                box = nb.njit(cache=True)(_box_policies)
                box.compile(POLICIES_BOX(POLICIES_TYPE))
                box.disable_compile()
            _kernels.update(reset=reset, step=step, box=box, none=compiled_policy(_no_policy))
    return _kernels


# --- the environment -------------------------------------------------------------------------

class BatchEnv:
    """``batch_size`` rounds stepped together by one compiled call; see the module docstring."""

    def __init__(self, batch_size: int, players: int = 2, rules: str | RuleSet = "classic",
                 opponents: dict | None = None, auto_reset: bool = True, observation: str = "vector"):
        try:
            batch_size, players = int(batch_size), int(players)
        except (TypeError, ValueError):
            raise UserError(f"bad batch_size {batch_size!r} or players {players!r}: expected integers") from None
        if batch_size < 1:
            raise UserError(f"bad batch_size {batch_size}: expected at least 1")
        if observation not in OBSERVATIONS:
            raise UserError(f"bad observation {observation!r}: expected {', '.join(OBSERVATIONS)}")
        self.observation = observation
        self.rules = parse_rules(rules)
        self.rules.check_players(players)
        self.batch_size, self.players, self.auto_reset = batch_size, players, bool(auto_reset)
        self._codes = self.rules.codes()
        k = _compiled()
        self._reset_fn, self._step_fn, none = k["reset"], k["step"], k["none"]
        opponents = dict(opponents or {})
        self.opponents = {}
        pols = [none] * L.MAX_SEATS
        for seat, name in opponents.items():
            if not isinstance(seat, (int, np.integer)) or not 0 <= seat < players:
                raise UserError(f"bad opponent seat {seat!r}: expected a seat from 0 to {players - 1}")
            spec = load_agent(name)
            if not spec.compiled:
                raise UserError(f"opponent {spec.name!r} is a Python agent: BatchEnv plays compiled agents only")
            pols[int(seat)] = spec.policy
            self.opponents[int(seat)] = spec.name
        if len(self.opponents) == players:
            raise UserError("every seat is an opponent: leave at least one learner seat")
        self._policies = tuple(pols)          # kept alive: the box holds their addresses
        self._box = k["box"](self._policies)
        #: learner seats (seats without an opponent), ascending
        self.learners = tuple(s for s in range(players) if s not in self.opponents)
        self._learner = np.zeros(L.MAX_SEATS, dtype=np.int64)
        self._learner[list(self.learners)] = 1
        B = batch_size
        self.state = np.zeros((B, L.STATE_SIZE), dtype=np.int64)
        self.memory = np.zeros((B, players, MEM_SIZE), dtype=np.int64)
        self.seeds = np.zeros(B, dtype=np.int64)
        self.episodes = np.zeros(B, dtype=np.int64)
        self.round_seeds = np.zeros(B, dtype=np.int64)
        self.skipped = np.zeros(B, dtype=np.int64)
        self._last = np.zeros(B, dtype=np.int64)
        self._opp = np.zeros((B, 3), dtype=np.int64)
        self._rng = np.zeros(B, dtype=np.int64)
        _derive_all(np.int64(0x73616D70), B, self._rng)
        self._actions = np.zeros(B, dtype=np.int64)
        self.out = BatchOutput(
            current_player=np.full(B, -1, dtype=np.int64),
            observation=np.zeros((B, OBS_SIZE), dtype=np.int8),
            legal_action_mask=np.zeros((B, N_ACTIONS), dtype=np.int8),
            rewards=np.zeros((B, players), dtype=np.float32),
            terminated=np.zeros(B, dtype=np.bool_),
        )
        self._vector = self.out.observation
        if observation != "vector":           # the learnable encodings, computed from the vector
            self.out = self.out._replace(observation=np.zeros((B, SIZES[observation]), dtype=np.float32))
        self._ready = False

    def _encode(self) -> None:
        if self.observation == "planes":
            planes_rows(self._vector, self._codes, self.out.observation)
        elif self.observation == "planes_opens":
            planes_opens_rows(self._vector, self._codes, self.out.observation)

    def reset(self, seeds) -> BatchOutput:
        """Deal a new round in every env: ``seeds`` int64[B] round seeds, or one int S for
        ``derive(S, i)``."""
        if np.ndim(seeds) == 0:
            _derive_all(np.int64(int(seeds) % (1 << 63)), self.batch_size, self.seeds)
        else:
            s = np.asarray(seeds)
            if s.shape != (self.batch_size,) or not np.issubdtype(s.dtype, np.integer):
                raise ValueError(f"bad seeds: expected {self.batch_size} integers, got shape {s.shape} {s.dtype}")
            self.seeds[:] = s
        o = self.out
        r = self._reset_fn(self.state, self.memory, self.seeds, self.episodes, self.round_seeds, self.skipped, self._last,
                           self._box, self._learner, self.players, self._codes, self.auto_reset,
                           o.current_player, self._vector, o.legal_action_mask, o.rewards, o.terminated, self._opp)
        self._ready = r == OK
        self._encode()
        self._check_opponent(r)
        return o

    def step(self, actions) -> BatchOutput:
        """Apply one action per env (int64[B] action ids of the learner seats to act;
        ignored in a finished env), then let the opponents play; the arrays are rewritten."""
        if not self._ready:
            raise UserError("call reset(seeds) first")
        a = actions
        if not (isinstance(a, np.ndarray) and a.dtype == np.int64 and a.shape == (self.batch_size,)
                and a.flags.c_contiguous):
            a = np.asarray(actions)
            if a.shape != (self.batch_size,) or not np.issubdtype(a.dtype, np.integer):
                raise ValueError(f"bad actions: expected {self.batch_size} integer action ids, "
                                 f"got shape {a.shape} {a.dtype}")
            a = np.ascontiguousarray(a, dtype=np.int64)
        o = self.out
        r = self._step_fn(self.state, self.memory, a, self.seeds, self.episodes, self.round_seeds, self.skipped, self._last,
                          self._box, self._learner, self.players, self._codes, self.auto_reset,
                          o.current_player, self._vector, o.legal_action_mask, o.rewards, o.terminated, self._opp)
        self._encode()
        if r >= 0:
            seat = int(self.state[r, L.SEAT])
            raise IllegalActionError(f"illegal action {int(a[r])} in env {r} (seat {seat} to act); "
                                     "no env was stepped")
        self._check_opponent(r)
        return o

    def _check_opponent(self, r: int) -> None:
        if r < -1:
            i = -(r + 2)
            self._ready = False
            kind, seat, action = (int(x) for x in self._opp[i])
            name = self.opponents.get(seat, "?")
            what = f"played the illegal action {action}" if kind == _OPP_ILLEGAL else "made too many decisions"
            raise RuntimeError(f"opponent {name!r} (seat {seat}) {what} in env {i}; "
                               "the batch is left part-stepped: call reset()")

    def sample(self, rng_seed: int | None = None) -> np.ndarray:
        """A uniformly random legal action per env (int64[B], one array rewritten per call;
        stop in a finished env). ``rng_seed`` reseeds the per-env generators first."""
        if rng_seed is not None:
            _derive_all(np.int64(int(rng_seed) % (1 << 63)), self.batch_size, self._rng)
        _sample_kernel(self.state, self._rng, self._actions)
        return self._actions

    random_actions = sample
