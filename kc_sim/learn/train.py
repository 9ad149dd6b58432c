"""``kc-sim train``: MaskablePPO (sb3-contrib) learns one seat against compiled kc-sim agents.

The learner plays seat ``seat`` of ``envs`` rounds stepped together by the batched core
(:class:`kc_sim.env.gym_env.KcVectorEnv` behind :class:`kc_sim.learn.sb3_vec.SB3VecEnv`); the
opponents play inside the compiled step. Only legal actions are ever chosen: MaskablePPO
is given each step's action masks.

The learning curve: ``evals`` times during training (and before it), the current policy
plays ``eval_rounds`` rounds against the same opponents, the same deals every time (round
seeds derived from ``seed`` apart from the training's), taking its most probable legal
action (:class:`kc_sim.learn.policy_net.PolicyNet`, exactly what an ``sb3:`` agent plays).
Its score per round is the share of opponents it finished ahead of, by penalty, ties half
(2 players: 1 for a win, ½ for a tie); the curve holds its mean with a 95% interval
(Wilson's, on the score sum), and is written as it grows:

- ``OUT`` (``model.zip``): the sb3 model, with the NumPy weights and settings inside;
- ``OUT.curve.parquet``: one row per evaluation (``steps``, ``score``, ``score_lo``,
  ``score_hi``, ``rounds``, ``wins``, ``ties``, ``losses``, ``mean_penalty``, ``seconds``);
- ``OUT.curve.png``: the figure.

The model is saved at every evaluation, so an interrupted run keeps what it learned;
``resume=True`` continues from ``OUT`` up to ``steps`` in all. Resuming runs sb3's loader,
which unpickles the file, so it is allowed only on a file this machine's ``kc-sim train``
saved: each save records the file's SHA-256 (:func:`kc_sim.net.model_file.remember_written`)
and a resume checks it first; any other file is refused in one line.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kc_sim.env.gym_env import REWARDS, KcVectorEnv, observation_space, opponent_seats
from kc_sim.net.encodings import encoding_id
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.play.agents.registry import load_agent
from kc_sim.net.model_file import forget_written, remember_written, require_written
from kc_sim.learn.progress import curve_paths, duration
from kc_sim.stats import wilson_scalar

__all__ = ["EvalResult", "TrainResult", "curve_paths", "evaluate", "plot_curve", "train"]

INSTALL = "pip install 'kc-sim[train]' (torch, stable-baselines3, sb3-contrib)"
EVAL_SALT = 0x6576616C          # eval deals: derive(seed ^ EVAL_SALT, i), apart from training's


def _sb3():
    """sb3-contrib's MaskablePPO, or a one-line UserError saying how to install it."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as e:
        raise UserError(f"kc-sim train needs the train extra ({e.name or e} is missing): {INSTALL}") from None
    return MaskablePPO


@dataclass(frozen=True)
class EvalResult:
    rounds: int
    wins: int
    ties: int
    losses: int
    score: float
    score_lo: float
    score_hi: float
    mean_penalty: float


def evaluate(net, opponents, players: int = 2, rules="classic", seat: int = 0, observation: str = "planes",
             rounds: int = 2000, seed: int = 0) -> EvalResult:
    """The policy ``net`` (a :class:`PolicyNet`) in ``rounds`` rounds against ``opponents``,
    round i dealt from ``derive(seed ^ EVAL_SALT, i)``; each env plays one round."""
    venv = KcVectorEnv(rounds, players, rules, opponents, seat, observation, reward="win", copy=False)
    obs, _ = venv.reset(seed=seed ^ EVAL_SALT)
    done = np.zeros(rounds, dtype=bool)
    score = np.zeros(rounds)
    penalty = np.zeros(rounds)
    while not done.all():
        obs, reward, terminated, _, info = venv.step(net.act(obs, venv.action_masks()))
        new = terminated & ~done
        if new.any():
            score[new] = (reward[new] + 1) / 2
            penalty[new] = info["final_info"]["penalties"][new, seat]
            done |= new
    wins, ties = int((score == 1).sum()), int((score == 0.5).sum()) if players == 2 else 0
    lo, hi = wilson_scalar(float(score.sum()), rounds)
    return EvalResult(rounds, wins, ties, int((score == 0).sum()), float(score.mean()), lo, hi, float(penalty.mean()))


