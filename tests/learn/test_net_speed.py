"""The faster network policy computes what the plain one did (tests/learn/net_reference.py):
at every decision of many rounds (every round switch, 2 to 4 players, random networks of one
and two hidden layers) the context, every legal action's features and its score are
bit-identical to the reference's and :func:`net_act` chooses the reference's action; and the
bit tricks the features use equal the table loops they replace."""

import numba as nb
import numpy as np
import pytest

from kc_sim.core import layout as L
from kc_sim.core.rng import below
from kc_sim.core.step import apply, deal, penalty_of_masks
from kc_sim.net import features as OA
from kc_sim.net.features import F_ACT, F_CTX, WS_SIZE
from kc_sim.game.cards import ALL_MASK, FITS_ON
from kc_sim.game.variants import Scoring
from kc_sim.net import policy as NP
from kc_sim.testing import round_rule_sets

from . import net_reference as R

# mismatch codes of _compare
OK, CHOICE, LEGAL, CONTEXT, FEATURES, SCORE = range(6)


def _random_params(h1, h2, seed):
    rng = np.random.default_rng(seed)
    p = (rng.normal(size=NP.param_size(h1, h2)) * 0.5).astype(np.float32)
    p[0], p[1] = h1, h2
    return p


@nb.njit(cache=False)
def _fits_on_loop(m):
    out = np.int64(0)
    while m:
        c = np.int64(0)
        while not (m >> c) & 1:
            c += 1
        out |= FITS_ON[c]
        m &= m - 1
    return out


@nb.njit(cache=False)
def _check_bits(masks):
    """The first mask on which the shift form of fits_on_any or the loop-free penalty differs
    from the tables (-1: none)."""
    for i in range(masks.shape[0]):
        m = masks[i, 0]
        if OA._fits_on_any(m) != _fits_on_loop(m):
            return i
        for sc in (Scoring.KINGS10, Scoring.FACE):
            if OA._penalty(m, masks[i, 1], sc) != penalty_of_masks(m, masks[i, 1], sc):
                return i
    return -1


def test_bit_tricks_equal_the_tables():
    rng = np.random.default_rng(0)
    masks = rng.integers(0, 1 << 52, size=(20000, 2), dtype=np.int64)
    masks[: 52, 0] = np.int64(1) << np.arange(52)            # every single card
    masks[: 52, 1] = 0
    masks[52:2000] &= rng.integers(0, 1 << 52, size=(1948, 2), dtype=np.int64)   # sparse hands
    masks[2000] = ALL_MASK
    assert _check_bits(masks) == -1


@nb.njit(cache=False)
def _compare(params, rules, players, seeds, explore, out):
    """Play the rounds ``seeds`` (the network's choice, or with probability ``explore`` a random
    legal action) and hold every decision to the reference; ``out`` gets (decisions, actions);
    returns OK or the first mismatch's code."""
    st = np.zeros(L.STATE_SIZE, np.int64)
    mem = np.zeros(2, np.int64)
    ws = np.zeros(WS_SIZE, np.int64)
    rws = np.zeros(R.REF_WS_SIZE, np.int64)
    ctx = np.zeros(F_CTX, np.float32)
    rctx = np.zeros(F_CTX, np.float32)
    acts = np.zeros(449, np.int64)
    racts = np.zeros(449, np.int64)
    xs = np.zeros((449, F_ACT), np.float32)
    rx = np.zeros(F_ACT, np.float32)
    q = np.zeros(449, np.float32)
    h1 = np.int64(params[0])
    hc = np.zeros(h1, np.float32)
    h = np.zeros(h1, np.float32)
    g = np.zeros(max(h1, np.int64(params[1])), np.float32)
    for seed in seeds:
        deal(st, seed, players, seed % players, rules)
        mem[0] = seed
        while not st[L.DONE]:
            s = st[L.SEAT]
            a = NP.net_act(st, s, params, ws)
            if a != R.ref_net_act(st, s, params, rws):
                return CHOICE
            n = NP.scores(st, s, params, ws, ctx, acts, xs, q)
            # the reference's legal actions: placements pile by pile, then moves, then stop
            rn = 0
            hand = st[L.HAND + 2 * s]
            for p in range(L.N_PILES):
                for c in range(52):
                    if (R.place_mask(st, hand, p) >> c) & 1:
                        racts[rn] = c * 8 + p
                        rn += 1
            mm = R.move_mask(st)
            for b in range(64):
                if (mm >> b) & 1:
                    racts[rn] = L.MOVE_BASE + b
                    rn += 1
            if R.stop_legal(st):
                racts[rn] = L.STOP
                rn += 1
            if rn != n:
                return LEGAL
            plays = n - 1 if n > 0 and racts[n - 1] == L.STOP else n
            R.ref_begin_decision(st, s, plays, rws, rctx)
            for k in range(F_CTX):
                if ctx[k] != rctx[k]:
                    return CONTEXT
            R._context(params, rctx, hc)
            for i in range(n):
                if acts[i] != racts[i]:
                    return LEGAL
                R.ref_action_features(racts[i], rws, rx)
                for k in range(F_ACT):
                    if xs[i, k] != rx[k] or np.signbit(xs[i, k]) != np.signbit(rx[k]):
                        return FEATURES
                rq = R._score(params, hc, rx, h, g)
                if q[i] != rq and not (np.isnan(q[i]) and np.isnan(rq)):
                    return SCORE
            out[0] += 1
            out[1] += n
            if n > 1 and below(mem, 0, 1000) < explore * 1000:
                a = racts[below(mem, 0, n)]
            apply(st, a)
    return OK


