"""``kc-sim train`` (registered by ``kc_sim.cli``): MaskablePPO against compiled kc-sim agents.

The library side is :mod:`kc_sim.learn.train`; this module only reads the options and
prints where the files went.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kc_sim.cli.options import RulesOpt


def train(
    opponent: Annotated[str, typer.Option(
        "--opponent", help="compiled kc-sim agents for the other seats: one name for all, or a comma list "
        "in seat order")] = "random",
    players: Annotated[int, typer.Option("--players", help="seats per table")] = 2,
    steps: Annotated[int, typer.Option("--steps", help="training steps (decisions of the learner), in all")] = 1_000_000,
    out: Annotated[Path, typer.Option("--out", "-o", help="the model file (.zip); the curve is written beside it")] =
    Path("model.zip"),
    rules: RulesOpt = "classic",
    seed: Annotated[int, typer.Option("--seed", help="seeds the deals, the network and the evaluation deals")] = 0,
    envs: Annotated[int, typer.Option("--envs", help="rounds stepped together")] = 64,
    seat: Annotated[int, typer.Option("--seat", help="the learner's seat")] = 0,
    observation: Annotated[str, typer.Option("--observation", help="planes (learnable) or vector")] = "planes",
    reward: Annotated[str, typer.Option(
        "--reward", help="win: +1 ahead of / -1 behind each opponent, averaged; margin: the opponents' mean "
        "penalty minus the own, scaled; penalty: minus the own, scaled; shaped: win plus potential-based "
        "shaping on the hand penalties (docs/environments.md)")] = "win",
    evals: Annotated[int, typer.Option("--evals", help="points of the learning curve after the first")] = 10,
    eval_rounds: Annotated[int, typer.Option("--eval-rounds", help="rounds per point (the same deals each time)")]
    = 2000,
    learning_rate: Annotated[float, typer.Option("--learning-rate", help="PPO's learning rate")] = 1e-4,
    gamma: Annotated[float, typer.Option("--gamma", help="discount per learner decision")] = 1.0,
    gae_lambda: Annotated[float, typer.Option("--gae-lambda", help="GAE's lambda")] = 0.95,
    ent_coef: Annotated[float, typer.Option("--ent-coef", help="entropy bonus")] = 0.03,
    resume: Annotated[bool, typer.Option("--resume", help="continue training the model in --out")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress lines, only the final ones")] = False,
):
    """Train a policy with sb3-contrib's MaskablePPO against kc-sim agents (needs kc-sim[train]);
    writes the model, its learning curve (parquet) and the figure. The model then plays as
    the agent sb3:OUT."""
    from kc_sim.learn.train import main_log
    from kc_sim.learn.train import train as run_train

    res = run_train(opponent, players, steps, out, rules=rules, seed=seed, envs=envs, seat=seat,
                    observation=observation, reward=reward, evals=evals, eval_rounds=eval_rounds, resume=resume,
                    learning_rate=learning_rate, gamma=gamma, gae_lambda=gae_lambda, ent_coef=ent_coef,
                    log=None if quiet else main_log)
    last = res.last
    typer.echo(f"trained {res.steps:,} steps in {res.train_seconds:.1f} s ({res.steps / max(res.train_seconds, 1e-9):,.0f}"
               f" steps/s; compile and start-up {res.start_seconds:.1f} s)")
    typer.echo(f"score vs {opponent}: {last.score:.3f} [{last.score_lo:.3f}, {last.score_hi:.3f}] over "
               f"{last.rounds:,} rounds ({last.wins:,} won, {last.ties:,} tied, {last.losses:,} lost)")
    typer.echo(f"model: {res.model} (play it as sb3:{res.model})")
    typer.echo(f"learning curve: {res.curve}, figure: {res.figure}")
