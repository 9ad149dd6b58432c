"""``kc-sim train`` (the default method, ``net``): an action-scoring network learned by
behaviour cloning of a search agent, then improved by policy-gradient self-improvement against
the opponents and a league of its own past checkpoints, acting in compiled code throughout.

The recipe (results/README.md, section 9, measured it against the alternatives):

1. **Behaviour cloning.** The teacher (``planner`` by default) plays the learner's seats against
   the opponents for ``bc_rounds`` rounds (every seat in turn); each of its decisions with a
   choice is recorded as the features of every legal action (:mod:`kc_sim.env.obs_actions`)
   and the one it played. The network (:class:`kc_sim.learn.qnet.QNet`) is fitted to them by
   cross-entropy of the softmax of its scores over the legal actions.
2. **Policy gradient (PPO).** The network plays one seat, drawing its action from
   softmax(score / temperature); each iteration plays ``rounds_per_iter`` rounds against the
   opponents (or, in a share ``league`` of the iterations, against a past checkpoint of
   itself playing its best action), and updates by PPO's clipped objective with advantages
   from the round's result (1 if the learner went out first, else 0) and a learned baseline
   on the decision's context, generalised advantage estimation over the seat's decisions.
   Acting runs in a second thread (numba releases the GIL) while the learner updates on the
   previous batch, so the two cores both work.

Every ``eval_every`` (a tenth of the budget by default) the network, playing its best action,
is measured against fixed baselines (the opponents and the teacher) on fixed deals in every
seating, with intervals clustered by deal (:mod:`kc_sim.learn.net_eval`); the model is saved
(data only, :mod:`kc_sim.learn.net_model`) each time, with the learning curve beside it:

- ``OUT`` (``model.zip``): the model, played as the agent ``net:OUT``;
- ``OUT.curve.parquet``: one row per point and baseline (``steps``, ``train_rounds``,
  ``seconds``, ``phase``, ``baseline``, ``deals``, ``rounds`` (of the evaluation), ``win``,
  ``win_lo``, ``win_hi``, ``score``, ``score_lo``, ``score_hi``);
- ``OUT.curve.png``: the curves, over training steps and over wall-clock minutes.

A step is one learner decision with a choice (what the learner trains on). Progress lines
give the steps, their rate, the split of time between acting and learning, and the time left.
"""

from __future__ import annotations

import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from kc_sim.core.layout import MAX_SEATS
from kc_sim.core.rng import derive
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.learn import actor
from kc_sim.learn.net_eval import EvalPoint, evaluate
from kc_sim.learn.net_model import read_net, write_net
from kc_sim.play.agents.registry import load_agent, parse_agent_list

__all__ = ["Recipe", "NetTrainResult", "train_net", "curve_paths", "plot_curve"]

TRAIN_SALT = 0x7472616E
#: the most of a --minutes budget behaviour cloning may take (the rest is PPO)
BC_SHARE = 0.2


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
    snapshot_every: int = 10        # iterations between checkpoints kept for the league
    eval_deals: int = 2000


@dataclass
class NetTrainResult:
    model: Path
    curve: Path
    figure: Path
    steps: int
    rounds: int
    seconds: float
    start_seconds: float
    acting_seconds: float
    learning_seconds: float
    eval_seconds: float
    bc_seconds: float
    ppo_seconds: float
    last: list = field(default_factory=list)


def curve_paths(out) -> tuple[Path, Path]:
    """(the curve's parquet, its figure) beside the model ``out``."""
    out = Path(out)
    stem = out.with_suffix("") if out.suffix == ".zip" else out
    return Path(f"{stem}.curve.parquet"), Path(f"{stem}.curve.png")


