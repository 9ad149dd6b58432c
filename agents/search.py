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
  :func:`_stuck_bound_reaches` (a lower bound on the score of every position below it) already
  scores no better than the worst kept: the weighted penalty of the hand cards no
  continuation can place (:func:`placeable_from`) plus, when some card is stuck (so the
  turn cannot go out, which scores 0), the openings nothing below can close
  (:func:`_fixed_targets`). Admissible with non-negative weights: an uncapped search keeps
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

The evaluation (lower is better), in :func:`evaluate`, with the weights ``w``
(``DEFAULT_WEIGHTS`` = ``[W_PEN, W_OPEN, W_FREE, W_DEAD, W_MODE]`` = ``[10, 60, 5, 0, 2]``)::

    score = 64 * (W_PEN * penalty + W_FREE * free + W_DEAD * dead) + W_OPEN * opened * scale

* ``penalty``: the hand the seat keeps (10 per king and 1 per other card under
  ``kings10``, face values under ``face``); going out scores 0 and beats everything;
* ``opened``: the number of *unseen* cards (neither in the hand nor on the table: they are
  in other hands or the stock) that could be placed on what is left open: the tops, empty
  corners (kings) and empty sides (any card);
* ``scale`` (:func:`open_weight_scale`): 64 x the share of the unseen cards held by the
  next player (``W_MODE`` 2; 1: by all opponents; 0: always 64), i.e. how likely an opened
  card is to be used at once: openings weigh little early, when most unseen cards are in
  the stock, and fully once the stock is empty;
* ``free``: empty sides plus the side-pile moves left to the next player (each lets them
  free a side and dump any card there);
* ``dead``: kept non-king cards whose two parents are both buried on the table (weight 0
  by default: it never changed a decision in our tests).

A card shed is worth 640, an opened unseen card up to 3,840: the planner sheds
everything early in a round and, later, keeps back cards that would open two or more of
its opponent's likely cards.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.position import (  # noqa: F401 - pile_set is re-exported for the tests
    MAX_CHILDREN,
    apply_compact,
    children,
    children_of,
    fits_on_set,
    hash_delta,
    ix,
    pack_piles,
    pile_get,
    pile_set,
    pos_hash,
    scan_piles,
    side_bases,
    table_key,
    unseen_mask,
)
from kc_sim.core.bits import lowest, popcount
from kc_sim.core.kernel import kernel
from kc_sim.core.ids import (
    id_card,
    id_pile,
    id_side,
    is_place,
)
from kc_sim.core.layout import (
    HAND,
    HAND_N,
    IDLE,
    N_PILES,
    N_SIDES,
    PILE_BASE,
    PILE_MASK,
    PILE_TOP,
    PLAYERS,
    RULES,
    STOCK_LEN,
    STOCK_POS,
    STOP,
    TURN_ACTIONS,
    TURNS,
)
from kc_sim.core.legal import is_legal
from kc_sim.core.step import FACE_VALUE, penalty_of_masks
from kc_sim.game.cards import (
    ALL_MASK,
    FITS_ON,
    FITS_UNDER,
    KING,
    KINGS_MASK,
    NON_KINGS_MASK,
    RANK,
)
from kc_sim.game.variants import (
    R_DECKS,
    R_KING_ON_EMPTY_SIDE,
    R_MUST_PLAY_KINGS,
    R_SCORING,
)

#: longest action sequence a plan may hold (mem slots PLAN0..PLAN0+MAX_PLAN-1)
MAX_PLAN = 56
#: transposition table size (a power of two, > the node cap)
TABLE_SIZE = 1024
#: default node cap of the planner's search
MAX_NODES = 400

# evaluation weights (index into a weights array)
W_PEN, W_OPEN, W_FREE, W_DEAD, W_MODE = 0, 1, 2, 3, 4
#: the default weights (see the module doc): penalty, openings for the next player, free sides
DEFAULT_WEIGHTS = np.array([10, 60, 5, 0, 2], dtype=np.int64)

# policy memory layout shared by planner and sampler (mem[0] is the seat's generator)
M_TURN = 1          # st[TURNS] the plan was made for
M_T0 = 2            # st[TURN_ACTIONS] when it was made
M_LEN = 3           # number of actions in the plan
M_CAPPED = 4        # 1 when the search hit its depth cap: re-plan after the plan
PLAN0 = 8           # mem[PLAN0 + i]: i-th action of the plan


