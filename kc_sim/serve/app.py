"""The ASGI app of ``kc-sim serve`` (FastAPI): the JSON API under ``/api``, which the page
itself uses and any client can (its OpenAPI schema at ``/api/openapi.json``), and the page
(``/``, its scripts and style under ``/static/``, files of this package: nothing from
elsewhere; ``replay.js`` is the replay viewer of :mod:`kc_sim.picture.replay_page`).

Every answer to a bad request is a 4xx with a one-line JSON body ``{"error": "..."}``: bad
JSON or fields (422), a bad action or rule text (400), an unknown game (404), an action out
of turn or not legal now (409), a body too large (413), too many games (429). An error of
the server itself (an agent that breaks the rules or raises) is a 500 with the same one-line
body; no answer carries a traceback.
No request loads a file, a model or an agent: the agents are those loaded when the server
started, offered by name.
"""

from __future__ import annotations

import importlib.resources
import logging
import secrets
import threading
from typing import Literal, Optional

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.picture.replay_page import PAGE_CSS, replay_script
from kc_sim.serve.games import GameTable, NoSuchGame, TooMany
from kc_sim.serve.limits import MAX_BODY_BYTES, BodyLimit, Limits, SecurityHeaders, clean_name
from kc_sim.serve.review import analysis_of
from kc_sim.serve.session import ANALYSIS, LENGTHS, AgentFailed, Illegal, NotNow, TableGame, match_rule
from kc_sim.serve.storage import RecordStore

__all__ = ["create_app"]

log = logging.getLogger("kc_sim.serve")

_STATUS = [(AgentFailed, 500), (NoSuchGame, 404), (TooMany, 429), (NotNow, 409), (Illegal, 409), (UserError, 400)]


class NewGame(BaseModel):
    """A game to open: 1-3 opponents among those offered, rule text, length, optional seed and name."""

    model_config = ConfigDict(extra="forbid")
    opponents: list[str] = Field(min_length=1, max_length=3, description="agent names, among /api/config's agents")
    rules: str = Field("classic", max_length=200, description="rule text, e.g. classic or draw=start")
    length: Literal["1", "3", "5", "to_25"] = Field("1", description="rounds in the match, or to 25 penalty points")
    seed: Optional[int] = Field(None, ge=0, lt=2**31, description="deal seed (default: a random one)")
    name: Optional[str] = Field(None, max_length=100, description="the player's name in the records")


class Action(BaseModel):
    """One action in record text."""

    model_config = ConfigDict(extra="forbid")
    action: str = Field(max_length=16, description="7H>E places a card, N>E moves a whole side pile, stop ends the turn")


def _one_line(text) -> str:
    return " ".join(str(text).split())[:300]


def _validation_text(exc: RequestValidationError) -> str:
    """The first validation error as one line: where, and what is wrong."""
    errs = exc.errors()
    if not errs:
        return "bad request"
    e = errs[0]
    if e.get("type") == "json_invalid":
        return "bad request: the body is not valid JSON"
    where = ".".join(str(p) for p in e.get("loc", ()) if p != "body") or "body"
    more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
    return f"bad request: {where}: {e.get('msg', 'invalid')}{more}"


def _page(name: str) -> str:
    return importlib.resources.files("kc_sim.serve").joinpath("page", name).read_text(encoding="utf-8")


def create_app(agents: dict, store: RecordStore, limits: Limits = Limits()):
    """The ASGI app (FastAPI inside the body-size and security-header middleware) offering ``agents`` (name -> AgentSpec, loaded by the caller), keeping finished
    rounds in ``store``, within ``limits``."""
    app = FastAPI(title="kc-sim serve", version="1", openapi_url="/api/openapi.json", docs_url=None,
                  redoc_url=None, telemetry={"tracing": False, "metrics": False, "logs": False},
                  description="Play Kings in the Corner against kc-sim's agents (docs/serve.md).")
    table = GameTable(limits)
    app.state.table, app.state.store = table, store
    _error_answers(app)
    _api(app, agents, store, limits, table)
    _page_routes(app)
    return BodyLimit(SecurityHeaders(app))


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": _one_line(message)}, status_code=status)


