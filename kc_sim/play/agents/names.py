"""Agent names as results show them: without the module or file they were loaded from, and
without the ``#2`` that tells apart two copies of one agent in self-play. Imports nothing,
so readers of finished runs can use it without loading the compiled core."""

__all__ = ["base_label", "short_name"]


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
