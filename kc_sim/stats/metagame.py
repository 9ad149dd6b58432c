"""The pairwise meta-game of a leaderboard: shares, intransitive cycles, Bradley-Terry's fit
and Nash averaging. Pure functions over numpy arrays; :mod:`kc_sim.stats.ratings` feeds
them the sums :func:`kc_sim.analysis.leaderboard.load_comparisons` streams per batch of deals.

The rules (see docs/tournaments.md, The leaderboard):

* **Pairwise share** ``S[a, b]``: the share of the comparisons of a and b (pairs of seats of
  a round where both were dealt in) in which a has the lower penalty, ties counting 1/2;
  ``S[b, a] = 1 - S[a, b]``; NaN for agents that never met.
* **Cycles.** The *majority graph* has an edge a -> b when ``S[a, b] > 0.5``; the
  *significant graph* when the 95% interval of ``S[a, b]`` lies above 0.5. Every 3-cycle
  a > b > c > a of the majority graph is listed, and marked **significant** when its three
  edges are in the significant graph (an intersection-union test: each one-sided test is
  at level 2.5%, so the cycle's test is too; no correction across cycles). Longer cycles
  are listed only where 3-cycles do not show them: when every pair met and no share is
  exactly 0.5 the majority graph is a tournament, and every agent on a cycle of a
  tournament lies on a 3-cycle (Moon), but the significant graph (and the majority graph
  of agents that did not all meet) may have an agent on a cycle and on no 3-cycle; for
  each such agent the shortest cycle through it is listed. With a bootstrap, each
  cycle also gets its *bootstrap support*: the share of resamples in which all its
  edges keep a share above 0.5.
* **Bradley-Terry's fit**: a Wald test of the residuals ``r = S_obs - S_BT`` over the
  unordered pairs that met. Their covariance is ``M V M'``, with ``V`` the covariance of
  the observed shares clustered by batch of deals (the leaderboard's bootstrap unit; pairs
  of a 3- or 4-seat round are correlated) and ``M = I - G (X' D G)^+ X' D`` the
  linearised effect of fitting theta by maximum likelihood (``X`` pair design, ``D`` the
  comparisons, ``G = diag(p (1 - p)) X``). ``chi2 = r' (M V M')^+ r`` on ``P - (n - 1)``
  degrees of freedom (the rank of ``M V M'``), p-value from :func:`chi2_sf`; the worst pair
  is the largest standardised residual ``r_k / sqrt((M V M')_kk)``. BT "fits" when the
  p-value is at least 0.05.
* **Nash averaging** (Balduzzi, Tuyls, Perolat, Graepel 2018, "Re-evaluating evaluation"):
  the symmetric zero-sum game with antisymmetric payoff ``A[a, b] = S[a, b] - 0.5`` (0 for
  pairs that never met) has value 0, and its equilibria are the polytope
  ``{p >= 0, sum p = 1, A p <= 0}``. The maximum-entropy one is unique; an agent's **Nash
  rating** is ``(A p)_a``, its expected payoff against that mixture: 0 on the support,
  negative off it. Adding a copy of an agent splits the copy's weight but leaves every
  other rating unchanged, which a rating averaged over the agents present does not.
  Computed exactly with numpy: the agents that are in the support of *some* equilibrium
  (the maximum-entropy one's support is the union of them all) come from linear programs
  (:func:`lp_max`, a two-phase simplex with Bland's rule), then the entropy is maximised
  over that face by Newton's method with an active set for the constraints
  ``(A p)_j <= 0`` of the agents outside the support.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from kc_sim.errors import UserError

#: the largest number of agents Nash averaging accepts (the simplex and the active set are
#: polynomial, but this is far beyond a leaderboard's size and keeps the cost bounded)
MAX_NASH_AGENTS = 32
#: below this an equilibrium weight or a payoff counts as zero
TOL = 1e-9


# --- the chi-square tail --------------------------------------------------------------

def chi2_sf(x: float, df: float) -> float:
    """P(X >= x) for X chi-square with ``df`` degrees of freedom: the regularised upper
    incomplete gamma Q(df/2, x/2), by its series below ``a + 1`` and Lentz's continued
    fraction above (Numerical Recipes, gammq). 1 for x <= 0; NaN for df <= 0."""
    if df <= 0 or math.isnan(x):
        return math.nan
    if x <= 0:
        return 1.0
    a, y = df / 2.0, x / 2.0
    lead = a * math.log(y) - y - math.lgamma(a)
    if y < a + 1.0:             # series for the lower part P(a, y)
        term = total = 1.0 / a
        ap = a
        for _ in range(10000):
            ap += 1.0
            term *= y / ap
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return float(min(1.0, max(0.0, 1.0 - total * math.exp(lead))))
    tiny = 1e-300               # continued fraction for Q(a, y)
    b = y + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return float(min(1.0, max(0.0, math.exp(lead) * h)))


# --- pairwise shares --------------------------------------------------------------------

def shares(W: np.ndarray, N: np.ndarray) -> np.ndarray:
    """``S[a, b] = W[a, b] / N[a, b]`` (score of a against b over their comparisons), NaN
    where they never met and on the diagonal."""
    W = np.asarray(W, np.float64)
    N = np.asarray(N, np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        S = np.where(N > 0, W / np.where(N > 0, N, 1.0), np.nan)
    np.fill_diagonal(S, np.nan)
    return S


def payoff(S: np.ndarray) -> np.ndarray:
    """The meta-game's payoff ``A[a, b] = S[a, b] - 0.5``, made exactly antisymmetric, with 0
    for pairs that never met (and on the diagonal)."""
    S = np.asarray(S, np.float64)
    A = np.where(np.isnan(S), 0.0, S - 0.5)
    A = (A - A.T) / 2.0
    np.fill_diagonal(A, 0.0)
    return A


def clustered_share_cov(unit, pair, score, count, n_units: int, n_pairs: int):
    """Covariance (P, P) of the pooled shares ``sum(score) / sum(count)`` of ``n_pairs``
    pairs, clustered by unit: ``g / (g - 1) * sum_u psi_u psi_u'`` with the influence
    ``psi_uk = (score_uk - share_k count_uk) / count_k`` over the ``g`` units present (the
    sandwich of :func:`kc_sim.stats.mean_from_sums`, for every pair at once). Returns
    ``(share (P,), total count (P,), cov (P, P))``."""
    unit = np.asarray(unit, np.int64)
    pair = np.asarray(pair, np.int64)
    score = np.asarray(score, np.float64)
    count = np.asarray(count, np.float64)
    tot_s = np.bincount(pair, weights=score, minlength=n_pairs)
    tot_n = np.bincount(pair, weights=count, minlength=n_pairs)
    share = np.where(tot_n > 0, tot_s / np.where(tot_n > 0, tot_n, 1.0), np.nan)
    present, dense = np.unique(unit, return_inverse=True)
    g = len(present)
    psi = np.zeros((g, n_pairs))
    ok = tot_n[pair] > 0
    np.add.at(psi, (dense[ok], pair[ok]), (score[ok] - share[pair[ok]] * count[ok]) / tot_n[pair[ok]])
    cov = psi.T @ psi * (g / (g - 1) if g > 1 else math.nan)
    return share, tot_n, cov


# --- Bradley-Terry's goodness of fit --------------------------------------------------------

def bt_fit_test(theta, pairs, share, count, cov, rank_tol: float = 1e-10, drop=None) -> dict:
    """The Wald test of Bradley-Terry's predicted shares against the observed ones (module
    doc). ``theta`` (n,) fitted strengths; ``pairs`` (P, 2) agent indices (a, b) that met;
    ``share`` (P,) observed share of a over b; ``count`` (P,) comparisons; ``cov`` (P, P)
    covariance of the observed shares. Returns a dict: ``chi2``, ``df``, ``p_value``,
    ``predicted`` (P,) BT's shares, ``z`` (P,) standardised residuals (NaN where the residual
    has no variance), ``worst`` (index of the largest |z|, or -1). ``drop`` (P,) marks pairs
    left out of the statistic (pairs whose share did not vary between deals: the residual of
    a share known without error has no distribution to test against)."""
    theta = np.asarray(theta, np.float64)
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    share = np.asarray(share, np.float64)
    count = np.asarray(count, np.float64)
    P, n = len(pairs), len(theta)
    pred = 1.0 / (1.0 + np.exp(theta[pairs[:, 1]] - theta[pairs[:, 0]]))
    r = share - pred
    X = np.zeros((P, n))
    X[np.arange(P), pairs[:, 0]] = 1.0
    X[np.arange(P), pairs[:, 1]] = -1.0
    G = (pred * (1.0 - pred))[:, None] * X
    XD = X.T * count[None, :]
    M = np.eye(P) - G @ np.linalg.pinv(XD @ G) @ XD
    C = M @ np.nan_to_num(np.asarray(cov, np.float64)) @ M.T
    C = (C + C.T) / 2.0
    use = np.ones(P, bool) if drop is None else ~np.asarray(drop, bool)
    Cu = C[np.ix_(use, use)]
    Pu = int(use.sum())
    lam, U = np.linalg.eigh(Cu) if Pu else (np.zeros(0), np.zeros((0, 0)))
    # directions of no sampling variance carry nothing to test; "none" is judged against the
    # shares' own variances, not the residuals': two agents that play alike make their shares
    # against a third move together, and the residuals' whole covariance is then rounding
    # (a chi2 of 1e21 on 1 df before)
    scale = float(np.nan_to_num(np.diag(np.asarray(cov, np.float64)))[use].max()) if Pu else 0.0
    keep = lam > rank_tol * max(scale, float(lam.max()) if Pu else 0.0, 1e-300)
    df = int(min(keep.sum(), max(P - (n - 1), 0)))
    if df > 0:
        proj = U[:, keep].T @ r[use]
        order = np.argsort(-lam[keep])[:df]
        chi2 = float(np.sum(proj[order] ** 2 / lam[keep][order]))
        p_value = chi2_sf(chi2, df)
    else:
        chi2, p_value = 0.0, math.nan
    sd = np.sqrt(np.maximum(np.diag(C), 0.0)) if P else np.zeros(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where((sd > 1e-12) & use, r / np.where(sd > 1e-12, sd, 1.0), np.nan)
    worst = int(np.nanargmax(np.abs(z))) if df > 0 and np.isfinite(z).any() else -1
    return {"chi2": chi2, "df": df, "p_value": p_value, "predicted": pred, "z": z, "worst": worst}


# --- cycles -----------------------------------------------------------------------------

def _sccs(edge: np.ndarray) -> list[list[int]]:
    """Strongly connected components of the digraph ``edge[a, b]`` (Kosaraju; n is small)."""
    n = len(edge)
    seen, order = [False] * n, []
    for s in range(n):
        if seen[s]:
            continue
        stack = [(s, iter(np.flatnonzero(edge[s])))]
        seen[s] = True
        while stack:
            v, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                order.append(v)
            elif not seen[int(nxt)]:
                seen[int(nxt)] = True
                stack.append((int(nxt), iter(np.flatnonzero(edge[int(nxt)]))))
    comp = [-1] * n
    comps: list[list[int]] = []
    for s in reversed(order):
        if comp[s] >= 0:
            continue
        comp[s], todo, members = len(comps), [s], []
        while todo:
            v = todo.pop()
            members.append(v)
            for u in np.flatnonzero(edge[:, v]):
                if comp[int(u)] < 0:
                    comp[int(u)] = len(comps)
                    todo.append(int(u))
        comps.append(sorted(members))
    return comps


def _shortest_cycle_through(edge: np.ndarray, v: int) -> list[int] | None:
    """The shortest directed cycle through ``v`` (BFS from v back to v), or None."""
    prev = {v: None}
    queue = deque([v])
    while queue:
        x = queue.popleft()
        for y in np.flatnonzero(edge[x]):
            y = int(y)
            if y == v:
                path = [x]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return path[::-1]
            if y not in prev:
                prev[y] = x
                queue.append(y)
    return None


def _canonical(cycle, rank) -> tuple[int, ...]:
    """A cycle rotated to start at its best-ranked member (lowest ``rank``)."""
    i = min(range(len(cycle)), key=lambda j: rank[cycle[j]])
    return tuple(cycle[i:] + cycle[:i])


def find_cycles(S, lo, boot=None, rank=None) -> list[dict]:
    """The intransitive cycles of the pairwise shares (module doc). ``S`` (n, n) shares
    (NaN where unmet), ``lo`` (n, n) lower ends of their 95% intervals, ``boot`` (B, n, n)
    bootstrap shares or None, ``rank`` (n,) order to start each cycle at (default: index).
    Returns one dict per cycle, significant ones first: ``members`` (agent indices in cycle
    order, each beating the next and the last beating the first), ``length``, ``shares``,
    ``lo`` (per step), ``significant``, ``support`` (bootstrap share, NaN without)."""
    S = np.asarray(S, np.float64)
    n = len(S)
    rank = np.arange(n) if rank is None else np.asarray(rank)
    major = np.nan_to_num(S, nan=0.5) > 0.5
    sig = np.nan_to_num(np.asarray(lo, np.float64), nan=0.0) > 0.5
    found: dict[tuple[int, ...], bool] = {}
    for i in range(n):
        for j in range(i + 1, n):
            for k in range(j + 1, n):
                for cyc in ((i, j, k), (i, k, j)):
                    a, b, c = cyc
                    if major[a, b] and major[b, c] and major[c, a]:
                        found[_canonical(list(cyc), rank)] = bool(sig[a, b] and sig[b, c] and sig[c, a])
    for edge, is_sig in ((sig, True), (major, False)):
        on3 = {v for cyc, s in found.items() if s or not is_sig for v in cyc}
        for comp in _sccs(edge):
            for v in comp:
                if len(comp) < 3 or v in on3:
                    continue
                cyc = _shortest_cycle_through(edge, v)
                if cyc is not None:
                    key = _canonical(cyc, rank)
                    found[key] = found.get(key, False) or is_sig or all(
                        sig[key[t], key[(t + 1) % len(key)]] for t in range(len(key)))
                    on3.update(key)
    out = []
    for cyc, significant in found.items():
        steps = [(cyc[t], cyc[(t + 1) % len(cyc)]) for t in range(len(cyc))]
        if boot is not None and len(boot):
            held = np.ones(len(boot), bool)
            for a, b in steps:
                held &= np.nan_to_num(boot[:, a, b], nan=0.5) > 0.5
            support = float(held.mean())
        else:
            support = math.nan
        out.append({"members": list(cyc), "length": len(cyc), "shares": [float(S[a, b]) for a, b in steps],
                    "lo": [float(lo[a, b]) for a, b in steps], "significant": significant, "support": support})
    out.sort(key=lambda c: (not c["significant"], -min(c["lo"]), c["length"]))
    return out


# --- linear programming ---------------------------------------------------------------------

def _pivot(T: np.ndarray, basis: list[int], row: int, col: int) -> None:
    T[row] /= T[row, col]
    for r in range(len(T)):
        if r != row and T[r, col] != 0.0:
            T[r] -= T[r, col] * T[row]
    basis[row] = col


def _simplex(T: np.ndarray, basis: list[int], allowed: int, tol: float, pivot_tol: float = 1e-9) -> None:
    """Pivot until the last row (reduced costs of a maximisation) has no entry below
    ``-tol`` among the first ``allowed`` columns; Bland's rule, so it ends on degenerate
    programs (ours have a zero right-hand side almost everywhere). Pivot elements below
    ``pivot_tol`` are refused (a near-zero pivot in a degenerate row blows the tableau up)."""
    m = len(T) - 1
    for _ in range(50 * (T.shape[1] + m) + 100):
        cols = np.flatnonzero(T[m, :allowed] < -tol)
        if not len(cols):
            return
        col = int(cols[0])
        best, row = math.inf, -1
        for r in range(m):
            if T[r, col] > pivot_tol:
                ratio = T[r, -1] / T[r, col]
                if ratio < best - 1e-15 or (abs(ratio - best) <= 1e-15 and basis[r] < basis[row]):
                    best, row = ratio, r
        if row < 0:
            raise ValueError("unbounded linear program")
        _pivot(T, basis, row, col)
    raise RuntimeError("simplex did not converge")


def lp_max(c, A_eq, b_eq, tol: float = 1e-10):
    """max ``c x`` subject to ``A_eq x = b_eq``, ``x >= 0`` (two-phase simplex, Bland's rule).
    Returns x, or None when infeasible. Meant for small, well-scaled programs (entries of
    order 1)."""
    c = np.asarray(c, np.float64)
    A = np.asarray(A_eq, np.float64).copy()
    b = np.asarray(b_eq, np.float64).copy()
    neg = b < 0
    A[neg], b[neg] = -A[neg], -b[neg]
    m, k = A.shape
    T = np.zeros((m + 1, k + m + 1))
    T[:m, :k], T[:m, k:k + m], T[:m, -1] = A, np.eye(m), b
    basis = list(range(k, k + m))
    T[m, k:k + m] = 1.0                      # phase 1: maximise -(sum of artificials)
    T[m] -= T[:m].sum(axis=0)
    _simplex(T, basis, k + m, tol)
    if T[m, -1] < -1e-9:
        return None
    for r in range(m):                       # drive artificials out of the basis
        if basis[r] >= k:
            cols = np.flatnonzero(np.abs(T[r, :k]) > 1e-9)
            if len(cols):
                _pivot(T, basis, r, int(cols[0]))
    T[m] = 0.0
    T[m, :k] = -c
    for r in range(m):
        if T[m, basis[r]] != 0.0:
            T[m] -= T[m, basis[r]] * T[r]
    _simplex(T, basis, k, tol)
    x = np.zeros(k)
    for r in range(m):
        if basis[r] < k:
            x[basis[r]] = T[r, -1]
    return np.maximum(x, 0.0)


# --- Nash averaging -----------------------------------------------------------------------

def _equilibrium_lp(A: np.ndarray, i: int) -> np.ndarray:
    """An equilibrium of the antisymmetric game ``A`` maximising the weight of agent ``i``:
    variables (p, slack), ``A p + s = 0``, ``sum p = 1``."""
    n = len(A)
    scale = float(np.abs(A).max())
    A_eq = np.zeros((n + 1, 2 * n))
    A_eq[:n, :n], A_eq[:n, n:] = A / (scale if scale > 0 else 1.0), np.eye(n)   # equilibria ignore scale
    A_eq[n, :n] = 1.0
    b = np.zeros(n + 1)
    b[n] = 1.0
    c = np.zeros(2 * n)
    c[i] = 1.0
    x = lp_max(c, A_eq, b)
    if x is None:                            # cannot happen: a zero-sum game has an equilibrium
        raise RuntimeError("no equilibrium found")
    p = x[:n]
    return p / p.sum()


def _null(M: np.ndarray, size: int) -> np.ndarray:
    """An orthonormal basis (size, d) of the null space of M."""
    if len(M) == 0:
        return np.eye(size)
    _, sv, vt = np.linalg.svd(M)
    rank = int((sv > 1e-10 * max(sv.max(), 1.0)).sum())
    return vt[rank:].T


def _max_entropy(q: np.ndarray, E: np.ndarray, G: np.ndarray, tol: float = TOL) -> np.ndarray:
    """Maximise the entropy of q over ``E q = E q0`` and ``G q <= 0`` from a feasible
    positive ``q0``: Newton's method in the null space of the equalities and of the
    working set of inequalities, which grows when a step is blocked and shrinks when a
    multiplier has the wrong sign (a primal active-set method)."""
    q = q.copy()
    work = [j for j in range(len(G)) if G[j] @ q > -tol]
    for _ in range(500):
        M = np.vstack([E, G[work]]) if work else E
        Z = _null(M, len(q))
        grad = -np.log(q) - 1.0
        d = np.zeros(len(q))
        if Z.shape[1]:
            H = Z.T @ (Z / q[:, None])
            d = Z @ np.linalg.solve(H, Z.T @ grad)
        if np.max(np.abs(d)) < 1e-13:
            if not work:
                return q
            lam, *_ = np.linalg.lstsq(M.T, grad, rcond=None)
            mu = lam[len(E):]
            if mu.min() >= -1e-10:
                return q
            work.pop(int(np.argmin(mu)))
            continue
        step, block = 1.0, None
        neg = d < 0
        if neg.any():
            step = min(step, 0.9 * float(np.min(-q[neg] / d[neg])))
        for j in range(len(G)):
            if j not in work:
                gd = G[j] @ d
                if gd > 1e-15:
                    s = -(G[j] @ q) / gd
                    if s < step:
                        step, block = max(s, 0.0), j
        h0 = -np.sum(q * np.log(q))
        while step > 1e-12 and block is None:
            trial = q + step * d
            if -np.sum(trial * np.log(trial)) >= h0 - 1e-15:
                break
            step /= 2
        q = np.maximum(q + step * d, 1e-300)
        if block is not None:
            work.append(block)
    return q


def nash_average(A, tol: float = TOL) -> tuple[np.ndarray, np.ndarray]:
    """The maximum-entropy Nash equilibrium of the symmetric zero-sum game with
    antisymmetric payoff ``A`` (n, n) and each agent's Nash rating (module doc).
    Returns ``(weights (n,), ratings (n,))``: weights sum to 1; ratings are 0 on the
    support and negative off it. More than :data:`MAX_NASH_AGENTS` agents is refused."""
    A = np.asarray(A, np.float64)
    n = len(A)
    if A.shape != (n, n) or n == 0:
        raise UserError(f"bad payoff matrix of shape {A.shape}: expected a square matrix of 1 agent or more")
    if n > MAX_NASH_AGENTS:
        raise UserError(f"Nash averaging of {n} agents: expected at most {MAX_NASH_AGENTS} "
                        "(rate fewer agents at once)")
    if not np.allclose(A, -A.T, atol=1e-12):
        raise UserError("bad payoff matrix: expected an antisymmetric one (A[a, b] = -A[b, a])")
    A = (A - A.T) / 2.0
    points = [_equilibrium_lp(A, 0)]
    for i in range(n):
        p = points[-1]
        if any(q[i] > tol for q in points) or (A @ p)[i] < -tol:
            continue                # in a support already, or off every one (exchangeability)
        q = _equilibrium_lp(A, i)
        if q[i] > tol:
            points.append(q)
    p0 = np.mean(points, axis=0)
    T = np.flatnonzero(p0 > tol)
    out = np.flatnonzero(p0 <= tol)
    E = np.vstack([np.ones(len(T)), A[np.ix_(T, T)]])
    q = _max_entropy(p0[T] / p0[T].sum(), E, A[np.ix_(out, T)], tol)
    weights = np.zeros(n)
    weights[T] = q / q.sum()
    ratings = A @ weights
    ratings[T] = 0.0                        # exactly, by complementary slackness
    ratings = np.minimum(ratings, 0.0)
    return weights, ratings
