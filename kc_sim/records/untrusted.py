"""Text from files kc-sim did not necessarily write (game records, model headers, names in
them): the limits and the cleaning that keep it data.

The rules, in one place:

* **JSON is parsed with limits.** A line (or a header) longer than its byte limit, or nested
  deeper than :data:`MAX_DEPTH`, is refused with one line before the parser sees it, so a
  hostile file can neither exhaust memory nor the parser's stack. The depth is measured on
  the text with the strings taken out (a bracket inside a string does not nest).
* **Text shown to a person is cleaned.** :func:`display_text` cuts a name to
  :data:`DISPLAY_LIMIT` characters and replaces control characters (terminal escapes,
  ``\\r`` and ``\\n`` that forge lines, bidirectional overrides, line separators, lone
  surrogates) with ``?``, so a name prints as one short line of itself and nothing else.
* **Values quoted in error messages are previews**: :func:`preview` is a repr cut to a
  few dozen characters, so an error about a 200 MB field is still one short line.
"""

from __future__ import annotations

import json
import re

import numpy as np

from kc_sim.errors import UserError

__all__ = ["MAX_DEPTH", "MAX_LINE_BYTES", "DISPLAY_LIMIT", "nesting_depth", "loads", "display_text",
           "display_names", "preview"]

#: the longest game record line read (a real record is a few kB)
MAX_LINE_BYTES = 16 * 2**20
#: the deepest nesting of arrays and objects accepted (a game record nests 4 levels)
MAX_DEPTH = 64
#: names and other text from files are shown cut to this many characters
DISPLAY_LIMIT = 64

_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
# C0 and C1 controls, DEL, zero-width and bidirectional format characters, line and
# paragraph separators, the byte-order mark, and lone surrogates (which cannot be printed)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")


def nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in JSON ``text`` (0 for a scalar), counted on the
    text with its strings removed; linear in the length, with no recursion."""
    marks = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    if not marks:
        return 0
    opens = np.frombuffer(marks.encode("ascii"), dtype=np.uint8)
    steps = ((opens == 0x5B) | (opens == 0x7B)).astype(np.int8) * 2 - 1
    return int(np.cumsum(steps, dtype=np.int32).max())


def loads(text: str | bytes, where: str, *, max_bytes: int = MAX_LINE_BYTES, max_depth: int = MAX_DEPTH,
          expected: str = "JSON"):
    """Parse JSON from an untrusted source, or raise a one-line :class:`UserError` that starts
    with ``where`` (a file and line) and ends saying what was ``expected``."""
    if len(text) > max_bytes:
        raise UserError(f"{where}: {len(text):,} bytes, over the limit of {max_bytes:,}: expected {expected}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise UserError(f"{where}: not UTF-8 text (byte {e.start}): expected {expected}") from None
    depth = nesting_depth(text)
    if depth > max_depth:
        raise UserError(f"{where}: arrays or objects nested {depth:,} deep, over the limit of {max_depth}: "
                        f"expected {expected}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{where}: not JSON ({e.msg} at column {e.colno}): expected {expected}") from None
    except ValueError as e:        # e.g. an integer of more digits than Python converts
        raise UserError(f"{where}: not usable JSON ({preview(str(e), 120)}): expected {expected}") from None


def display_text(text, limit: int = DISPLAY_LIMIT) -> str:
    """``text`` fit to show a person on one line: cut to ``limit`` characters (the cut marked
    with ``...``) and every control character replaced with ``?``."""
    s = str(text)
    if len(s) > limit:
        s = s[:max(1, limit - 3)] + "..."
    return _CONTROL.sub("?", s)


def display_names(names) -> list[str]:
    """Seat names from a file, each as :func:`display_text` shows it."""
    return [display_text(n) for n in names]


def preview(value, limit: int = 60) -> str:
    """A value from a file quoted in an error message: its repr (which escapes control
    characters), cut to ``limit`` characters. Long containers are not rendered whole."""
    if isinstance(value, (list, dict)) and len(value) > limit:
        return f"a {type(value).__name__} of {len(value):,} items"
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
