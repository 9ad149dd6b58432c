"""The learner of ``kc-sim train``'s net method (:mod:`kc_sim.learn.recipe` says the recipe):
behaviour cloning of the teacher, then PPO iterations against the opponents and a league of
past checkpoints, acting in compiled code (:mod:`kc_sim.learn.actor`) in a second thread while
the network learns on the batch before."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from kc_sim.core.layout import MAX_SEATS
from kc_sim.core.rng import derive
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.learn import actor
from kc_sim.learn.net_eval import evaluate
from kc_sim.play.agents.registry import load_agent

__all__ = ["TRAIN_SALT", "OUTCOMES", "Recipe", "Trainer", "require_torch", "round_return"]

TRAIN_SALT = 0x7472616E
#: a round's return for PPO, before the penalty term: ``went-out`` 1 if the learner went out,
#: else 0 (a blocked round is a loss); ``decided`` +1 if it went out, -1 if another seat did, 0
#: for a blocked round (the share of decided rounds won, which ``bench-agent`` reports)
OUTCOMES = ("went-out", "decided")


@dataclass(frozen=True)
class Recipe:
    """The recipe's settings (the defaults are the measured recipe)."""

    teacher: str = "planner"
    bc_rounds: int = 16000          # rounds the teacher plays, over all seatings
    bc_steps: int = 3000            # minibatch steps of cross-entropy
    bc_batch: int = 2048            # decisions per minibatch
    bc_lr: float = 3e-3
    h1: int = 32
    h2: int = 0
    rounds_per_iter: int = 2048     # rounds per PPO iteration
    lr: float = 3e-4
    epochs: int = 2
    minibatch: int = 8192           # decisions per PPO minibatch
    clip: float = 0.2
    gae_lambda: float = 0.9
    temperature: float = 1.0
    league: float = 0.2             # share of iterations against a past checkpoint
    outcome: str = "went-out"       # a round's return: see OUTCOMES
    penalty_weight: float = 0.0     # minus this times (own penalty - the others' mean), in points
    snapshot_every: int = 10        # iterations between checkpoints kept for the league
    eval_deals: int = 2000


def require_torch():
    """torch, or a one-line UserError saying how to install it."""
    try:
        import torch
    except ImportError as e:
        raise UserError(f"kc-sim train needs the train extra ({e.name or e} is missing): "
                        "pip install 'kc-sim[train]'") from None
    return torch


