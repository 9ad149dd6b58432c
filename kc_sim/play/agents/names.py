"""Agent names as results show them: without the module or file they were loaded from, and
without the ``#2`` that tells apart two copies of one agent in self-play; and a list of
names as typed. Imports nothing heavy, so readers of finished runs and the command line's
checks use it without loading the compiled core."""

from kc_sim.errors import UserError

__all__ = ["base_label", "parse_agent_list", "short_name"]


def short_name(name: str) -> str:
    """An agent's name without its module or file: ``Name`` for ``path/file.py:Name``
    or ``package.module:Name``. A name whose last part is not a Python name, such as
    ``sb3:runs/model.zip`` (made by a loader, kc_sim.play.agents.registry), stays whole."""
    head, sep, tail = name.rpartition(":")
    return tail if sep and tail.isidentifier() else name


def base_label(label: str) -> str:
    """The agent behind a label: ``greedy#2`` -> ``greedy`` (a copy in self-play),
    ``pkg.mod:Name`` -> ``Name``."""
    head, _, tail = label.rpartition("#")
    return short_name(head if head and tail.isdigit() else label)


def parse_agent_list(text, what: str = "--agents") -> list[str]:
    """``"greedy, merger"`` -> ``["greedy", "merger"]``: agent names separated by commas,
    blanks around them dropped (a list or tuple of names is taken as already split). An
    empty name (``"greedy,,merger"``, a trailing comma) is a one-line UserError naming ``what``."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    names = [str(p).strip() for p in parts]
    for i, n in enumerate(names):
        if not n:
            raise UserError(f"bad {what} {text!r}: name {i + 1} of {len(names)} is empty "
                            "(give agent names separated by commas, e.g. greedy,merger)")
    return names
