"""``kc-sim train`` (registered by ``kc_sim.cli``): learn an agent against compiled kc-sim agents.

Two methods. ``net`` (the default, :mod:`kc_sim.learn.recipe`): behaviour cloning of a search
agent, then PPO against the opponents and a league of past checkpoints, acting in compiled
code; the model plays as ``net:OUT``. ``ppo`` (:mod:`kc_sim.learn.train`): sb3-contrib's
MaskablePPO over the Gymnasium env; the model plays as ``sb3:OUT``. This module only reads
the options and prints where the files went.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from kc_sim.cli.options import RulesOpt
from kc_sim.errors import UserError
from kc_sim.learn.progress import main_log

METHODS = ("net", "ppo")
_NET_ONLY = ("minutes", "teacher", "bc_rounds", "bc_steps", "hidden", "hidden2", "rounds_per_iter", "temperature",
             "league", "eval_deals", "outcome", "penalty_weight")
_PPO_ONLY = ("envs", "seat", "observation", "reward", "eval_rounds", "gamma", "ent_coef")
#: the options of --method net that set the recipe: option -> kc_sim.learn.recipe.Recipe field
_RECIPE_FIELDS = {"teacher": "teacher", "bc_rounds": "bc_rounds", "bc_steps": "bc_steps", "hidden": "h1",
                  "hidden2": "h2", "rounds_per_iter": "rounds_per_iter", "learning_rate": "lr",
                  "temperature": "temperature", "gae_lambda": "gae_lambda", "league": "league",
                  "eval_deals": "eval_deals", "outcome": "outcome", "penalty_weight": "penalty_weight"}
#: the options of --method ppo passed to kc_sim.learn.train.train when given (its defaults otherwise)
_PPO_OPTIONS = ("opponent", "steps", "envs", "seat", "observation", "reward", "eval_rounds", "learning_rate", "gamma",
                "gae_lambda", "ent_coef")


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
    outcome: Annotated[Optional[str], typer.Option(
        "--outcome", help="net: PPO's return of a round: went-out (1 if the learner went out, else 0; default) or "
        "decided (+1 went out, -1 another seat did, 0 blocked)")] = None,
    penalty_weight: Annotated[Optional[float], typer.Option(
        "--penalty-weight", help="net: minus this times the learner's penalty less the others' mean, added to "
        "the return (default 0)")] = None,
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
    given = {k: v for k, v in locals().items() if v is not None}
    _check_method(method, set(given))
    log = None if quiet else main_log
    common = {"players": players, "out": out, "rules": rules, "seed": seed, "evals": evals, "resume": resume, "log": log}
    if method == "ppo":
        return _train_ppo(common, {k: given[k] for k in _PPO_OPTIONS if k in given})
    _train_net(common, {k: given[k] for k in ("opponent", "minutes", "steps") if k in given},
               {field: given[k] for k, field in _RECIPE_FIELDS.items() if k in given})


def _check_method(method: str, given: set) -> None:
    """``--method`` is known, and no option of the other method is given."""
    if method not in METHODS:
        raise UserError(f"bad --method {method!r}: expected {' or '.join(METHODS)}")
    wrong = [k for k in (_PPO_ONLY if method == "net" else _NET_ONLY) if k in given]
    if wrong:
        raise UserError(f"{', '.join(_flag(k) for k in wrong)} {'is' if len(wrong) == 1 else 'are'} not an option of "
                        f"--method {method}")


def _train_net(common: dict, budget: dict, recipe: dict):
    """``--method net``: the recipe from the options given (the rest :class:`Recipe`'s
    defaults), the opponent and budget given (the rest :func:`train_net`'s defaults; neither
    --minutes nor --steps: 60 minutes), the training, and its result's lines."""
    from kc_sim.learn.recipe import Recipe, train_net  # lazy: torch and numba

    if "minutes" not in budget and "steps" not in budget:
        budget["minutes"] = 60.0
    if common["resume"]:
        _check_made_with(common["out"], recipe)
    cpu, wall = time.process_time(), time.perf_counter()      # every thread of this process
    res = train_net(**common, **budget, recipe=Recipe(**recipe))
    cores = (time.process_time() - cpu) / max(time.perf_counter() - wall, 1e-9)
    typer.echo(f"trained {res.steps:,} steps ({res.rounds:,} rounds) in {res.seconds:.0f} s: behaviour cloning "
               f"{res.bc_seconds:.0f} s, PPO {res.ppo_seconds:.0f} s at {res.steps / max(res.ppo_seconds, 1e-9):,.0f} "
               f"steps/s (acting {res.acting_seconds:.0f} s in a second thread beside learning {res.learning_seconds:.0f} s), "
               f"evaluating {res.eval_seconds:.0f} s; compile and start-up {res.start_seconds:.1f} s; {cores:.1f} cores "
               "busy on average (acting runs in a second thread beside torch's one; fewer when other programs hold the cores)")
    for p in res.last:
        typer.echo(f"win rate vs {p.baseline}: {p.win:.3f} [{p.win_lo:.3f}, {p.win_hi:.3f}] on {p.deals:,} fixed deals "
                   f"x {p.rounds // p.deals} seatings (score {p.score:.3f}; decided rounds won {p.decided:.3f} "
                   f"[{p.decided_lo:.3f}, {p.decided_hi:.3f}], penalty diff {p.penalty_diff:+.2f} "
                   f"[{p.penalty_diff_lo:+.2f}, {p.penalty_diff_hi:+.2f}])")
    typer.echo(f"model: {res.model}")
    typer.echo(f"learning curve: {res.curve}, figure: {res.figure}")
    typer.echo(f"agent: net:{res.model}")


def _check_made_with(out: Path, recipe: dict) -> None:
    """On --resume, an option that made the model's start (its teacher, cloning or shape) is
    the model's own: one given otherwise is refused, not silently recorded as if it had been."""
    from kc_sim.learn.recipe import MADE_WITH, Recipe, as_made

    made = as_made(out, Recipe(**recipe))
    flags = {field: _flag(k) for k, field in _RECIPE_FIELDS.items()}
    clash = [f"{flags[f]} {getattr(made, f)}, not {recipe[f]}" for f in MADE_WITH
             if f in recipe and recipe[f] != getattr(made, f)]
    if clash:
        raise UserError(f"cannot resume {out}: it was made with {'; '.join(clash)} (leave "
                        f"{'that option' if len(clash) == 1 else 'those options'} out to go on as it was made)")


def _train_ppo(common: dict, given: dict):
    """``--method ppo``: :func:`kc_sim.learn.train.train` with the options given (the rest its
    defaults), and its result's lines."""
    import inspect

    from kc_sim.learn.train import train as run_train  # lazy: torch, sb3 and numba

    res = run_train(**common, **given)
    opponent = given.get("opponent", inspect.signature(run_train).parameters["opponent"].default)
    last = res.last
    typer.echo(f"trained {res.steps:,} steps in {res.train_seconds:.1f} s ({res.steps / max(res.train_seconds, 1e-9):,.0f}"
               f" steps/s; compile and start-up {res.start_seconds:.1f} s)")
    typer.echo(f"score vs {opponent}: {last.score:.3f} [{last.score_lo:.3f}, {last.score_hi:.3f}] over "
               f"{last.rounds:,} rounds ({last.wins:,} won, {last.ties:,} tied, {last.losses:,} lost)")
    typer.echo(f"model: {res.model}")
    typer.echo(f"learning curve: {res.curve}, figure: {res.figure}")
    typer.echo(f"agent: sb3:{res.model}")
