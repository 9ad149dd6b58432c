"""Markdown tables of the findings files (shared by :mod:`.findings` and :mod:`.stopping`)."""

from __future__ import annotations


def md_table(header, rows) -> str:
    """A markdown table; a ``|`` inside a cell is escaped."""
    def esc(v):
        return str(v).replace("|", "\\|")
    lines = ["| " + " | ".join(esc(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)
