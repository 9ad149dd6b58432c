"""The bounds of ``kc-sim serve`` and the headers every answer carries, in one place.

A server a person starts on their own machine can still be reached by any page their browser
opens, and by anyone on the network when told to listen there; so every request is bounded:
its body (:data:`MAX_BODY_BYTES`, checked while it is read, before it is parsed), the games
open at once and per client, how long an untouched game lives, and the player's name (cut,
cleaned of control characters, and kept to letters, digits and a few marks). The page is
served with a Content-Security-Policy that allows its own script and style files only.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass

from kc_sim.picture.svg import SVG_CSS

__all__ = ["Limits", "MAX_BODY_BYTES", "clean_name", "SECURITY_HEADERS", "BodyLimit", "SecurityHeaders", "HUMAN"]

#: the name of the person's seat in records when they give none
HUMAN = "human"
#: the largest request body read (a create or an action is under 1 kB)
MAX_BODY_BYTES = 8 * 1024
#: the longest player name kept
NAME_LIMIT = 24

_NAME_KEEP = re.compile(r"[^\w .'-]+", re.UNICODE)

def _style_hash(text: str) -> str:
    """The CSP source that allows one inline ``<style>`` element whose text is ``text``, and
    no other (its SHA-256, base64)."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


#: sent with every answer: only the server's own files run and style the page, plus the one
#: style element of the board's SVG (kc_sim.picture.svg, by its hash); no framing
SECURITY_HEADERS = {
    "content-security-policy": (f"default-src 'none'; script-src 'self'; style-src 'self' {_style_hash(SVG_CSS)}; "
                                "img-src 'self' data:; "
                                "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


@dataclass(frozen=True)
class Limits:
    """How many games may be open at once (all clients, and per client address), after how
    many seconds untouched a game is dropped, and at most how many worlds the analysis of a
    finished round spends per decision (:mod:`kc_sim.serve.review`)."""

    max_games: int = 200
    max_games_per_client: int = 20
    idle_seconds: float = 30 * 60
    analysis_budget: int = 128


def clean_name(text, reserved=()) -> str:
    """The player's name as stored in records: letters, digits, spaces and ``.'-_`` only,
    spaces collapsed, cut to :data:`NAME_LIMIT` characters; ``human`` when nothing is left.
    A name that is one of ``reserved`` (the agents' names) gets ``human-`` in front, so a
    record never passes a person off as an agent."""
    s = " ".join(_NAME_KEEP.sub(" ", str(text or "")).split())[:NAME_LIMIT].strip()
    if not s:
        return HUMAN
    if s.lower() in {r.lower() for r in reserved}:
        s = f"{HUMAN}-{s}"
    return s


class BodyLimit:
    """ASGI middleware: a request whose body is over ``limit`` bytes is answered 413 with a
    one-line JSON error before any of it is read. A body must declare its length: a chunked
    body (no Content-Length) is answered 411, so the length is known before reading, and the
    HTTP parser holds the body to the length declared."""

    def __init__(self, app, limit: int = MAX_BODY_BYTES):
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is None:
            if b"transfer-encoding" in headers:
                return await _json_error(send, 411, "a request body must declare its Content-Length")
            return await self.app(scope, receive, send)
        try:
            size = int(declared)
        except ValueError:
            return await _json_error(send, 400, "bad Content-Length header")
        if size > self.limit:
            return await _json_error(send, 413, f"request body of {size} bytes, over the limit of {self.limit}")
        return await self.app(scope, receive, send)


async def _json_error(send, status: int, message: str) -> None:
    """Answer with ``{"error": message}`` and the security headers, from raw ASGI."""
    import json

    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class SecurityHeaders:
    """ASGI middleware: :data:`SECURITY_HEADERS` on every answer (the page, the API, errors)."""

    def __init__(self, app):
        self.app = app
        self.extra = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(msg):
            if msg["type"] == "http.response.start":
                names = {k.lower() for k, _ in msg.get("headers") or []}
                msg = dict(msg, headers=list(msg.get("headers") or []) + [h for h in self.extra if h[0] not in names])
            await send(msg)

        await self.app(scope, receive, with_headers)
