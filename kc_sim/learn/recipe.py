"""``kc-sim train`` (the default method, ``net``): an action-scoring network learned by
behaviour cloning of a search agent, then improved by policy-gradient self-improvement against
the opponents and a league of its own past checkpoints, acting in compiled code throughout.

The recipe (results/README.md, section 9, measured it against the alternatives):

1. **Behaviour cloning.** The teacher (``planner`` by default) plays the learner's seats against
   the opponents for ``bc_rounds`` rounds (every seat in turn); each of its decisions with a
   choice is recorded as the features of every legal action (:mod:`kc_sim.net.features`)
   and the one it played. The network (:class:`kc_sim.learn.qnet.QNet`) is fitted to them by
   cross-entropy of the softmax of its scores over the legal actions.
2. **Policy gradient (PPO).** The network plays one seat, drawing its action from
   softmax(score / temperature); each iteration plays ``rounds_per_iter`` rounds against the
   opponents (or, in a share ``league`` of the iterations, against a past checkpoint of
   itself playing its best action), and updates by PPO's clipped objective with advantages
   from the round's return (:func:`kc_sim.learn.trainer.round_return`: by default 1 if the
   learner went out first, else 0; with ``outcome="decided"`` +1, -1 if another seat went
   out, 0 for a blocked round; less ``penalty_weight`` per point of its penalty above the
   others' mean) and a learned baseline on the decision's context, generalised advantage
   estimation over the seat's decisions.
   Acting runs in a second thread (numba releases the GIL) while the learner updates on the
   previous batch, so the two cores both work.

Every ``eval_every`` (a tenth of the budget by default) the network, playing its best action,
is measured against fixed baselines (the opponents, the teacher and :data:`ALWAYS_MEASURED`,
the strongest built-in player) on fixed deals in every
seating, with intervals clustered by deal (:mod:`kc_sim.learn.net_eval`); the model is saved
(data only, :mod:`kc_sim.net.model`) each time, with the learning curve beside it:

- ``OUT`` (``model.zip``): the model, played as the agent ``net:OUT``;
- ``OUT.curve.parquet``: one row per point and baseline (``steps``, ``train_rounds``,
  ``seconds``, ``phase``, ``baseline``, ``deals``, ``rounds`` (of the evaluation), ``win``,
  ``win_lo``, ``win_hi``, ``score``, ``score_lo``, ``score_hi``, ``decided``, ``decided_lo``,
  ``decided_hi``, ``penalty_diff``, ``penalty_diff_lo``, ``penalty_diff_hi``: see
  :mod:`kc_sim.learn.net_eval`);
- ``OUT.curve.png``: the curves, over training steps and over wall-clock minutes.

A step is one learner decision with a choice (what the learner trains on). Progress lines
give the steps, their rate, the split of time between acting and learning, and the time left.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.learn.net_eval import EvalPoint, evaluate
from kc_sim.net.model import read_net, write_net
from kc_sim.learn.progress import curve_paths, duration
from kc_sim.learn.trainer import OUTCOMES, Recipe, Trainer, require_torch
from kc_sim.play.agents.names import parse_agent_list
from kc_sim.play.agents.registry import load_agent

__all__ = ["Recipe", "NetTrainResult", "train_net", "as_made", "MADE_WITH", "curve_paths", "plot_curve"]

#: baselines on every learning curve, whatever the opponents: the strongest built-in player,
#: so that every training says how far it is from it
ALWAYS_MEASURED = ("sampler",)
#: the most of a --minutes budget behaviour cloning may take (the rest is PPO)
BC_SHARE = 0.2
#: the settings that made a model's start, its cloning and its shape: a resumed training keeps
#: the model's own (:func:`as_made`), so that its header goes on saying how it was made
MADE_WITH = ("teacher", "bc_rounds", "bc_steps", "bc_batch", "bc_lr", "h1", "h2")


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


def plot_curve(curve, path, title: str) -> None:
    """Win rate (95% band) against each baseline, and the share of the decided rounds won
    (dashed), over training steps and over wall-clock minutes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.0), sharey=True)
    for base, part in curve.groupby("baseline", sort=False):
        for ax, x in zip(axes, (part["steps"].to_numpy() / 1e6, part["seconds"].to_numpy() / 60)):
            line, = ax.plot(x, part["win"], marker="o", ms=3, label=f"vs {base}")
            ax.fill_between(x, part["win_lo"], part["win_hi"], alpha=0.2, color=line.get_color())
            if "decided" in part and part["decided"].notna().any():     # curves written before 2026-12-07 lack it
                ax.plot(x, part["decided"], ls="--", marker="x", ms=3, color=line.get_color(),
                        label=f"vs {base}: share of decided rounds won")
    share = 1.0 / int(curve["players"].iloc[0])
    for ax, label in zip(axes, ("training steps (millions of learner decisions)", "wall-clock minutes")):
        ax.axhline(share, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win rate (went out first); dashed: of decided rounds")
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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
    if recipe.outcome not in OUTCOMES:
        raise UserError(f"bad --outcome {recipe.outcome!r}: expected {' or '.join(OUTCOMES)}")
    if not 0 <= recipe.penalty_weight <= 1:
        raise UserError(f"bad --penalty-weight {recipe.penalty_weight:g}: expected a weight per point of penalty "
                        "from 0 to 1 (e.g. 0.05)")
    out = Path(out)
    if out.suffix != ".zip":
        raise UserError(f"bad --out {str(out)!r}: expected a .zip file (the model), e.g. model.zip")
    return rs, players, names


def as_made(out, recipe: Recipe) -> Recipe:
    """``recipe`` with the settings of :data:`MADE_WITH` taken from the model in ``out``, the
    one a resumed training goes on from (``recipe`` itself when there is none yet: resuming then
    fails with its own message)."""
    out = Path(out)
    if not out.is_file():
        return recipe
    made = read_net(out).header.get("training", {}).get("settings", {})
    return replace(recipe, **{f: made[f] for f in MADE_WITH if f in made})


class _Run:
    """The bookkeeping of one :func:`train_net` run around its :class:`Trainer`: the learning
    curve's rows, the clock, what a resumed model had done, and the saves (each a point of the
    curve, the model and the figure)."""

    def __init__(self, names, players, rs, rules, seed, recipe: Recipe, out: Path, say):
        import pandas as pd

        self.pd, self.players, self.rs, self.seed, self.recipe, self.out, self.say = pd, players, rs, seed, recipe, \
            out, say
        self.curve_file, self.figure = curve_paths(out)
        self.opp_text = ",".join(names)
        self.baselines = list(dict.fromkeys([load_agent(n).name for n in [*names, recipe.teacher, *ALWAYS_MEASURED]]))
        self.tr = Trainer(names, players, rs.spec(), seed, recipe, say)
        self.rows: list[dict] = []
        self.done = {"seconds": 0.0, "steps": 0, "rounds": 0, "iterations": 0, "round_seed": 0}
        self.resumed = False
        self.title = (f"kc-sim train: cloning {recipe.teacher}, then PPO vs {self.opp_text} and a league; {players} "
                      f"players, {rules if isinstance(rules, str) else rs.spec()}, seed {seed}\nwin rate on "
                      f"{recipe.eval_deals:,} fixed deals, every seating, 95% intervals clustered by deal")
        self.t_run = time.perf_counter()

    def resume(self) -> None:
        """Go on from the model in ``out``: its network, value net, counts and curve."""
        out, tr, players, rs = self.out, self.tr, self.players, self.rs
        if not out.is_file():
            raise UserError(f"cannot resume: {out} does not exist (train without --resume first)")
        m = read_net(out)
        t = m.header.get("training", {})
        if (t.get("opponents"), m.header.get("players"), m.header.get("rules")) != (self.opp_text, players, rs.spec()):
            raise UserError(f"cannot resume {out}: it was trained against {t.get('opponents')!r} with "
                            f"{m.header.get('players')} players under {m.header.get('rules')!r}, not "
                            f"{self.opp_text!r}, {players}, {rs.spec()!r}")
        from kc_sim.learn.qnet import QNet
        tr.net = QNet.from_params(m.params)
        state = {k[len("value."):]: tr.torch.from_numpy(np.array(v)) for k, v in m.extra.items()
                 if k.startswith("value.")}
        if state:
            tr.vnet.load_state_dict(state)
        done = self.done
        for k in done:
            done[k] = type(done[k])(t.get(k, 0))
        tr.steps, tr.rounds, tr.iters, tr.round_seed = done["steps"], done["rounds"], done["iterations"], done["round_seed"]
        if self.curve_file.is_file():
            self.rows = self.pd.read_parquet(self.curve_file).to_dict("records")
        self.resumed = True

    def seconds_now(self) -> float:
        return (self.done["seconds"] if self.resumed else 0.0) + time.perf_counter() - self.t_run

    def snapshot(self, phase: str) -> list[EvalPoint]:
        """Evaluate the network, add the points to the curve, save the curve, its figure and the model."""
        tr, recipe, players, rs = self.tr, self.recipe, self.players, self.rs
        te = time.perf_counter()
        P = tr.net.to_params()
        points = evaluate(P, self.baselines, players, rs, recipe.eval_deals, self.seed)
        tr.t_eval += time.perf_counter() - te
        secs = self.seconds_now()
        for p in points:
            self.rows.append({"steps": tr.steps, "train_rounds": tr.rounds, "seconds": round(secs, 1), "phase": phase,
                              "players": players, **p.row()})
        table = self.pd.DataFrame(self.rows)
        table.to_parquet(self.curve_file, index=False)
        plot_curve(table, self.figure, self.title)
        training = {"recipe": f"bc({recipe.teacher})+ppo", "teacher": recipe.teacher, "opponents": self.opp_text,
                    "seed": self.seed, "steps": tr.steps, "rounds": tr.rounds, "iterations": tr.iters,
                    "round_seed": tr.round_seed, "seconds": round(secs, 1), "settings": asdict(recipe),
                    "last": {p.baseline: round(p.win, 4) for p in points}}
        extra = {f"value.{k}": v.detach().cpu().numpy() for k, v in tr.vnet.state_dict().items()}
        write_net(self.out, P, players=players, rules=rs.spec(), training=training, extra=extra)
        self.say(f"[{duration(secs)}] {phase} steps {tr.steps:,}: " + "; ".join(
            f"vs {p.baseline} win {p.win:.3f} [{p.win_lo:.3f}, {p.win_hi:.3f}], decided {p.decided:.3f}, "
            f"penalty diff {p.penalty_diff:+.2f}" for p in points))
        return points

    def schedule(self, budget_s, steps, evals):
        """``(until, say_progress, checkpoint)`` for :meth:`Trainer.improve`: stop when the
        budget (seconds, else ``steps`` in all) is spent; evaluate and save ``evals`` times
        along the way; progress lines with the PPO rate and the time left."""
        tr, done = self.tr, self.done
        if budget_s is not None:
            every = budget_s / max(1, evals)
            next_eval = [self.seconds_now() + every]

            def until():
                return self.seconds_now() >= budget_s

            def due():
                return self.seconds_now() >= next_eval[0]
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
                self.snapshot("ppo")

        ppo_start = time.perf_counter()
        ppo_evals = tr.t_eval

        def say_progress(text):
            secs = self.seconds_now()
            ppo = time.perf_counter() - ppo_start - (tr.t_eval - ppo_evals)
            rate = (tr.steps - done["steps"]) / max(ppo, 1e-9)
            left = (budget_s - secs) if budget_s is not None else (steps - tr.steps) / max(rate, 1e-9)
            self.say(f"[{duration(secs)}] {text}; PPO {rate:,.0f} steps/s; {duration(max(left, 0.0))} left")

        return until, say_progress, checkpoint


def train_net(opponent="greedy", players: int = 2, *, minutes: float | None = None, steps: int | None = None,
              out="model.zip", rules="classic", seed: int = 0, recipe: Recipe = Recipe(), evals: int = 10,
              resume: bool = False, threads: int = 1, log=print) -> NetTrainResult:
    """Train with the recipe of the module doc for ``minutes`` of wall-clock time (after the
    start-up) or ``steps`` learner decisions of policy gradient; see the module doc."""
    t0 = time.perf_counter()
    rs, players, names = _check(opponent, players, rules, minutes, steps, recipe, out)
    torch = require_torch()
    torch.set_num_threads(max(1, int(threads)))
    say = log or (lambda *_: None)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if resume:
        recipe = as_made(out, recipe)
    run = _Run(names, players, rs, rules, seed, recipe, out, say)
    tr = run.tr
    if resume:
        run.resume()
    tr.warm(run.baselines)
    start = time.perf_counter() - t0
    run.t_run = time.perf_counter()
    say(f"compile and start-up {start:.1f} s; training against {run.opp_text}, {players} players, "
        + (f"{minutes:g} minutes" if minutes is not None else f"{steps:,} steps"))
    budget_s = None if minutes is None else minutes * 60.0
    last: list[EvalPoint] = []
    try:
        if not resume:
            tb = time.perf_counter()
            tr.clone(say, None if budget_s is None else tb + BC_SHARE * budget_s)
            tr.t_bc = time.perf_counter() - tb
            last = run.snapshot("bc")
        tr.improve(*run.schedule(budget_s, steps, evals))
        last = run.snapshot("final")
    except KeyboardInterrupt:
        run.snapshot("interrupted")
        raise UserError(f"interrupted at {tr.steps:,} steps; the model and its curve are saved in {out}; "
                        "run the same command with --resume to go on") from None
    return NetTrainResult(out, run.curve_file, run.figure, tr.steps, tr.rounds, run.seconds_now(), start, tr.t_act,
                          tr.t_learn, tr.t_eval, tr.t_bc, tr.t_ppo, last)
