"""``kc-sim train`` (registered by ``kc_sim.cli``): learn an agent against compiled kc-sim agents.

Two methods. ``net`` (the default, :mod:`kc_sim.learn.recipe`): behaviour cloning of a search
agent, then PPO against the opponents and a league of past checkpoints, acting in compiled
code; the model plays as ``net:OUT``. ``ppo`` (:mod:`kc_sim.learn.train`): sb3-contrib's
MaskablePPO over the Gymnasium env; the model plays as ``sb3:OUT``. This module only reads
the options and prints where the files went.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kc_sim.cli.options import RulesOpt
from kc_sim.errors import UserError

METHODS = ("net", "ppo")
_NET_ONLY = ("minutes", "teacher", "bc_rounds", "bc_steps", "hidden", "hidden2", "rounds_per_iter", "temperature",
             "league", "eval_deals")
_PPO_ONLY = ("envs", "seat", "observation", "reward", "eval_rounds", "gamma", "ent_coef")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def train(
    opponent: Annotated[Optional[str], typer.Option(
        "--opponent", help="compiled kc-sim agents for the other seats: one name for all, or a comma list "
        "(default: greedy; random for --method ppo)")] = None,
    players: Annotated[int, typer.Option("--players", help="seats per table")] = 2,
    minutes: Annotated[Optional[float], typer.Option(
        "--minutes", help="net: the training budget in wall-clock minutes (default 60 when --steps is not given)")]
    = None,
    steps: Annotated[Optional[int], typer.Option(
        "--steps", help="training steps (learner decisions) in all (ppo: default 1,000,000)")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="the model file (.zip); the curve is written beside it")] =
    Path("model.zip"),
    method: Annotated[str, typer.Option(
        "--method", help="net: behaviour cloning then PPO of an action-scoring network played compiled (the "
        "recipe of results/README.md section 9); ppo: sb3-contrib's MaskablePPO on the planes")] = "net",
    rules: RulesOpt = "classic",
    seed: Annotated[int, typer.Option("--seed", help="seeds the deals, the network and the evaluation deals")] = 0,
    teacher: Annotated[Optional[str], typer.Option(
        "--teacher", help="net: the compiled agent cloned first (default planner)")] = None,
    bc_rounds: Annotated[Optional[int], typer.Option("--bc-rounds", help="net: rounds the teacher plays")] = None,
    bc_steps: Annotated[Optional[int], typer.Option("--bc-steps", help="net: cloning's minibatch steps")] = None,
    hidden: Annotated[Optional[int], typer.Option("--hidden", help="net: hidden units (default 32)")] = None,
    hidden2: Annotated[Optional[int], typer.Option("--hidden2", help="net: units of a second hidden layer (0)")] = None,
    rounds_per_iter: Annotated[Optional[int], typer.Option(
        "--rounds-per-iter", help="net: rounds per PPO iteration (default 2048)")] = None,
    temperature: Annotated[Optional[float], typer.Option(
        "--temperature", help="net: the softmax temperature the learner acts with (default 1)")] = None,
    league: Annotated[Optional[float], typer.Option(
        "--league", help="net: share of iterations against past checkpoints (default 0.2)")] = None,
    eval_deals: Annotated[Optional[int], typer.Option(
        "--eval-deals", help="net: fixed deals per point of the curve, each in every seating (default 2000)")] = None,
    envs: Annotated[Optional[int], typer.Option("--envs", help="ppo: rounds stepped together (64)")] = None,
    seat: Annotated[Optional[int], typer.Option("--seat", help="ppo: the learner's seat (0)")] = None,
    observation: Annotated[Optional[str], typer.Option(
        "--observation", help="ppo: planes (learnable), planes_opens or vector")] = None,
    reward: Annotated[Optional[str], typer.Option(
        "--reward", help="ppo: win, margin, penalty or shaped (docs/environments.md)")] = None,
    evals: Annotated[int, typer.Option("--evals", help="points of the learning curve after the first")] = 10,
    eval_rounds: Annotated[Optional[int], typer.Option(
        "--eval-rounds", help="ppo: rounds per point (the same deals each time, default 2000)")] = None,
    learning_rate: Annotated[Optional[float], typer.Option(
        "--learning-rate", help="the learning rate (net: PPO's, 3e-4; ppo: 1e-4)")] = None,
    gamma: Annotated[Optional[float], typer.Option("--gamma", help="ppo: discount per learner decision (1)")] = None,
    gae_lambda: Annotated[Optional[float], typer.Option("--gae-lambda", help="GAE's lambda (net 0.9, ppo 0.95)")] = None,
    ent_coef: Annotated[Optional[float], typer.Option("--ent-coef", help="ppo: entropy bonus (0.03)")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="continue training the model in --out")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress lines, only the final ones")] = False,
):
    """Learn an agent against compiled kc-sim agents (needs kc-sim[train]) and write the model, its
    learning curve (parquet) and the figure. The last line names the agent to use in --agents."""
    given = {k for k, v in locals().items() if v is not None}
    _check_method(method, given)
    from kc_sim.learn.recipe import main_log  # lazy: kc-sim --help loads no numba

    log = None if quiet else main_log
    if method == "ppo":
        return _train_ppo(opponent or "random", players, steps or 1_000_000, out, rules, seed, envs, seat, observation,
                          reward, evals, eval_rounds, learning_rate, gamma, gae_lambda, ent_coef, resume, log)
    _train_net(opponent or "greedy", players, minutes, steps, out, rules, seed, evals, resume, log,
               {"teacher": teacher, "bc_rounds": bc_rounds, "bc_steps": bc_steps, "hidden": hidden, "hidden2": hidden2,
                "rounds_per_iter": rounds_per_iter, "learning_rate": learning_rate, "temperature": temperature,
                "gae_lambda": gae_lambda, "league": league, "eval_deals": eval_deals})


def _check_method(method: str, given: set) -> None:
    """``--method`` is known, and no option of the other method is given."""
    if method not in METHODS:
        raise UserError(f"bad --method {method!r}: expected {' or '.join(METHODS)}")
    wrong = [k for k in (_PPO_ONLY if method == "net" else _NET_ONLY) if k in given]
    if wrong:
        raise UserError(f"{', '.join(_flag(k) for k in wrong)} {'is' if len(wrong) == 1 else 'are'} not an option of "
                        f"--method {method}")


def _train_net(opponent, players, minutes, steps, out, rules, seed, evals, resume, log, given: dict):
    """``--method net``: the recipe's settings from the options given (the rest its defaults),
    the training, and its result's lines."""
    from kc_sim.learn.recipe import Recipe, train_net

    defaults = Recipe()
    g = given
    recipe = Recipe(
        teacher=g["teacher"] or defaults.teacher,
        bc_rounds=defaults.bc_rounds if g["bc_rounds"] is None else g["bc_rounds"],
        bc_steps=defaults.bc_steps if g["bc_steps"] is None else g["bc_steps"],
        h1=g["hidden"] or defaults.h1, h2=defaults.h2 if g["hidden2"] is None else g["hidden2"],
        rounds_per_iter=g["rounds_per_iter"] or defaults.rounds_per_iter,
        lr=g["learning_rate"] or defaults.lr, temperature=g["temperature"] or defaults.temperature,
        gae_lambda=defaults.gae_lambda if g["gae_lambda"] is None else g["gae_lambda"],
        league=defaults.league if g["league"] is None else g["league"],
        eval_deals=g["eval_deals"] or defaults.eval_deals)
    if minutes is None and steps is None:
        minutes = 60.0
    res = train_net(opponent, players, minutes=minutes, steps=steps, out=out, rules=rules, seed=seed, recipe=recipe,
                    evals=evals, resume=resume, log=log)
    typer.echo(f"trained {res.steps:,} steps ({res.rounds:,} rounds) in {res.seconds:.0f} s: behaviour cloning "
               f"{res.bc_seconds:.0f} s, PPO {res.ppo_seconds:.0f} s at {res.steps / max(res.ppo_seconds, 1e-9):,.0f} "
               f"steps/s (acting {res.acting_seconds:.0f} s beside learning {res.learning_seconds:.0f} s, two threads), "
               f"evaluating {res.eval_seconds:.0f} s; compile and start-up {res.start_seconds:.1f} s")
    for p in res.last:
        typer.echo(f"win rate vs {p.baseline}: {p.win:.3f} [{p.win_lo:.3f}, {p.win_hi:.3f}] on {p.deals:,} fixed deals "
                   f"x {p.rounds // p.deals} seatings (score {p.score:.3f})")
    typer.echo(f"model: {res.model}")
    typer.echo(f"learning curve: {res.curve}, figure: {res.figure}")
    typer.echo(f"agent: net:{res.model}")


