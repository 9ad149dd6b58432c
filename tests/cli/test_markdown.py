"""``kc-sim run`` prints its findings (markdown) rendered for a terminal, and as plain markdown
when its output is not a terminal (a file keeps the text of findings.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pexpect

TEXT = ("# Findings\\n\\nA paragraph long enough to be wrapped at word boundaries in a narrow terminal.\\n\\n"
        "| agent | win rate |\\n|---|---|\\n| supercalifragilistic_agent_name_x | 25.0% [24.6, 25.4] |\\n")
SCRIPT = f"from kc_sim.cli.analysis import print_markdown; print_markdown('{TEXT}')"


def test_a_terminal_gets_drawn_tables_and_whole_words():
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}   # the terminal's own size
    child = pexpect.spawn(sys.executable, ["-c", SCRIPT], dimensions=(24, 40), env=env, encoding="utf-8", timeout=60)
    child.expect(pexpect.EOF)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before)
    assert "|---|" not in shown and "─" in shown             # a drawn table, not markdown source
    lines = [line.rstrip() for line in shown.splitlines()]
    assert max(len(line) for line in lines) <= 40, lines
    words = "A paragraph long enough to be wrapped at word boundaries in a narrow terminal.".split(" ")
    assert " ".join(" ".join(lines).split()).count(" ".join(words)) == 1     # wrapped between words only
    # the long name folds onto the next lines of its cell rather than being cut short
    assert "…" not in shown
    head = next(i for i, line in enumerate(lines) if "win rate" in line)
    second = lines[head].index("win rate")
    first_cells = "".join(line[:second].strip() for line in lines[head + 2:])
    assert "supercalifragilistic_agent_name_x" in first_cells, lines


def test_a_file_gets_the_markdown_as_it_is():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    assert out.startswith("# Findings\n")
    assert "| supercalifragilistic_agent_name_x | 25.0% [24.6, 25.4] |" in out