class Trainer:
    """The state of one training run (see the module doc)."""

    def __init__(self, opponents, players, rules, seed, recipe: Recipe, log):
        torch = require_torch()
        from kc_sim.learn.qnet import QNet, ValueNet

        self.torch = torch
        self.rs = parse_rules(rules)
        self.codes = self.rs.codes()
        self.players, self.seed, self.r, self.log = players, seed, recipe, log
        self.opp_names = opponents
        self.opp = [load_agent(n).policy for n in opponents]
        self.teacher = load_agent(recipe.teacher).policy
        torch.manual_seed(seed)
        self.net = QNet(recipe.h1, recipe.h2, seed=seed)
        self.vnet = ValueNet(32, seed=seed)
        self.rng = np.array([derive(seed, TRAIN_SALT)], np.int64)
        self.pool: list[np.ndarray] = []
        self.steps = self.rounds = self.iters = 0
        self.t_act = self.t_learn = self.t_eval = self.t_bc = self.t_ppo = 0.0
        self.round_seed = 0
        n = recipe.rounds_per_iter
        self.bufs = [actor.Buffers(n * 60 + 2400, n * 60 * 8 + 40000, n + 8) for _ in range(2)]

    def warm(self, baselines):
        """Compile (or load from numba's cache) everything the run will call, so that the
        start-up is timed apart: the acting kernel, the network's policy and the round loops
        of the evaluations."""
        P = self.net.to_params()
        pols, kind, learner = self._table(0)
        self.act(actor.Buffers(3000, 30000, 4), np.array([1], np.int64), 0, np.stack([P, P]), kind, pols, learner, 1.0)
        evaluate(P, baselines, self.players, self.rs, 1, self.seed)

    # --- acting -------------------------------------------------------------------------------
    def _seeds(self, n):
        base = derive(self.seed, TRAIN_SALT + 1)
        out = np.array([derive(base, self.round_seed + i) for i in range(n)], np.int64)
        self.round_seed += n
        return out

    def _table(self, seat, league_params=None, teacher_plays=False, it=0):
        """(policies, kind, learner) with the learner at ``seat`` and the opponents (or a past
        checkpoint of the network, net row 1) elsewhere: with several opponents named, the
        other seats take them in turn, starting from opponent ``it`` (so iterations rotate them)."""
        kind = np.zeros(MAX_SEATS, np.int64)
        learner = np.zeros(MAX_SEATS, np.int64)
        learner[seat] = 1
        pols = [self.opp[0]] * MAX_SEATS
        k = it
        for s in range(self.players):
            if s == seat:
                pols[s] = self.teacher if teacher_plays else self.opp[0]
                kind[s] = 0 if teacher_plays else 1
            else:
                pols[s] = self.opp[k % len(self.opp)]
                k += 1
                if league_params is not None:
                    kind[s] = 1
        return tuple(pols), kind, learner

    def act(self, bufs, seeds, seat, nets, kind, pols, learner, temperature):
        """Play the rounds of ``seeds`` with the network (``nets`` row 0) at ``seat`` drawing at
        ``temperature``, net row 1 at the other ``kind`` 1 seats, recording into ``bufs``."""
        net_of = np.where(kind == 1, 1, 0).astype(np.int64)
        net_of[seat] = 0
        temp = np.zeros(MAX_SEATS)
        temp[seat] = temperature
        return actor.record(bufs, seeds, self.players, self.codes, pols, kind, nets, net_of, learner, temp,
                            np.zeros(MAX_SEATS), None, 0.0, self.rng)

    # --- behaviour cloning ------------------------------------------------------------------
    def clone(self, say, deadline=None):
        """Behaviour cloning (step 1 of the module doc): the teacher plays each seat in turn,
        then the network is fitted to its choices, stopping early at ``deadline``."""
        torch, r = self.torch, self.r
        P = self.net.to_params()
        nets = np.stack([P, P])
        per = max(1, r.bc_rounds // self.players)
        parts = []
        t0 = time.perf_counter()
        bufs = actor.Buffers(per * 60 + 2400, per * 60 * 8 + 40000, per + 8)
        for seat in range(self.players):
            pols, kind, learner = self._table(seat, teacher_plays=True, it=seat)
            n, nd, nr = self.act(bufs, self._seeds(per), seat, nets, kind, pols, learner, 0.0)
            parts.append((bufs.ctx[:nd].copy(), bufs.x[:nr].copy(), bufs.start[:nd].copy(), bufs.n[:nd].copy(),
                          bufs.label[:nd].copy()))
            self.rounds += n
        ctx = np.concatenate([p[0] for p in parts])
        x = np.concatenate([p[1] for p in parts])
        offs = np.cumsum([0] + [len(p[1]) for p in parts[:-1]])
        start = np.concatenate([p[2] + o for p, o in zip(parts, offs)])
        n = np.concatenate([p[3] for p in parts])
        label = np.concatenate([p[4] for p in parts])
        keep = np.flatnonzero(label >= 0)
        say(f"behaviour cloning: {self.rounds:,} rounds of {r.teacher}, {len(keep):,} decisions with a choice "
            f"({time.perf_counter() - t0:.1f} s); fitting {r.bc_steps:,} steps")
        from kc_sim.learn.qnet import segment_log_softmax
        opt = torch.optim.Adam(self.net.parameters(), lr=r.bc_lr)
        ctx_t, x_t = torch.from_numpy(ctx), torch.from_numpy(x)
        gen = np.random.default_rng(derive(self.seed, TRAIN_SALT + 2))
        shown = time.perf_counter()
        for it in range(r.bc_steps):
            if deadline is not None and time.perf_counter() > deadline:
                say(f"behaviour cloning: stopped at step {it:,} (its share of the time budget is spent)")
                break
            b = keep[gen.integers(0, len(keep), r.bc_batch)]
            seg, rows, first = _segments(start[b], n[b])
            q = self.net(ctx_t[torch.from_numpy(b)], x_t[rows], seg)
            lp = segment_log_softmax(q, seg, len(b))
            loss = -lp[first + torch.from_numpy(label[b])].mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if time.perf_counter() - shown >= 10:
                say(f"behaviour cloning: step {it + 1:,}/{r.bc_steps:,}, loss {loss.item():.3f}")
                shown = time.perf_counter()
        self.bc_decisions = len(keep)

    # --- policy gradient -----------------------------------------------------------------------
    def _plan(self, it):
        """The learner's seat and the table of iteration ``it``: (seat, nets, kind, pols, learner)."""
        r = self.r
        seat = it % self.players
        P = self.net.to_params()
        if it % r.snapshot_every == 0:
            self.pool.append(P.copy())
        gen = np.random.default_rng(derive(self.seed, TRAIN_SALT + 3 + it))
        league = len(self.pool) > 1 and gen.random() < r.league
        past = self.pool[int(gen.integers(len(self.pool)))] if league else P
        pols, kind, learner = self._table(seat, league_params=past if league else None, it=it // self.players)
        return seat, np.stack([P, past]), kind, pols, learner

    def _update(self, bufs, counts, won):
        """One PPO update on a recorded batch (``won``: per round, the learner's return)."""
        torch, r = self.torch, self.r
        from kc_sim.learn.qnet import segment_log_softmax
        _, nd, nr = counts
        G = won[bufs.round[:nd]]
        ctx = torch.from_numpy(bufs.ctx[:nd].copy())
        x = torch.from_numpy(bufs.x[:nr].copy())
        start, n, chosen = bufs.start[:nd].copy(), bufs.n[:nd].copy(), bufs.chosen[:nd].copy()
        oldp = torch.from_numpy(bufs.prob[:nd].astype(np.float32))
        rd = bufs.round[:nd]
        with torch.no_grad():
            V = self.vnet(ctx).numpy()
        last = np.r_[rd[1:] != rd[:-1], True]
        next_v = np.empty(nd, np.float32)
        next_v[:-1] = V[1:]
        next_v[last] = G[last]
        adv = _gae(next_v - V, last, r.gae_lambda)
        ret = torch.from_numpy(adv + V)
        advt = torch.from_numpy((adv - adv.mean()) / (adv.std() + 1e-8))
        gen = np.random.default_rng(derive(self.seed, TRAIN_SALT + 7 + self.iters))
        for _ in range(r.epochs):
            for b in np.array_split(gen.permutation(nd), max(1, nd // r.minibatch)):
                seg, rows, first = _segments(start[b], n[b])
                bt = torch.from_numpy(b)
                q = self.net(ctx[bt], x[rows], seg) / r.temperature
                lp = segment_log_softmax(q, seg, len(b))[first + torch.from_numpy(chosen[b])]
                ratio = torch.exp(lp - torch.log(oldp[bt]))
                a = advt[bt]
                pl = -torch.min(ratio * a, torch.clamp(ratio, 1 - r.clip, 1 + r.clip) * a).mean()
                vl = ((self.vnet(ctx[bt]) - ret[bt]) ** 2).mean()
                loss = pl + 0.5 * vl
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()

    def improve(self, until, say, checkpoint):
        """PPO iterations until ``until()`` says stop; ``checkpoint()`` runs after each one
        (it evaluates and saves when due). The next batch is acted, in a second thread, while
        the learner updates on this one, so it is played with the weights of one update before."""
        torch, r = self.torch, self.r
        if not hasattr(self, "opt"):
            self.opt = torch.optim.Adam(list(self.net.parameters()) + list(self.vnet.parameters()), lr=r.lr)
        pool = ThreadPoolExecutor(max_workers=1)
        shown = time.perf_counter()
        recent = []

        def job(it, k):
            seat, nets, kind, pols, learner = self._plan(it)
            seeds = self._seeds(r.rounds_per_iter)

            def run():
                t = time.perf_counter()
                c = self.act(self.bufs[k], seeds, seat, nets, kind, pols, learner, r.temperature)
                return c, time.perf_counter() - t
            return pool.submit(run), seat

        t_start = time.perf_counter()
        t_evals = self.t_eval
        try:
            pending = job(self.iters, 0)
            k = 0
            while True:
                fut, seat = pending
                counts, secs = fut.result()
                self.t_act += secs
                stop = until()
                if not stop:
                    pending = job(self.iters + 1, 1 - k)
                bufs = self.bufs[k]
                pen = bufs.penalties[:counts[0], :self.players]
                won = _went_out(pen, seat).astype(np.float32)
                t0 = time.perf_counter()
                self._update(bufs, counts, round_return(pen, seat, r.outcome, r.penalty_weight))
                self.t_learn += time.perf_counter() - t0
                recent = (recent + [float(won.mean())])[-10:]
                self.steps += counts[1]
                self.rounds += counts[0]
                self.iters += 1
                k = 1 - k
                if stop:
                    break
                checkpoint()
                if time.perf_counter() - shown >= 10:
                    say(self.progress_line(float(np.mean(recent))))
                    shown = time.perf_counter()
        finally:
            pool.shutdown(wait=True)
            self.t_ppo += time.perf_counter() - t_start - (self.t_eval - t_evals)

    def progress_line(self, win) -> str:
        return (f"steps {self.steps:,}, {self.rounds:,} rounds; acting {self.t_act:.0f} s, learning "
                f"{self.t_learn:.0f} s, evaluating {self.t_eval:.0f} s; learner's training win rate {win:.3f}")


def _segments(start, n):
    """(segment of each action row, the rows, each decision's first row in the batch) for
    decisions with action rows ``start[i] .. start[i] + n[i] - 1``."""
    import torch

    seg = np.repeat(np.arange(len(n)), n)
    first = np.cumsum(n) - n
    rows = np.repeat(start, n) + (np.arange(int(n.sum())) - np.repeat(first, n))
    return torch.from_numpy(seg), torch.from_numpy(rows), torch.from_numpy(first)


def _gae(delta, last, lam):
    """Generalised advantages over each round's decisions (``last`` marks a round's final one)."""
    adv = np.zeros(len(delta), np.float32)
    acc = 0.0
    for i in range(len(delta) - 1, -1, -1):
        if last[i]:
            acc = 0.0
        acc = delta[i] + lam * acc
        adv[i] = acc
    return adv


def round_return(pen, seat, outcome: str, penalty_weight: float) -> np.ndarray:
    """The learner's return of each round (float32) from every seat's penalty (``pen``, one row
    per round): the ``outcome`` (:data:`OUTCOMES`) minus ``penalty_weight`` times the learner's
    penalty less the other seats' mean penalty."""
    g = _went_out(pen, seat).astype(np.float32)
    if outcome == "decided":
        g -= ((pen == 0).sum(axis=1) > g).astype(np.float32)          # another seat went out
    if penalty_weight:
        others = (pen.sum(axis=1) - pen[:, seat]) / (pen.shape[1] - 1)
        g -= np.float32(penalty_weight) * (pen[:, seat] - others).astype(np.float32)
    return g


def _went_out(pen, seat):
    """True for the rounds the seat won: it went out (only the seat that goes out holds no card)."""
    return pen[:, seat] == 0
