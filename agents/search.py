"""Compiled turn search shared by ``planner`` and ``sampler`` (see docs/agents.md, Stronger agents).

At the start of its turn an agent may place cards and move side piles in any order.
:func:`turn_search` explores those sequences depth-first from the seat's own view of the
round (its hand, the piles, the rule switches; nothing hidden), on a compact position
(``agents.position``):

* ``h0, h1``: the hand as two card masks (plane 1 = second copies with two decks);
* ``tops``, ``bases``: the 8 pile tops and bases packed 6 bits each (card + 1, 0 when empty).

Nothing else matters to the rules within a turn (which cards lie under a top never does).
Every node is a possible end of the turn (stopping is always allowed, except under
``must_play_kings`` while a king is held and a corner is empty); each is scored by
:func:`evaluate` and the best (lowest score) are kept with the action sequence that
reaches them.

Pruning and de-duplication:

* **transpositions**: a position reached by two orders of the same actions is expanded
  once (a Zobrist hash of the hand and the packed tops and bases, updated by each action's
  change, in a small open-addressing table);
* **symmetry**: empty sides are interchangeable, and so are empty corners, so a card (or
  a pile) goes only to the *first* empty side (corner);
* **sleep sets**: placements of different cards on different non-empty piles commute, so
  once one order is explored the other is not tried again below it;
* **no pointless moves**: a pile move always frees a side, so moves are explored only
  while the hand holds a card an empty side would take;
* **branch and bound**: once the k best are kept, a node is not expanded when
  :func:`agents.evaluation.stuck_bound_reaches` (a lower bound on the score of every position below it) already
  scores no better than the worst kept: the weighted penalty of the hand cards no
  continuation can place (:func:`placeable_from`) plus, when some card is stuck (so the
  turn cannot go out, which scores 0), the openings nothing below can close
  (:func:`agents.evaluation.fixed_targets`). Admissible with non-negative weights: an uncapped search keeps
  the same scores, about 7x faster;
* **move ordering**: the children are tried by decreasing
  ``64 W_PEN x card penalty - W_OPEN x scale x unseen cards the card newly opens`` (ties:
  highest rank first, pile moves last), so a capped search has already seen the lines that
  shed much and open little;
* a node cap (``max_nodes``, ``MAX_NODES`` = 400) and a depth cap (``MAX_PLAN``) bound
  the work.

Cost: each node's tops are scanned once (their mask and the empty piles) for both the
evaluation and the children; a node whose penalty alone cannot enter the k best is not
evaluated, and its free sides are counted only when its penalty and openings could still
enter; a child's hash is its parent's xor what the action changes (``hash_delta``);
everything lives in one int64 workspace (:func:`search`, :func:`new_workspace`), indexed
unsigned, that a caller making many searches (the sampler) reuses, the table being
cleared slot by slot after each search. About 56 ns per node (89 ns before issue 24's
third pass, the same plans); the searches that reach the cap (7% of them in 2-player
classic) take over half the nodes. With the bound and the ordering, 400 nodes
decide as well as 500 did without them (finishes ahead 50.0% +- 0.2% on 20,000 duplicate
deals), 1.13x faster.

The evaluation of a node and the bounds that prune are :mod:`agents.evaluation`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.evaluation import (  # noqa: F401 - DEFAULT_WEIGHTS, evaluate: re-exported for the agents
    CARD_PEN,
    DEFAULT_WEIGHTS,
    W_DEAD,
    W_FREE,
    W_MODE,
    W_OPEN,
    W_PEN,
    compact_penalty,
    evaluate,
    free_dead,
    open_targets,
    open_weight_scale,
    stuck_bound_reaches,
)
from agents.plans import MAX_PLAN
from agents.position import (  # noqa: F401 - pile_set is re-exported for the tests
    MAX_CHILDREN,
    apply_compact,
    children_of,
    fits_on_set,
    hash_delta,
    ix,
    pack_piles,
    pile_get,
    pile_set,
    pos_hash,
    scan_piles,
    table_key,
    unseen_mask,
)
from kc_sim.core.bits import popcount
from kc_sim.core.kernel import kernel
from kc_sim.core.ids import (
    id_card,
    id_pile,
    id_side,
    is_place,
)
from kc_sim.core.layout import (
    HAND,
    N_PILES,
    PILE_BASE,
    PILE_MASK,
    PILE_TOP,
    RULES,
)
from kc_sim.game.cards import (
    ALL_MASK,
    FITS_ON,
    KINGS_MASK,
    NON_KINGS_MASK,
)
from kc_sim.game.variants import (
    R_DECKS,
    R_KING_ON_EMPTY_SIDE,
    R_MUST_PLAY_KINGS,
    R_SCORING,
)

#: transposition table size (a power of two, > the node cap)
TABLE_SIZE = 1024
#: default node cap of the planner's search
MAX_NODES = 400

#: words of a bit set over placement ids 0..415 (the sleep sets)
_SW = 7
_D = MAX_PLAN + 1
# the search's workspace (one int64 array): the transposition table's keys (all zero
# between searches), the slots filled (to clear them afterwards), 10 words per depth (the
# hand's two planes, children count and index, action, tops, bases, top mask, empty piles,
# hash), the children per depth, and the sleep and explored sets per depth
_W_KEYS = 0
_W_SLOTS = TABLE_SIZE
_W_DEPTH = 2 * TABLE_SIZE
_W_KIDS = _W_DEPTH + 10 * _D
_W_SETS = _W_KIDS + _D * MAX_CHILDREN
_W_ORD = _W_SETS + 2 * _SW * _D
#: size of a search workspace (:func:`new_workspace`)
WS_SIZE = _W_ORD + MAX_CHILDREN
# the per-depth words (each _D long) and the sets, as offsets into ws (indexing ws directly:
# views would cost a reference count each); numba compiles these globals as constants
_H0 = _W_DEPTH
_H1 = _H0 + _D
_NK = _H1 + _D
_IK = _NK + _D
_PATH = _IK + _D
_HT = _PATH + _D
_HB = _HT + _D
_TOPS = _HB + _D
_EMPTY = _TOPS + _D
_HASH = _EMPTY + _D
_SLEEP = _W_SETS
_EXPL = _W_SETS + _SW * _D


@nb.njit(cache=True)
def new_workspace():
    """A workspace for :func:`search`: reusable by any number of searches, one at a time
    (each leaves its table keys zero again)."""
    return np.zeros(WS_SIZE, np.int64)


@nb.njit(cache=True)
def turn_search(st, seat, w, max_nodes, k_best, plans, lens, scores, sleep=True, root_ok=True):
    """Search the seat's possible turns from the current position of ``st`` (own hand,
    piles and rules only). Keeps the ``k_best`` best distinct end positions: their action
    sequences in ``plans[i, :lens[i]]`` and their scores in ``scores[i]``, best first
    (``k_best`` <= plans.shape[0]). The empty plan (stop now) is always a candidate when
    stopping is legal. Returns (number of plans kept, 1 if a line hit the depth cap).

    ``root_ok=False`` leaves out the empty plan (used to avoid ending a round blocked).

    ``sleep``: use sleep sets (partial-order reduction): two placements on different
    non-empty piles of different cards commute, so after exploring one order the other is
    not tried again below (it would only reach positions already explored).

    Allocates a fresh workspace; :func:`search` takes one to reuse."""
    ws = np.empty(WS_SIZE, np.int64)
    ws[:TABLE_SIZE] = 0
    return search(st, seat, w, max_nodes, k_best, plans, lens, scores, sleep, root_ok, ws)


@nb.njit(cache=True, inline="always")
def _keep(scores, lens, plans, ws, path, d, sc, n_kept, k_best):
    """Insert the plan ``ws[path:path + d]`` scoring ``sc`` among the k best (distinct
    positions, best first; the worst drops out when all ``k_best`` are kept). Returns the
    number kept."""
    i = n_kept if n_kept < k_best else k_best - 1
    while i > 0 and scores[i - 1] > sc:
        if i < k_best:
            scores[i] = scores[i - 1]
            lens[i] = lens[i - 1]
            for j in range(lens[i - 1]):
                plans[i, j] = plans[i - 1, j]
        i -= 1
    scores[i] = sc
    lens[i] = d
    for j in range(d):
        plans[i, j] = ws[ix(path + j)]
    return n_kept + 1 if n_kept < k_best else n_kept


@nb.njit(cache=True, inline="always")
def _order_children(ws, base, nk, order, newly, scoring, pen_w, ow):
    """Sort the ``nk`` children at ``ws[base:]`` by the key of the module doc, largest first
    (a placement: its card's weighted penalty less the unseen cards it newly opens; a pile
    move last), with their keys at ``ws[order:]``."""
    for i in range(nk):
        a = ws[ix(base + i)]
        if is_place(a):
            c = id_card(a)
            key = pen_w * CARD_PEN[scoring, c] - ow * popcount(newly & FITS_ON[ix(c)])
        else:
            key = np.int64(-1) << 40
        j = i
        while j > 0 and ws[ix(order + j - 1)] < key:
            ws[ix(order + j)] = ws[ix(order + j - 1)]
            ws[ix(base + j)] = ws[ix(base + j - 1)]
            j -= 1
        ws[ix(order + j)] = key
        ws[ix(base + j)] = a


@nb.njit(cache=True, inline="always")
def _probe(ws, keys, hk):
    """The transposition table's slot for key ``hk`` and whether it is there already."""
    slot = hk & (TABLE_SIZE - 1)
    while ws[ix(keys + slot)] != 0:
        if ws[ix(keys + slot)] == hk:
            return slot, True
        slot = (slot + 1) & (TABLE_SIZE - 1)
    return slot, False