def _error_answers(app: FastAPI) -> None:
    """Every error as a one-line JSON answer with its 4xx (or, for a bug, 500) status."""
    error = _error

    @app.exception_handler(RequestValidationError)
    async def _bad_fields(request, exc):
        return error(422, _validation_text(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request, exc):
        text = exc.detail if exc.status_code != 404 else f"not found: {request.url.path[:80]}"
        return error(exc.status_code, text)

    @app.exception_handler(UserError)
    async def _user(request, exc):
        status = next(code for kind, code in _STATUS if isinstance(exc, kind))
        return error(status, str(exc))

    @app.exception_handler(Exception)
    async def _bug(request, exc):
        log.error("kc-sim serve: %s on %s: %s", type(exc).__name__, request.url.path, _one_line(exc))
        return error(500, f"the server failed on this request ({type(exc).__name__}); the game may go on")


def timed(response: Response, game) -> None:
    """The agents' thinking during this request, as a Server-Timing header (what a load test
    takes out of a person's wait)."""
    response.headers["server-timing"] = f"agents;dur={game.agent_seconds * 1000:.2f}"
    game.agent_seconds = 0.0


def state(gid: str, game, svg: bool) -> dict:
    """The answer that carries a game: its id and the person's view."""
    return {"game": gid, **game.view(svg=svg)}


def _api(app: FastAPI, agents: dict, store: RecordStore, limits: Limits, table: GameTable) -> None:
    """The routes under /api."""
    offered = {name.lower(): (name, spec) for name, spec in agents.items()}
    reserved = set(agents) | {spec.name for spec in agents.values()}
    analysing = threading.Lock()           # one analysis at a time: each takes seconds of a core

    @app.get("/api/config", summary="what the server offers")
    def config():
        return {"agents": [{"name": name, "description": spec.description} for name, spec in agents.items()],
                "lengths": list(LENGTHS), "rules": "classic", "max_opponents": 3, "analysis": ANALYSIS,
                "limits": {"max_games": limits.max_games, "max_games_per_client": limits.max_games_per_client,
                           "idle_seconds": limits.idle_seconds, "max_body_bytes": MAX_BODY_BYTES}}

    @app.post("/api/games", status_code=201, summary="open a game")
    def new_game(body: NewGame, request: Request, response: Response, svg: bool = False):
        client = request.client.host if request.client else "?"
        specs = []
        for name in body.opponents:
            hit = offered.get(str(name).strip().lower())
            if hit is None:
                raise UserError(f"agent {_one_line(name)[:40]!r} is not offered here: choose among "
                                f"{', '.join(agents)}")
            specs.append(hit[1])
        rules = match_rule(parse_rules(body.rules), body.length)
        rules.check_players(len(specs) + 1)
        table.reserve(client)
        seed = body.seed if body.seed is not None else secrets.randbits(31)
        game = TableGame(clean_name(body.name, reserved), specs, rules, seed, tag=secrets.token_hex(6),
                         length=body.length, on_round=_saver(store))
        gid = table.add(client, game)
        with game.lock:
            timed(response, game)
            return state(gid, game, svg)

    @app.get("/api/games/{gid}", summary="the game as your seat may see it")
    def get_game(gid: str, svg: bool = False):
        game = table.get(gid)
        with game.lock:
            return state(gid, game, svg)

    @app.post("/api/games/{gid}/actions", summary="play one action (record text)")
    def play(gid: str, body: Action, response: Response, svg: bool = False):
        game = table.get(gid)
        with game.lock:
            try:
                game.play(body.action.strip())
            finally:
                timed(response, game)
            return state(gid, game, svg)

    @app.post("/api/games/{gid}/next", summary="deal the next round of the match")
    def next_round(gid: str, response: Response, svg: bool = False):
        game = table.get(gid)
        with game.lock:
            game.next_round()
            timed(response, game)
            return state(gid, game, svg)

    @app.get("/api/games/{gid}/rounds/{k}", summary="a finished round's record (kc-sim/game/1)")
    def round_record(gid: str, k: int):
        game = table.get(gid)
        with game.lock:
            if not 0 <= k < len(game.records):
                raise NoSuchGame(f"round {k} is not finished: this game has {len(game.records)} finished "
                                 f"round(s), numbered from 0")
            return game.records[k]

    @app.get("/api/games/{gid}/rounds/{k}/analysis", summary="a finished round's analysis: your decisions judged")
    def round_analysis(gid: str, k: int):
        return {"round": k, **analysis_of(table.get(gid), k, round_record(gid, k), analysing,
                                            limits.analysis_budget)}

    @app.delete("/api/games/{gid}", summary="end a game")
    def end_game(gid: str):
        table.remove(gid)
        return {"game": gid, "ended": True}


def _page_routes(app: FastAPI) -> None:
    """The page and its files, read from this package once: the replay viewer's script and
    style are the replay page's (kc_sim/picture/replay.js), so both pages draw a judged round
    the same way."""
    page = {"index.html": _page("index.html"), "app.js": _page("app.js"), "replay.js": replay_script(),
            "app.css": PAGE_CSS + _page("app.css")}

    @app.get("/", include_in_schema=False)
    def index():
        return Response(page["index.html"], media_type="text/html; charset=utf-8")

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str):
        if name not in ("app.js", "replay.js", "app.css"):
            raise StarletteHTTPException(404)
        kind = "text/javascript" if name.endswith(".js") else "text/css"
        return PlainTextResponse(page[name], media_type=f"{kind}; charset=utf-8")


def _saver(store: RecordStore):
    """The game's ``on_round``: append the record; None when saved, else why not."""
    def save(record: dict):
        try:
            store.append(record)
        except UserError as e:
            log.error("kc-sim serve: %s", e)
            return str(e)
        return None
    return save