def plot_curve(curve, path, title: str) -> None:
    """Win rate (95% band) against each baseline over training steps and over wall-clock minutes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.0), sharey=True)
    for base, part in curve.groupby("baseline", sort=False):
        for ax, x in zip(axes, (part["steps"].to_numpy() / 1e6, part["seconds"].to_numpy() / 60)):
            line, = ax.plot(x, part["win"], marker="o", ms=3, label=f"vs {base}")
            ax.fill_between(x, part["win_lo"], part["win_hi"], alpha=0.2, color=line.get_color())
    share = 1.0 / int(curve["players"].iloc[0])
    for ax, label in zip(axes, ("training steps (millions of learner decisions)", "wall-clock minutes")):
        ax.axhline(share, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win rate (went out first), fixed deals, every seating")
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _torch():
    try:
        import torch
    except ImportError as e:
        raise UserError(f"kc-sim train needs the train extra ({e.name or e} is missing): "
                        "pip install 'kc-sim[train]'") from None
    return torch


def _duration(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    s = int(round(s))
    return f"{s // 3600}h {s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m {s % 60:02d}s"


class _Trainer:
    """The state of one training run (see the module doc)."""

    def __init__(self, opponents, players, rules, seed, recipe: Recipe, log):
        torch = _torch()
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
        """One PPO update on a recorded batch (``won``: per round, 1 if the learner won)."""
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
                won = _went_out(bufs.penalties[:counts[0]], seat).astype(np.float32)
                t0 = time.perf_counter()
                self._update(bufs, counts, won)
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


def _went_out(pen, seat):
    """True for the rounds the seat won: it went out (only the seat that goes out holds no card)."""
    return pen[:, seat] == 0


def _check(opponent, players, rules, minutes, steps, recipe: Recipe, out):
    rs = parse_rules(rules)
    try:
        players = int(players)
    except (TypeError, ValueError):
        raise UserError(f"bad --players {players!r}: expected an integer") from None
    rs.check_players(players)
    names = parse_agent_list(opponent, "--opponent")
    for name in [*names, recipe.teacher]:
        if not load_agent(name).compiled:
            raise UserError(f"bad agent {name!r}: a Python agent; training plays compiled kc-sim agents only "
                            "(e.g. random, greedy, pile-merger, planner, net:model.zip)")
    if (minutes is None) == (steps is None):
        raise UserError("give the budget as --minutes M or --steps N (one of them)")
    if minutes is not None and not (0 < minutes <= 7 * 24 * 60):
        raise UserError(f"bad --minutes {minutes:g}: expected a number of minutes above 0 (at most a week)")
    if steps is not None and steps < 1:
        raise UserError(f"bad --steps {steps}: expected at least 1")
    for what, v in (("bc-rounds", recipe.bc_rounds), ("bc-steps", recipe.bc_steps), ("eval-deals", recipe.eval_deals),
                    ("hidden", recipe.h1), ("rounds-per-iter", recipe.rounds_per_iter)):
        if v < (0 if what.startswith("bc") else 1):
            raise UserError(f"bad --{what} {v}: expected a positive number")
    if not 0 < recipe.lr <= 1 or not 0 < recipe.temperature <= 100:
        raise UserError(f"bad --learning-rate {recipe.lr} or --temperature {recipe.temperature}: expected "
                        "a learning rate in (0, 1] and a temperature above 0")
    if not 0 <= recipe.league <= 1:
        raise UserError(f"bad --league {recipe.league}: expected a share from 0 to 1")
    out = Path(out)
    if out.suffix != ".zip":
        raise UserError(f"bad --out {str(out)!r}: expected a .zip file (the model), e.g. model.zip")
    return rs, players, names


def train_net(opponent="greedy", players: int = 2, *, minutes: float | None = None, steps: int | None = None,
              out="model.zip", rules="classic", seed: int = 0, recipe: Recipe = Recipe(), evals: int = 10,
              resume: bool = False, threads: int = 1, log=print) -> NetTrainResult:
    """Train with the recipe of the module doc for ``minutes`` of wall-clock time (after the
    start-up) or ``steps`` learner decisions of policy gradient; see the module doc."""
    t0 = time.perf_counter()
    rs, players, names = _check(opponent, players, rules, minutes, steps, recipe, out)
    torch = _torch()
    import pandas as pd

    torch.set_num_threads(max(1, int(threads)))
    say = log or (lambda *_: None)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    curve_file, figure = curve_paths(out)
    opp_text = ",".join(names)
    baselines = list(dict.fromkeys([load_agent(n).name for n in names] + [load_agent(recipe.teacher).name]))
    tr = _Trainer(names, players, rs.spec(), seed, recipe, say)
    rows: list[dict] = []
    done = {"seconds": 0.0, "steps": 0, "rounds": 0, "iterations": 0, "round_seed": 0}
    if resume:
        if not out.is_file():
            raise UserError(f"cannot resume: {out} does not exist (train without --resume first)")
        m = read_net(out)
        t = m.header.get("training", {})
        if (t.get("opponents"), m.header.get("players"), m.header.get("rules")) != (opp_text, players, rs.spec()):
            raise UserError(f"cannot resume {out}: it was trained against {t.get('opponents')!r} with "
                            f"{m.header.get('players')} players under {m.header.get('rules')!r}, not {opp_text!r}, "
                            f"{players}, {rs.spec()!r}")
        from kc_sim.learn.qnet import QNet
        tr.net = QNet.from_params(m.params)
        state = {k[len("value."):]: torch.from_numpy(np.array(v)) for k, v in m.extra.items() if k.startswith("value.")}
        if state:
            tr.vnet.load_state_dict(state)
        for k in done:
            done[k] = type(done[k])(t.get(k, 0))
        tr.steps, tr.rounds, tr.iters, tr.round_seed = done["steps"], done["rounds"], done["iterations"], done["round_seed"]
        if curve_file.is_file():
            rows = pd.read_parquet(curve_file).to_dict("records")
    tr.warm(baselines)
    start = time.perf_counter() - t0
    title = (f"kc-sim train: cloning {recipe.teacher}, then PPO vs {opp_text} and a league; {players} players, "
             f"{rules if isinstance(rules, str) else rs.spec()}, seed {seed}\nwin rate on {recipe.eval_deals:,} "
             "fixed deals, every seating, 95% intervals clustered by deal")
    t_run = time.perf_counter()

    def seconds_now() -> float:
        return (done["seconds"] if resume else 0.0) + time.perf_counter() - t_run

    def snapshot(phase: str) -> list[EvalPoint]:
        te = time.perf_counter()
        P = tr.net.to_params()
        points = evaluate(P, baselines, players, rs, recipe.eval_deals, seed)
        tr.t_eval += time.perf_counter() - te
        secs = seconds_now()
        for p in points:
            rows.append({"steps": tr.steps, "train_rounds": tr.rounds, "seconds": round(secs, 1), "phase": phase,
                         "players": players, **p.row()})
        table = pd.DataFrame(rows)
        table.to_parquet(curve_file, index=False)
        plot_curve(table, figure, title)
        training = {"recipe": f"bc({recipe.teacher})+ppo", "teacher": recipe.teacher, "opponents": opp_text,
                    "seed": seed, "steps": tr.steps, "rounds": tr.rounds, "iterations": tr.iters,
                    "round_seed": tr.round_seed, "seconds": round(secs, 1), "settings": asdict(recipe),
                    "last": {p.baseline: round(p.win, 4) for p in points}}
        extra = {f"value.{k}": v.detach().cpu().numpy() for k, v in tr.vnet.state_dict().items()}
        write_net(out, P, players=players, rules=rs.spec(), training=training, extra=extra)
        say(f"[{_duration(secs)}] {phase} steps {tr.steps:,}: " + "; ".join(
            f"vs {p.baseline} win {p.win:.3f} [{p.win_lo:.3f}, {p.win_hi:.3f}]" for p in points))
        return points

    say(f"compile and start-up {start:.1f} s; training against {opp_text}, {players} players, "
        + (f"{minutes:g} minutes" if minutes is not None else f"{steps:,} steps"))
    budget_s = None if minutes is None else minutes * 60.0
    last: list[EvalPoint] = []
    try:
        if not resume:
            tb = time.perf_counter()
            tr.clone(say, None if budget_s is None else tb + BC_SHARE * budget_s)
            tr.t_bc = time.perf_counter() - tb
            last = snapshot("bc")
        if budget_s is not None:
            every = budget_s / max(1, evals)
            next_eval = [seconds_now() + every]

            def until():
                return seconds_now() >= budget_s

            def due():
                return seconds_now() >= next_eval[0]
        else:
            every = max(1.0, (steps - done["steps"]) / max(1, evals))
            next_eval = [done["steps"] + every]

            def until():                   # --steps counts in all, as --minutes does on --resume
                return tr.steps >= steps

            def due():
                return tr.steps >= next_eval[0]

        def checkpoint():
            if due():
                next_eval[0] += every
                snapshot("ppo")

        ppo_start = time.perf_counter()
        ppo_evals = tr.t_eval

        def say_progress(text):
            secs = seconds_now()
            ppo = time.perf_counter() - ppo_start - (tr.t_eval - ppo_evals)
            rate = (tr.steps - done["steps"]) / max(ppo, 1e-9)
            left = (budget_s - secs) if budget_s is not None else (steps - tr.steps) / max(rate, 1e-9)
            say(f"[{_duration(secs)}] {text}; PPO {rate:,.0f} steps/s; {_duration(max(left, 0.0))} left")

        tr.improve(until, say_progress, checkpoint)
        last = snapshot("final")
    except KeyboardInterrupt:
        snapshot("interrupted")
        raise UserError(f"interrupted at {tr.steps:,} steps; the model and its curve are saved in {out}; "
                        "run the same command with --resume to go on") from None
    secs = seconds_now()
    return NetTrainResult(out, curve_file, figure, tr.steps, tr.rounds, secs, start, tr.t_act, tr.t_learn,
                          tr.t_eval, tr.t_bc, tr.t_ppo, last)


def main_log(text: str) -> None:
    """Progress lines to stderr (the CLI's results go to stdout)."""
    print(text, file=sys.stderr, flush=True)