@nb.njit(cache=True, inline="always")
def _child_sleep(ws, sleep_d, expl_d, sleep_e, a, wd, bt, indep, seen):
    """The sleep set of the child reached by ``a`` (at ``ws[sleep_e:]``): for a placement on a
    non-empty pile (``indep``), the parent's sleeping and explored placements that commute with
    it, and ``a`` joins the parent's explored set (``wd``, ``bt``: its word and bit); after any
    other action, none. A child already reached (``seen``) needs none."""
    if indep:
        if not seen:
            pm = ~(np.int64(0x0101010101010101) << id_pile(a))
            cw = id_card(a) >> 3
            cm = ~(np.int64(0xFF) << ((id_card(a) & 7) * 8))
            for j in range(_SW):
                x = (ws[ix(sleep_d + j)] | ws[ix(expl_d + j)]) & pm
                if j == cw:
                    x &= cm
                ws[ix(sleep_e + j)] = x
        ws[ix(expl_d + wd)] |= bt
    elif not seen:
        for j in range(_SW):
            ws[ix(sleep_e + j)] = 0


@nb.njit(cache=True, inline="always")
def _child_tops(tops, empty, tpd, a):
    """With one deck: the top mask and empty piles after action ``a``, from the parent's
    (``tpd`` its packed tops)."""
    p = id_pile(a)
    t = pile_get(tpd, p)
    if t >= 0:
        tops &= ~(np.int64(1) << t)
    empty &= ~(np.int64(1) << p)
    if is_place(a):
        tops |= np.int64(1) << id_card(a)
    else:
        empty |= np.int64(1) << id_side(a)
    return tops, empty


