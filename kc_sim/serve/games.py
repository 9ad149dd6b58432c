"""The open games of a server, by unguessable id, within the bounds of
:class:`kc_sim.serve.limits.Limits`.

A game's id is the only key to it (``secrets.token_urlsafe``: 144 random bits), so nobody can
play or read another person's game without being given its id. Games live in memory: a
game untouched for ``idle_seconds`` is dropped, and a server that stops (or is killed) loses
its open games, never a finished round, which is on disk already
(:mod:`kc_sim.serve.storage`). Opening a game beyond the bounds (all clients, or one client
address) is refused with the reason; the client may end one of its games first.
"""

from __future__ import annotations

import secrets
import threading
import time

from kc_sim.errors import UserError
from kc_sim.serve.limits import Limits

__all__ = ["GameTable", "NoSuchGame", "TooMany"]


class NoSuchGame(UserError):
    """No open game has that id (never had, ended, expired, or the server restarted)."""


class TooMany(UserError):
    """Opening one more game would pass a bound."""


class GameTable:
    """Open games by id, with the client address that opened each."""

    def __init__(self, limits: Limits, clock=time.monotonic):
        self.limits = limits
        self.clock = clock
        self._games: dict[str, object] = {}
        self._owner: dict[str, str] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def _sweep(self) -> None:
        """Drop the games idle for longer than the limit (under the lock)."""
        now = self.clock()
        for gid in [g for g, game in self._games.items() if now - game.touched > self.limits.idle_seconds]:
            del self._games[gid]
            self._owner.pop(gid, None)

    def reserve(self, client: str) -> None:
        """Refuse (TooMany) if ``client`` may not open one more game now."""
        with self._lock:
            self._sweep()
            self._check(client)

    def _check(self, client: str) -> None:
        if len(self._games) >= self.limits.max_games:
            raise TooMany(f"the server has {len(self._games)} open games, its limit: try again later")
        mine = sum(1 for o in self._owner.values() if o == client)
        if mine >= self.limits.max_games_per_client:
            raise TooMany(f"you have {mine} open games, the limit per client: end one (DELETE /api/games/ID) "
                          f"or let it expire")

    def add(self, client: str, game) -> str:
        """Keep ``game`` (opened by ``client``) under a new id and return the id."""
        with self._lock:
            self._sweep()
            self._check(client)
            gid = secrets.token_urlsafe(18)
            game.touched = self.clock()
            self._games[gid] = game
            self._owner[gid] = client
            return gid

    def get(self, gid: str):
        """The open game ``gid``, touched now; NoSuchGame if there is none."""
        with self._lock:
            self._sweep()
            game = self._games.get(gid)
            if game is None:
                raise NoSuchGame("no open game with that id: it ended, expired after being left idle, "
                                 "or the server was restarted (finished rounds are saved); start a new game")
            game.touched = self.clock()
            return game

    def remove(self, gid: str) -> None:
        """End game ``gid`` (NoSuchGame if there is none)."""
        with self._lock:
            if self._games.pop(gid, None) is None:
                raise NoSuchGame("no open game with that id")
            self._owner.pop(gid, None)