def plot_curve(curve, path, title: str) -> None:
    """The learning curve: score with its 95% band over training steps, ½ marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    x = curve["steps"].to_numpy()
    ax.fill_between(x, curve["score_lo"], curve["score_hi"], alpha=0.25, label="95% interval")
    ax.plot(x, curve["score"], marker="o", ms=3, label="score (wins, ties half)")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("training steps (learner decisions)")
    ax.set_ylabel("score against the opponents")
    ax.set_title(title, fontsize=9)
    ax.set_ylim(max(0.0, min(0.4, float(curve["score_lo"].min()) - 0.02)), min(1.0, float(curve["score_hi"].max()) + 0.05))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@dataclass(frozen=True)
class TrainResult:
    model: Path
    curve: Path
    figure: Path
    steps: int
    start_seconds: float
    train_seconds: float
    last: EvalResult


def _check(opponent, players, rules, seat, observation, reward, steps, envs, evals, eval_rounds,
           learning_rate=1e-4, gamma=1.0, gae_lambda=0.95, ent_coef=0.03):
    rs = parse_rules(rules)
    rs.check_players(players)
    opp = opponent_seats(opponent, players, seat)
    for name in set(opp.values()):
        if not load_agent(name).compiled:
            raise UserError(f"bad opponent {name!r}: a Python agent; training opponents are compiled kc-sim agents "
                            "(e.g. random, greedy, pile-merger, planner)")
    observation_space(observation)
    if reward not in REWARDS:
        raise UserError(f"bad reward {reward!r}: expected one of {', '.join(REWARDS)}")
    for what, v, low in (("steps", steps, 1), ("envs", envs, 1), ("evals", evals, 0), ("eval-rounds", eval_rounds, 1)):
        if v < low:
            raise UserError(f"bad --{what} {v}: expected at least {low}")
    for what, v in (("learning-rate", learning_rate), ("gamma", gamma), ("gae-lambda", gae_lambda), ("ent-coef", ent_coef)):
        low = "(0" if what == "learning-rate" else "[0"
        if not (0 <= v <= 1) or (what == "learning-rate" and v == 0):
            raise UserError(f"bad --{what} {v}: expected a number in {low}, 1]")
    return rs, opp


def train(opponent="random", players: int = 2, steps: int = 1_000_000, out="model.zip", *, rules="classic",
          seed: int = 0, envs: int = 64, seat: int = 0, observation: str = "planes", reward: str = "win",
          evals: int = 10, eval_rounds: int = 2000, net=(256, 256), n_steps: int = 64, batch_size: int = 1024,
          n_epochs: int = 4, learning_rate: float = 1e-4, gamma: float = 1.0, gae_lambda: float = 0.95,
          ent_coef: float = 0.03,
          resume: bool = False, threads: int = 1, log=print) -> TrainResult:
    """Train, evaluate along the way, save; see the module docstring. ``log`` gets the
    progress lines (None: silent). The PPO settings default to those of the run that beat
    ``random`` (results/README.md): ``gamma=1`` (a round is short and only its end pays),
    ``learning_rate=1e-4``, ``ent_coef=0.03``. ``threads``: torch's threads (one by default: the
    network is small, and more threads spin against the env stepping on a busy machine)."""
    t0 = time.perf_counter()
    rs, opp = _check(opponent, players, rules, seat, observation, reward, steps, envs, evals, eval_rounds,
                     learning_rate, gamma, gae_lambda, ent_coef)
    out = Path(out)
    if out.suffix != ".zip":
        raise UserError(f"bad --out {str(out)!r}: expected a .zip file (the sb3 model), e.g. model.zip")
    written = None
    if resume:
        if not out.is_file():
            raise UserError(f"cannot resume: {out} does not exist (train without --resume first)")
        written = require_written(out, "resume training from")   # before sb3 unpickles it
    MaskablePPO = _sb3()
    import torch

    from kc_sim.learn.sb3_vec import SB3VecEnv

    torch.set_num_threads(max(1, int(threads)))
    out.parent.mkdir(parents=True, exist_ok=True)
    run = _Run(out, opp, players, rs, rules, seat, observation, reward, seed, eval_rounds, log, written, t0)
    venv = SB3VecEnv(KcVectorEnv(envs, players, rules, opp, seat, observation, reward), seed=seed)
    if resume:
        model = run.resume(MaskablePPO, venv)
    else:
        policy = "MlpPolicy"
        if observation == "planes_opens":          # the logits also weigh what each action opens
            from kc_sim.learn.opens_policy import OpensPolicy
            policy = OpensPolicy
        model = MaskablePPO(policy, venv, n_steps=n_steps, batch_size=batch_size, n_epochs=n_epochs,
                            learning_rate=learning_rate, gamma=gamma, gae_lambda=gae_lambda, ent_coef=ent_coef,
                            seed=seed, device="cpu",
                            policy_kwargs={"net_arch": {"pi": list(net), "vf": list(net)}}, verbose=0)
    return run.learn(model, steps, evals, envs)


class _Run:
    """One sb3 training run: its evaluations on fixed deals, the learning curve and the saves
    (:meth:`snapshot`), and the progress lines while sb3 learns (:meth:`learn`)."""

    def __init__(self, out: Path, opp: dict, players, rs, rules, seat, observation, reward, seed, eval_rounds, log,
                 written, t0: float):
        import pandas as pd

        self.pd, self.out, self.opp, self.players, self.rules, self.seat = pd, out, opp, players, rules, seat
        self.observation, self.seed, self.eval_rounds = observation, seed, eval_rounds
        self.curve_file, self.figure = curve_paths(out)
        self.opp_text = ",".join(opp[s] for s in sorted(opp))
        self.meta = {"observation": observation, "encoding": encoding_id(observation), "players": players,
                     "rules": rs.spec(), "seat": seat, "opponents": self.opp_text, "reward": reward, "seed": seed}
        self.title = (f"MaskablePPO ({observation}), seat {seat} of {players} vs {self.opp_text}, "
                      f"rules {rules if isinstance(rules, str) else rs.spec()}\n{eval_rounds:,} fixed deals per point")
        self.say = log or (lambda *_: None)
        self.rows: list[dict] = []
        self.state = {"written": written}
        self.model = None
        self.t0 = t0                     # when the command started

    def resume(self, MaskablePPO, venv):
        """The model in ``out`` (a file kc-sim wrote here, checked before), its curve so far."""
        from kc_sim.learn.policy_net import PolicyNet

        out = self.out
        model = MaskablePPO.load(out, env=venv, device="cpu")   # a file kc-sim wrote here (checked above)
        if self.curve_file.is_file():
            self.rows = self.pd.read_parquet(self.curve_file).to_dict("records")
        stored = PolicyNet.read_from(out)
        if stored is not None and {k: stored.meta.get(k) for k in self.meta} != self.meta:
            raise UserError(f"cannot resume {out}: it was trained with {json.dumps(stored.meta)}, "
                            f"not {json.dumps(self.meta)}")
        return model

    def snapshot(self, steps_now: int) -> EvalResult:
        """Evaluate the policy, add it to the curve, save the curve, the figure and the model."""
        from kc_sim.learn.policy_net import PolicyNet

        state = self.state
        pol = PolicyNet.from_sb3(self.model, self.meta | {"steps": steps_now})
        ev = evaluate(pol, self.opp, self.players, self.rules, self.seat, self.observation, self.eval_rounds,
                      self.seed)
        self.rows.append({"steps": steps_now, **ev.__dict__, "seconds": round(time.perf_counter() - self.t0, 1)})
        table = self.pd.DataFrame(self.rows)
        table.to_parquet(self.curve_file, index=False)
        if len(table) >= 2:
            plot_curve(table, self.figure, self.title)
        self.model.save(self.out)
        digest = pol.write_into(self.out)
        forget_written(state["written"])         # resume trusts only the file as last saved
        remember_written(self.out, digest)
        state["written"] = digest
        return ev

    def line(self, steps_now: int, ev: EvalResult | None) -> str:
        """A progress line: steps done, their rate, the time left and the last score."""
        state, steps, done0 = self.state, self.steps, self.done0
        rate = (steps_now - done0) / state["train"] if state["train"] > 0 else 0.0
        left = max(0, steps - steps_now) / rate if rate > 0 else math.nan
        text = f"steps {steps_now:,}/{steps:,} ({min(steps_now / steps, 1.0):.0%})"
        if rate:
            text += f", {rate:,.0f} steps/s, {duration(left)} left"
        if ev is not None:
            text += f"; score vs {self.opp_text} {ev.score:.3f} [{ev.score_lo:.3f}, {ev.score_hi:.3f}]"
        return text

    def _progress(self, every: int):
        """sb3's callback: evaluates every ``every`` steps, says a line every 10 s, times training alone."""
        from stable_baselines3.common.callbacks import BaseCallback

        run, state, steps = self, self.state, self.steps

        class _Progress(BaseCallback):
            def _on_step(self) -> bool:
                now = time.perf_counter()
                state["train"] += now - state["t"]
                state["t"] = now
                n = self.num_timesteps
                if state["next"] <= n < steps:
                    state["next"] += every
                    run.say(run.line(n, run.snapshot(n)))
                    state["t"] = state["shown"] = time.perf_counter()      # the evaluation is not training time
                elif now - state["shown"] >= 10:
                    run.say(run.line(n, None))
                    state["shown"] = now
                return True

        return _Progress()

    def learn(self, model, steps: int, evals: int, envs: int) -> TrainResult:
        """Train ``model`` up to ``steps`` in all, evaluating ``evals`` times (and before, unless
        resumed with a curve); a Ctrl-C saves first."""
        self.model, self.steps, t0 = model, steps, self.t0
        out, say, state, rows = self.out, self.say, self.state, self.rows
        done0 = self.done0 = int(model.num_timesteps)
        if done0 >= steps:
            raise UserError(f"{out} has already trained {done0:,} steps (asked: {steps:,}); give a larger --steps")
        every = max(1, (steps - done0) // evals) if evals else steps + 1
        state |= {"next": done0 + every, "t": time.perf_counter(), "train": 0.0, "shown": time.perf_counter()}
        last = None
        start = time.perf_counter() - t0           # imports, compiling or loading the core, the model
        if not rows:
            last = self.snapshot(done0)
            say(self.line(done0, last) + f" (before training; {time.perf_counter() - t0 - start:.1f} s)")
        say(f"compile and start-up {start:.1f} s; training {steps - done0:,} steps on {envs} envs")
        state["t"] = state["shown"] = time.perf_counter()
        try:
            model.learn(steps - done0, callback=self._progress(every), reset_num_timesteps=False, progress_bar=False)
        except KeyboardInterrupt:
            n = int(model.num_timesteps)
            self.snapshot(n)
            raise UserError(f"interrupted at {n:,} steps; the model and its curve are saved in {out}; "
                            "run the same command with --resume to go on") from None
        n = int(model.num_timesteps)
        if not rows or rows[-1]["steps"] != n:
            last = self.snapshot(n)
            say(self.line(n, last))
        else:
            last = EvalResult(**{k: rows[-1][k] for k in EvalResult.__dataclass_fields__})
        return TrainResult(out, self.curve_file, self.figure, n, start, state["train"], last)
