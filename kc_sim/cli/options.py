"""Command-line options that several ``kc-sim`` commands share, defined once."""

from __future__ import annotations

from typing import Annotated

import typer

from kc_sim.game.rules import rules_help

__all__ = ["RulesOpt"]

#: ``--rules``: a rule set in its text form (kc_sim.game.rules.parse_rules)
RulesOpt = Annotated[str, typer.Option("--rules", help=f"rule set, e.g. classic,draw=start ({rules_help()})")]