RULES = round_rule_sets()


@pytest.mark.parametrize("h1,h2", [(32, 0), (16, 8), (64, 32)])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_features_scores_and_choices_equal_the_reference(h1, h2, players):
    """Every round switch (96 rule sets) at each table size, four rounds each: a few thousand
    decisions per case, every legal action's features and score compared."""
    params = _random_params(h1, h2, seed=h1 + 7 * h2 + players)
    out = np.zeros(2, np.int64)
    for i, rules in enumerate(RULES):
        seeds = np.arange(4, dtype=np.int64) + 1000 * i + 100 * players
        explore = 0.3 if i % 2 else 0.0
        code = _compare(params, rules.codes(), players, seeds, explore, out)
        assert code == OK, f"{['ok', 'choice', 'legal', 'context', 'features', 'score'][code]} differs " \
                           f"under {rules} with {players} players"
    assert out[0] > 3000 and out[1] > 2 * out[0]


def test_a_net_too_wide_for_the_stack_takes_its_scratch_from_the_heap():
    """Beyond STACK_BYTES of scratch net_act allocates it (the other branch), and chooses the
    same."""
    h1 = NP.STACK_BYTES // 16 + 8
    params = _random_params(h1, 0, seed=1) * np.float32(0.1)
    params[0] = h1
    out = np.zeros(2, np.int64)
    for i, rules in enumerate(RULES[::24]):
        assert _compare(params, rules.codes(), 2, np.arange(2, dtype=np.int64) + 10 * i, 0.3, out) == OK
    assert out[0] > 100


@nb.njit(cache=False)
def _crowded(rules, players, seeds, moves, out, limit):
    """Copies (into ``out``, at most ``limit``) of decisions from random rounds in which one card
    may go on two sides or on two corners (``moves`` false), or one side pile may move onto two
    corners (``moves`` true), not both empty: where net_act's shortcut must tell a repeated
    position from a different one. Returns their number."""
    st = np.zeros(L.STATE_SIZE, np.int64)
    mem = np.zeros(1, np.int64)
    acts = np.zeros(449, np.int64)
    k = 0
    for seed in seeds:
        deal(st, seed, players, 0, rules)
        mem[0] = seed
        while not st[L.DONE] and k < limit:
            n = OA.legal_actions(st, st[L.SEAT], acts)
            crowded = False
            for i in range(n):
                for j in range(i + 1, n):
                    a, b = acts[i], acts[j]
                    if b == L.STOP or (a >= L.MOVE_BASE) != moves or (b >= L.MOVE_BASE) != moves:
                        continue
                    pa, pb = a & 7, b & 7
                    if (a >> 3) == (b >> 3) and (pa < L.N_SIDES) == (pb < L.N_SIDES) and \
                            (st[L.PILE_TOP + pa] >= 0 or st[L.PILE_TOP + pb] >= 0):
                        crowded = True
            if crowded:
                out[k] = st
                k += 1
            apply(st, acts[below(mem, 0, n)])
    return k


@pytest.mark.parametrize("moves", [False, True])
@pytest.mark.parametrize("players", [2, 4])
def test_same_card_or_pile_on_two_piles_is_scored_twice(players, moves):
    """In decisions where a card fits two sides or two corners, or a side pile may move onto two
    corners, not both empty, many random networks choose as the reference does (a shortcut
    that wrongly took the second for a repeat of the first would differ for some)."""
    limit = 150
    states = np.zeros((limit, L.STATE_SIZE), np.int64)
    k = 0
    for i, rules in enumerate(RULES):
        k += _crowded(rules.codes(), players, np.arange(30, dtype=np.int64) + 30 * i, moves, states[k:], limit - k)
    assert k >= (20 if moves else limit)
    ws = np.zeros(WS_SIZE, np.int64)
    rws = np.zeros(R.REF_WS_SIZE, np.int64)
    for net in range(40):
        params = _random_params(16, 8 if net % 2 else 0, seed=500 + net)
        for st in states[:k]:
            s = int(st[L.SEAT])
            assert NP.net_act(st, s, params, ws) == R.ref_net_act(st, s, params, rws)