def _train_ppo(opponent, players, steps, out, rules, seed, envs, seat, observation, reward, evals, eval_rounds,
               learning_rate, gamma, gae_lambda, ent_coef, resume, log):
    from kc_sim.learn.train import train as run_train

    res = run_train(opponent, players, steps, out, rules=rules, seed=seed, envs=envs or 64, seat=seat or 0,
                    observation=observation or "planes", reward=reward or "win", evals=evals,
                    eval_rounds=eval_rounds or 2000, resume=resume, learning_rate=learning_rate or 1e-4,
                    gamma=1.0 if gamma is None else gamma, gae_lambda=0.95 if gae_lambda is None else gae_lambda,
                    ent_coef=0.03 if ent_coef is None else ent_coef, log=log)
    last = res.last
    typer.echo(f"trained {res.steps:,} steps in {res.train_seconds:.1f} s ({res.steps / max(res.train_seconds, 1e-9):,.0f}"
               f" steps/s; compile and start-up {res.start_seconds:.1f} s)")
    typer.echo(f"score vs {opponent}: {last.score:.3f} [{last.score_lo:.3f}, {last.score_hi:.3f}] over "
               f"{last.rounds:,} rounds ({last.wins:,} won, {last.ties:,} tied, {last.losses:,} lost)")
    typer.echo(f"model: {res.model}")
    typer.echo(f"learning curve: {res.curve}, figure: {res.figure}")
    typer.echo(f"agent: sb3:{res.model}")