@nb.njit(cache=True, inline="always")
def _root(st, seat, ws):
    """Set the root node (depth 0) of a search of the seat's turn in ``ws``; returns the mask
    of the cards on the table."""
    table = np.int64(0)
    for p in range(N_PILES):
        table |= st[PILE_MASK + p]
    ws[ix(_HT + 0)] = pack_piles(st, PILE_TOP)
    ws[ix(_HB + 0)] = pack_piles(st, PILE_BASE)
    ws[ix(_H0 + 0)] = st[HAND + 2 * seat]
    ws[ix(_H1 + 0)] = st[HAND + 2 * seat + 1]
    ws[ix(_TOPS + 0)], ws[ix(_EMPTY + 0)] = scan_piles(ws[ix(_HT + 0)])
    ws[ix(_HASH + 0)] = pos_hash(ws[ix(_H0 + 0)], ws[ix(_H1 + 0)], ws[ix(_HT + 0)], ws[ix(_HB + 0)])
    return table


@kernel
def search(st, seat, w, max_nodes, k_best, plans, lens, scores, sleep, root_ok, ws):
    """:func:`turn_search` in the workspace ``ws`` (:func:`new_workspace`), which it leaves
    ready for the next search.

    Each node has its top mask and empty piles (kept up to date from its parent's with one
    deck, scanned from the packed tops with two, where two piles may show the same card)
    and the cards that fit, for both the evaluation and the children; its hand's penalty is
    counted once. It skips the evaluation of a node whose penalty alone already scores no
    better than the worst plan kept, and counts the free sides (:func:`free_dead`) only
    when the penalty and the openings do not already (the other terms are never negative
    with non-negative weights): the same plans as evaluating every node. It expands no node
    whose bound (:func:`stuck_bound_reaches`) cannot beat the worst plan kept (the bound is
    not even computed when the node's whole penalty and every unseen card opened could not
    reach that plan), and tries the children in the order of the module doc (``CARD_PEN``,
    sorted in ``ws``). A child already reached by another order (the table) costs no sleep set.

    Why one function: numba compiles it as a kernel and keeps the walk's state (depth, nodes,
    plans kept and the worst of them, table slots filled) in registers through one loop. The
    small steps are inline helpers (:func:`_keep`, :func:`_order_children`, :func:`_probe`,
    :func:`_child_sleep`, :func:`_child_tops`) at no cost, but splitting the loop's two halves
    (entering a node, trying a child) into inline helpers that return that state made the
    search 3% slower (same plans, 10,966 positions of planner self-play, alternating runs)."""
    for j in range(_SW):
        ws[ix(_SLEEP + j)] = 0
    side_ok = np.int64(ALL_MASK) if st[RULES + R_KING_ON_EMPTY_SIDE] else np.int64(NON_KINGS_MASK)
    scoring = st[RULES + R_SCORING]
    must_kings = st[RULES + R_MUST_PLAY_KINGS] != 0
    unseen = unseen_mask(st, seat)
    open_scale = open_weight_scale(st, seat, unseen, w[W_MODE])
    # with no negative term the penalty alone bounds the score from below
    bound_ok = w[W_PEN] >= 0 and w[W_OPEN] >= 0 and w[W_FREE] >= 0 and w[W_DEAD] >= 0 and open_scale >= 0
    pen_w = 64 * w[W_PEN]
    ow = w[W_OPEN] * open_scale
    ow_all = ow * popcount(unseen)          # the most the openings can add to a score
    one_deck = st[RULES + R_DECKS] == 1     # a top mask then holds one card per pile with cards
    table = _root(st, seat, ws)

    n_kept = 0
    # scores[k_best - 1] once k_best plans are kept, as a local: read from the array, it was
    # read again after every store into ws (which numba cannot tell apart from scores)
    worst = np.int64(0)
    n_filled = 0
    capped = 0
    nodes = 0
    d = 0
    fresh = True            # the node at depth d was just entered
    while d >= 0:
        if fresh:
            fresh = False
            nodes += 1
            h0 = ws[ix(_H0 + d)]
            h1 = ws[ix(_H1 + d)]
            tp = ws[ix(_HT + d)]
            if one_deck:
                tops = ws[ix(_TOPS + d)]
                empty = ws[ix(_EMPTY + d)]
            else:
                tops, empty = scan_piles(tp)
            fit = fits_on_set(tops)
            pen = compact_penalty(h0, h1, scoring)
            lb = pen_w * pen                  # the node's score is at least this
            full = n_kept == k_best
            # score this node as an end of turn
            stop_ok = root_ok or d > 0
            if must_kings and (h0 & KINGS_MASK) and (empty >> 4) != 0:
                stop_ok = False
            if stop_ok and full and bound_ok and lb >= worst:
                stop_ok = False      # cannot enter the k best
            if stop_ok:
                if pen == 0 and h0 == 0:
                    sc = np.int64(0)
                else:
                    # the score of evaluation._score_pen, its last terms counted only if they can matter
                    sc = lb + ow * popcount(unseen & open_targets(fit, empty, side_ok))
                    if not (full and bound_ok and sc >= worst):
                        sc += free_dead(h0, ws[ix(_HB + d)], tops, empty, table, w)
                if n_kept < k_best or sc < worst:
                    n_kept = _keep(scores, lens, plans, ws, _PATH, d, sc, n_kept, k_best)
                    if n_kept == k_best:
                        worst = scores[k_best - 1]
            if h0 == 0 and h1 == 0:
                ws[ix(_NK + d)] = 0              # out: nothing more to do
            elif d >= MAX_PLAN:
                ws[ix(_NK + d)] = 0
                capped = 1
            elif nodes >= max_nodes:
                ws[ix(_NK + d)] = 0
            elif bound_ok and n_kept == k_best and lb + ow_all >= worst and stuck_bound_reaches(
                    h0, h1, tp, tops, empty, ws[ix(_HB + d)], fit, side_ok, scoring, pen_w, ow, unseen, worst):
                ws[ix(_NK + d)] = 0              # nothing below can enter the k best
            else:
                nk = children_of(h0, tp, ws[ix(_HB + d)], tops, empty, fit, side_ok, ws, _W_KIDS + d * MAX_CHILDREN)
                ws[ix(_NK + d)] = nk
                for j in range(_SW):         # the explored set (only a node with children reads it)
                    ws[ix(_EXPL + d * _SW + j)] = 0
                if nk > 1:
                    _order_children(ws, _W_KIDS + d * MAX_CHILDREN, nk, _W_ORD, unseen & ~fit, scoring, pen_w, ow)
            ws[ix(_IK + d)] = 0
        if ws[ix(_IK + d)] >= ws[ix(_NK + d)]:
            d -= 1
            continue
        a = ws[ix(_W_KIDS + d * MAX_CHILDREN + ws[ix(_IK + d)])]
        ws[ix(_IK + d)] += 1
        e = d + 1
        tpd = ws[ix(_HT + d)]
        indep = sleep and is_place(a) and pile_get(tpd, id_pile(a)) >= 0
        wd = bt = np.int64(0)
        if indep:
            wd = a >> 6
            bt = np.int64(1) << (a & 63)
            if ws[ix(_SLEEP + d * _SW + wd)] & bt:
                continue
        hh = ws[ix(_HASH + d)] ^ hash_delta(ws[ix(_H1 + d)], tpd, ws[ix(_HB + d)], a)
        hk = table_key(hh)
        slot, seen = _probe(ws, _W_KEYS, hk)
        _child_sleep(ws, _SLEEP + d * _SW, _EXPL + d * _SW, _SLEEP + e * _SW, a, wd, bt, indep, seen)
        if seen:
            continue
        h0, h1, tp, bp = apply_compact(ws[ix(_H0 + d)], ws[ix(_H1 + d)], tpd, ws[ix(_HB + d)], a)
        if one_deck:
            ws[ix(_TOPS + e)], ws[ix(_EMPTY + e)] = _child_tops(ws[ix(_TOPS + d)], ws[ix(_EMPTY + d)], tpd, a)
        if nodes < TABLE_SIZE - 64:
            ws[ix(_W_KEYS + slot)] = hk
            ws[ix(_W_SLOTS + n_filled)] = slot
            n_filled += 1
        ws[ix(_H0 + e)] = h0
        ws[ix(_H1 + e)] = h1
        ws[ix(_HT + e)] = tp
        ws[ix(_HB + e)] = bp
        ws[ix(_HASH + e)] = hh
        ws[ix(_PATH + d)] = a
        d = e
        fresh = True
    for i in range(n_filled):
        ws[ix(_W_KEYS + ws[ix(_W_SLOTS + i)])] = 0
    return n_kept, capped