@nb.njit(cache=True)
def evaluate(h0, h1, tp, bp, unseen, table, side_ok, scoring, w, open_scale):
    """Score of ending the turn in this position (lower is better); see the module doc.
    The search scores its nodes with :func:`_score`, given the scan of the tops it has made."""
    tops, empty = scan_piles(tp)
    return _score(h0, h1, bp, tops, empty, fits_on_set(tops), unseen, table, side_ok, scoring, w, open_scale)


@nb.njit(cache=True)
def open_weight_scale(st, seat, unseen, mode):
    """How much an opening counts, x64: always 64 (mode 0), or 64 x the share of the unseen
    cards held by the opponents (mode 1) or by the next player (mode 2)."""
    if mode == 0:
        return np.int64(64)
    u = popcount(unseen)
    if u == 0:
        return np.int64(0)
    players = st[PLAYERS]
    held = 0
    if mode == 1:
        for s in range(players):
            if s != seat:
                held += st[HAND_N + s]
    else:
        held = st[HAND_N + (seat + 1) % players]
    return np.int64(64 * held // u)


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

#: CARD_PEN[scoring, c]: the penalty of card c held at the end (kings10, face)
CARD_PEN = np.array([[10 if RANK[c] == KING else 1 for c in range(52)],
                     [FACE_VALUE[RANK[c]] for c in range(52)]], dtype=np.int64)


@nb.njit(cache=True)
def new_workspace():
    """A workspace for :func:`search`: reusable by any number of searches, one at a time
    (each leaves its table keys zero again)."""
    return np.zeros(WS_SIZE, np.int64)


@nb.njit(cache=True, inline="always")
def _penalty(h0, h1, scoring):
    """The penalty of a hand (two planes) under ``scoring``: kings10 counted here, face by the core."""
    if scoring == 0:                          # kings10: kings 10, others 1
        k = popcount(h0 & KINGS_MASK) + popcount(h1 & KINGS_MASK)
        return 9 * k + popcount(h0) + popcount(h1)
    return penalty_of_masks(h0, h1, scoring)


@nb.njit(cache=True, inline="always")
def _score(h0, h1, bp, tops, empty, fit, unseen, table, side_ok, scoring, w, open_scale):
    """:func:`evaluate` given the node's top mask, empty-pile mask and ``fits_on_set(tops)``."""
    return _score_pen(_penalty(h0, h1, scoring), h0, bp, tops, empty, fit, unseen, table, side_ok, w, open_scale)


@nb.njit(cache=True, inline="always")
def _score_pen(pen, h0, bp, tops, empty, fit, unseen, table, side_ok, w, open_scale):
    """:func:`_score` given the hand's penalty ``pen``."""
    if pen == 0 and h0 == 0:
        return np.int64(0)
    opened = popcount(unseen & _open_targets(fit, empty, side_ok))
    return (64 * w[W_PEN] * pen + w[W_OPEN] * open_scale * opened
            + _free_dead(h0, bp, tops, empty, table, w))


@nb.njit(cache=True, inline="always")
def _open_targets(fit, empty, side_ok):
    """The cards the position leaves a place for: those fitting on a top, the kings when a
    corner is empty, every card an empty side takes when a side is empty."""
    targets = fit
    if (empty >> 4) != 0:
        targets |= np.int64(KINGS_MASK)
    if empty & 0xF:
        targets |= side_ok
    return targets


@nb.njit(cache=True, inline="always")
def _free_dead(h0, bp, tops, empty, table, w):
    """The score's last two terms, ``64 (W_FREE free + W_DEAD dead)`` (module doc): never
    negative with non-negative weights, so the search first checks whether the penalty and
    the openings alone already keep a node out of the k best and only then counts these."""
    ec = (empty >> 4) != 0
    free = popcount(empty & 0xF)
    for s in range(N_SIDES):
        b = pile_get(bp, s)
        if b >= 0:
            free += popcount(FITS_UNDER[b] & tops)
            if ec and RANK[b] == KING:
                free += 1
    dead = 0
    if w[W_DEAD] != 0:
        rest = h0 & np.int64(NON_KINGS_MASK)
        buried = table & ~tops
        while rest:
            c = lowest(rest)
            rest &= rest - 1
            par = FITS_UNDER[c]
            if (par & buried) == par:
                dead += 1
    return 64 * (w[W_FREE] * free + w[W_DEAD] * dead)


@nb.njit(cache=True, inline="always")
def placeable_from(h0, tops, empty, bp, fit, side_ok):
    """The hand cards (plane 0) that some continuation of the turn could still place: an
    over-approximation. With an empty side, or a side pile that some move could free (its
    base fits under a top or a hand card, or it is a king and a corner is empty), every card
    an empty side takes; kings with an empty corner; then, repeatedly, the cards that fit
    on a top or on a card found so far (tops only ever become hand cards)."""
    ec = (empty >> 4) != 0
    # a side base fits under a top or hand card (it is in fits_on_set of them), or is a king
    freeable = fit | fits_on_set(h0) | (np.int64(KINGS_MASK) if ec else np.int64(0))
    side = (empty & 0xF) != 0 or (side_bases(bp) & freeable) != 0
    p = h0 & fit
    if side:
        p |= h0 & side_ok
    if ec:
        p |= h0 & np.int64(KINGS_MASK)
    while True:
        q = p | (h0 & fits_on_set(p))
        if q == p:
            return p
        p = q


@nb.njit(cache=True, inline="always")
def _stuck_bound_reaches(h0, h1, tp, tops, empty, bp, fit, side_ok, scoring, pen_w, ow, unseen, worst):
    """Whether a lower bound on the score of every position below this one already scores
    no better than ``worst``: the weighted penalty of the hand cards no continuation can
    place (:func:`placeable_from`) plus, when some card is stuck, the openings nothing below
    can close (:func:`_fixed_targets`, a subset of ``fit`` and the kings: its cost is
    skipped when the answer is already known without it)."""
    p = placeable_from(h0, tops, empty, bp, fit, side_ok)
    if p == h0:
        return worst <= 0             # going out may be possible: it scores 0
    lb = pen_w * _penalty(h0 & ~p, h1 & ~p, scoring)
    if ow > 0:
        if lb >= worst:
            return True
        if lb + ow * popcount(unseen & (fit | np.int64(KINGS_MASK))) < worst:
            return False
        lb += ow * popcount(unseen & _fixed_targets(h0, tp, bp, tops, empty))
    return lb >= worst


@nb.njit(cache=True, inline="always")
def _fixed_targets(h0, tp, bp, tops, empty):
    """Cards every end of the turn below this position still lets be placed: those fitting
    on a top that nothing can cover (no hand card fits on it, no side pile could be moved
    onto it, and it is not a side pile that could itself be moved away), and the kings
    when a corner is empty and no king (in hand or at the base of a side pile) could fill it."""
    targets = np.int64(0)
    king_src = (h0 & np.int64(KINGS_MASK)) != 0
    under = np.int64(0)                     # the cards some side pile could be moved onto
    for s in range(N_SIDES):
        b = pile_get(bp, s)
        if b >= 0:
            under |= FITS_UNDER[b]
            if RANK[b] == KING:
                king_src = True
    ec = (empty >> 4) != 0
    for p in range(N_PILES):
        t = pile_get(tp, p)
        if t < 0:
            continue
        if (FITS_ON[t] & h0) != 0 or ((under >> t) & 1) != 0:
            continue
        if p < N_SIDES:
            b = pile_get(bp, p)
            if (FITS_UNDER[b] & (tops | h0)) != 0 or (ec and RANK[b] == KING):
                continue
        targets |= FITS_ON[t]
    if ec and not king_src:
        targets |= np.int64(KINGS_MASK)
    return targets


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


@kernel
def search(st, seat, w, max_nodes, k_best, plans, lens, scores, sleep, root_ok, ws):
    """:func:`turn_search` in the workspace ``ws`` (:func:`new_workspace`), which it leaves
    ready for the next search.

    Each node has its top mask and empty piles (kept up to date from its parent's with one
    deck, scanned from the packed tops with two, where two piles may show the same card)
    and the cards that fit, for both the evaluation and the children; its hand's penalty is
    counted once. It skips the evaluation of a node whose penalty alone already scores no
    better than the worst plan kept, and counts the free sides (:func:`_free_dead`) only
    when the penalty and the openings do not already (the other terms are never negative
    with non-negative weights): the same plans as evaluating every node. It expands no node
    whose bound (:func:`_stuck_bound_reaches`) cannot beat the worst plan kept (the bound is
    not even computed when the node's whole penalty and every unseen card opened could not
    reach that plan),
    and tries the children in the order of the module doc (``CARD_PEN``, sorted in ``ws``).
    A child already reached by another order (the table) costs no sleep set."""
    D = _D
    SW = _SW
    # offsets into ws (indexing ws directly: views would cost a reference count each)
    KEYS = _W_KEYS
    FILLED = _W_SLOTS
    H0 = _W_DEPTH
    H1 = H0 + D
    NK = H1 + D
    IK = NK + D
    PATH = IK + D
    HT = PATH + D
    HB = HT + D
    TOPS = HB + D
    EMPTY = TOPS + D
    HASH = EMPTY + D
    KIDS = _W_KIDS
    SLEEP = _W_SETS
    EXPL = _W_SETS + SW * D
    ORD = _W_ORD
    for j in range(SW):
        ws[ix(SLEEP + j)] = 0
    pile_bits = np.int64(0x0101010101010101)

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
    table = np.int64(0)
    for p in range(N_PILES):
        table |= st[PILE_MASK + p]
    ws[ix(HT + 0)] = pack_piles(st, PILE_TOP)
    ws[ix(HB + 0)] = pack_piles(st, PILE_BASE)
    ws[ix(H0 + 0)] = st[HAND + 2 * seat]
    ws[ix(H1 + 0)] = st[HAND + 2 * seat + 1]
    ws[ix(TOPS + 0)], ws[ix(EMPTY + 0)] = scan_piles(ws[ix(HT + 0)])
    ws[ix(HASH + 0)] = pos_hash(ws[ix(H0 + 0)], ws[ix(H1 + 0)], ws[ix(HT + 0)], ws[ix(HB + 0)])

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
            h0 = ws[ix(H0 + d)]
            h1 = ws[ix(H1 + d)]
            tp = ws[ix(HT + d)]
            if one_deck:
                tops = ws[ix(TOPS + d)]
                empty = ws[ix(EMPTY + d)]
            else:
                tops, empty = scan_piles(tp)
            fit = fits_on_set(tops)
            pen = _penalty(h0, h1, scoring)
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
                    # the score of _score_pen, its last terms counted only if they can matter
                    sc = lb + ow * popcount(unseen & _open_targets(fit, empty, side_ok))
                    if not (full and bound_ok and sc >= worst):
                        sc += _free_dead(h0, ws[ix(HB + d)], tops, empty, table, w)
                # insert into the k best (distinct positions), keeping order
                if n_kept < k_best or sc < worst:
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
                        plans[i, j] = ws[ix(PATH + j)]
                    if n_kept < k_best:
                        n_kept += 1
                    if n_kept == k_best:
                        worst = scores[k_best - 1]
            if h0 == 0 and h1 == 0:
                ws[ix(NK + d)] = 0              # out: nothing more to do
            elif d >= MAX_PLAN:
                ws[ix(NK + d)] = 0
                capped = 1
            elif nodes >= max_nodes:
                ws[ix(NK + d)] = 0
            elif bound_ok and n_kept == k_best and lb + ow_all >= worst and _stuck_bound_reaches(
                    h0, h1, tp, tops, empty, ws[ix(HB + d)], fit, side_ok, scoring, pen_w, ow, unseen, worst):
                ws[ix(NK + d)] = 0              # nothing below can enter the k best
            else:
                nk = children_of(h0, tp, ws[ix(HB + d)], tops, empty, fit, side_ok, ws, KIDS + d * MAX_CHILDREN)
                ws[ix(NK + d)] = nk
                for j in range(SW):         # the explored set (only a node with children reads it)
                    ws[ix(EXPL + d * SW + j)] = 0
                if nk > 1:
                    base = KIDS + d * MAX_CHILDREN
                    newly = unseen & ~fit
                    for i in range(nk):
                        a = ws[ix(base + i)]
                        if is_place(a):
                            c = id_card(a)
                            key = pen_w * CARD_PEN[scoring, c] - ow * popcount(newly & FITS_ON[ix(c)])
                        else:
                            key = np.int64(-1) << 40
                        j = i
                        while j > 0 and ws[ix(ORD + j - 1)] < key:
                            ws[ix(ORD + j)] = ws[ix(ORD + j - 1)]
                            ws[ix(base + j)] = ws[ix(base + j - 1)]
                            j -= 1
                        ws[ix(ORD + j)] = key
                        ws[ix(base + j)] = a
            ws[ix(IK + d)] = 0
        if ws[ix(IK + d)] >= ws[ix(NK + d)]:
            d -= 1
            continue
        a = ws[ix(KIDS + d * MAX_CHILDREN + ws[ix(IK + d)])]
        ws[ix(IK + d)] += 1
        e = d + 1
        tpd = ws[ix(HT + d)]
        indep = sleep and is_place(a) and pile_get(tpd, id_pile(a)) >= 0
        if indep:
            # the sets are bit sets over placement ids: word a >> 6 holds the 8 cards
            # id_card(a) >> 3 .. +7, each a byte of its 8 piles
            wd = a >> 6
            bt = np.int64(1) << (a & 63)
            if ws[ix(SLEEP + d * SW + wd)] & bt:
                continue
        hh = ws[ix(HASH + d)] ^ hash_delta(ws[ix(H1 + d)], tpd, ws[ix(HB + d)], a)
        hk = table_key(hh)
        slot = hk & (TABLE_SIZE - 1)
        seen = False
        while ws[ix(KEYS + slot)] != 0:
            if ws[ix(KEYS + slot)] == hk:
                seen = True
                break
            slot = (slot + 1) & (TABLE_SIZE - 1)
        if indep:
            if not seen:
                pm = ~(pile_bits << id_pile(a))
                cw = id_card(a) >> 3
                cm = ~(np.int64(0xFF) << ((id_card(a) & 7) * 8))
                for j in range(SW):
                    x = (ws[ix(SLEEP + d * SW + j)] | ws[ix(EXPL + d * SW + j)]) & pm
                    if j == cw:
                        x &= cm
                    ws[ix(SLEEP + e * SW + j)] = x
            ws[ix(EXPL + d * SW + wd)] |= bt
        elif not seen:
            for j in range(SW):
                ws[ix(SLEEP + e * SW + j)] = 0
        if seen:
            continue
        h0, h1, tp, bp = apply_compact(ws[ix(H0 + d)], ws[ix(H1 + d)], tpd, ws[ix(HB + d)], a)
        if one_deck:
            # the child's top mask and empty piles from its parent's
            p = id_pile(a)
            t = pile_get(tpd, p)
            tops = ws[ix(TOPS + d)]
            if t >= 0:
                tops &= ~(np.int64(1) << t)
            empty = ws[ix(EMPTY + d)] & ~(np.int64(1) << p)
            if is_place(a):
                tops |= np.int64(1) << id_card(a)
            else:
                empty |= np.int64(1) << id_side(a)
            ws[ix(TOPS + e)] = tops
            ws[ix(EMPTY + e)] = empty
        if nodes < TABLE_SIZE - 64:
            ws[ix(KEYS + slot)] = hk
            ws[ix(FILLED + n_filled)] = slot
            n_filled += 1
        ws[ix(H0 + e)] = h0
        ws[ix(H1 + e)] = h1
        ws[ix(HT + e)] = tp
        ws[ix(HB + e)] = bp
        ws[ix(HASH + e)] = hh
        ws[ix(PATH + d)] = a
        d = e
        fresh = True
    for i in range(n_filled):
        ws[ix(KEYS + ws[ix(FILLED + i)])] = 0
    return n_kept, capped


@kernel
def would_block(st):
    """True when an idle turn now would end the round blocked: the stock is empty and every
    other player's last turn was idle."""
    return st[STOCK_LEN] <= st[STOCK_POS] and st[IDLE] >= st[PLAYERS] - 1


@kernel
def store_plan(mem, st, plan, n, capped):
    """Keep a plan for this turn in the policy memory."""
    mem[M_TURN] = st[TURNS]
    mem[M_T0] = st[TURN_ACTIONS]
    mem[M_LEN] = n
    mem[M_CAPPED] = capped
    for i in range(n):
        mem[PLAN0 + i] = plan[i]


@kernel
def next_planned(mem, st):
    """The next action of the plan kept for this turn: an action id, STOP when the
    plan is done, or -1 when there is no valid plan (make one)."""
    if mem[M_TURN] != st[TURNS]:
        return -1
    i = st[TURN_ACTIONS] - mem[M_T0]
    if i < 0 or i > mem[M_LEN]:
        return -1
    if i == mem[M_LEN]:
        if mem[M_CAPPED]:
            return -1
        return STOP
    a = mem[PLAN0 + i]
    if not is_legal(st, a):
        return -1
    return a
