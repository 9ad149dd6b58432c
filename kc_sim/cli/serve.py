"""``kc-sim serve`` and ``kc-sim bench-serve`` (registered by ``kc_sim.cli.root``).

FastAPI, uvicorn and httpx (the ``serve`` extra) are imported only when a command runs, so
``kc-sim --help`` stays fast. Bad input raises :class:`~kc_sim.errors.UserError`: one line,
exit 2.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path
from typing import Annotated

import typer

from kc_sim.errors import UserError, os_error_text
from kc_sim.play.agents.names import parse_agent_list
from kc_sim.serve.limits import Limits

__all__ = ["serve", "bench_serve", "DEFAULT_AGENTS"]

DEFAULT_AGENTS = "greedy,merger,king-first,planner,sampler,random"
EXTRA_HELP = "kc-sim serve needs the serve extra: pip install -e '.[serve]' -c constraints.txt"


def _need_extra():
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise UserError(f"{EXTRA_HELP} ({e})") from None


def loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one), or a one-line UserError."""
    if not 0 <= port <= 65535:
        raise UserError(f"bad --port {port}: expected 0 to 65535 (0: any free port)")
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM,
                                                          flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as e:
        raise UserError(f"bad --host {host!r}: {e.strerror}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
        sock.listen(128)
    except OSError as e:
        sock.close()
        why = "the port is in use: choose another with --port" if e.errno == 98 else os_error_text(e)
        raise UserError(f"cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(True)
    return sock


def serve(
    host: Annotated[str, typer.Option("--host", help="address to listen on (default: this machine only)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port to listen on (0: any free port)")] = 8000,
    agents: Annotated[str, typer.Option(
        "--agents", help="the agents offered as opponents, comma-separated: built-in names or net:PATH.zip "
        "models, loaded once now (no request loads another)")] = DEFAULT_AGENTS,
    data: Annotated[Path, typer.Option(
        "--data", help="folder where every finished round is appended to games.jsonl (kc-sim/game/1)")]
        = Path("kc-sim-games"),
    open_browser: Annotated[bool, typer.Option("--open", help="open the page in the browser")] = False,
    max_games: Annotated[int, typer.Option("--max-games", help="most games open at once")] = 200,
    max_games_per_client: Annotated[int, typer.Option(
        "--max-games-per-client", help="most games open at once from one client address")] = 20,
    idle_minutes: Annotated[float, typer.Option(
        "--idle-minutes", help="a game untouched this long is dropped (its finished rounds stay saved)")] = 30.0,
    analysis_budget: Annotated[int, typer.Option(
        "--analysis-budget", help="most worlds per decision when a finished round is judged for the player "
        "(fewer: a quicker, rougher analysis)")] = Limits.analysis_budget,
):
    """Play Kings in the Corner against kc-sim's agents in a browser: a local web app with a
    JSON API under /api (docs/serve.md). Every finished round is saved as a game record."""
    from kc_sim.play.agents.registry import load_agent

    names = parse_agent_list(agents)
    if not names:
        raise UserError("bad --agents: name at least one agent")
    if max_games < 1 or max_games_per_client < 1 or idle_minutes <= 0:
        raise UserError("bad --max-games, --max-games-per-client or --idle-minutes: expected positive numbers")
    if not 1 <= analysis_budget <= 100_000:
        raise UserError(f"bad --analysis-budget {analysis_budget}: expected 1 to 100000 worlds")
    specs = {}
    for n in names:
        if n.lower() == "human":
            raise UserError("bad --agents: 'human' is the person at the page, not an agent to offer")
        specs[n] = load_agent(n)
    _need_extra()
    # lazy: the server's libraries and the compiled core load only when serving
    import uvicorn

    from kc_sim.game.rules import parse_rules
    from kc_sim.serve.app import create_app
    from kc_sim.serve.session import warm_up
    from kc_sim.serve.storage import RecordStore

    store = RecordStore(data)
    if store.torn:
        typer.echo(f"kc-sim serve: a torn last line of {store.path} was set aside in {store.path.name}.torn",
                   err=True)
    sock = bind(host, port)
    if not loopback(host):
        typer.echo(f"kc-sim serve: warning: listening on {host}, reachable from other machines; anyone who "
                   f"reaches it can play and fill {data}. Use --host 127.0.0.1 to keep it to this machine.", err=True)
    typer.echo(f"kc-sim serve: loading {', '.join(specs)}...")
    warm_up(list(specs.values()), parse_rules("classic"))
    app = create_app(specs, store, Limits(max_games=max_games, max_games_per_client=max_games_per_client,
                                                idle_seconds=idle_minutes * 60, analysis_budget=analysis_budget))
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    url = f"http://{shown}:{bound_port}/"
    typer.echo(f"kc-sim serve: play at {url} (API: {url}api/openapi.json); finished rounds go to {store.path}; "
               "Ctrl-C stops")
    sys.stdout.flush()
    if open_browser:
        import threading
        import webbrowser

        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                           timeout_graceful_shutdown=3))
    server.run(sockets=[sock])


def bench_serve(
    players: Annotated[int, typer.Option("--players", help="scripted players at once")] = 50,
    rounds: Annotated[int, typer.Option("--rounds", help="rounds each player completes: 1, 3 or 5")] = 1,
    agent: Annotated[str, typer.Option("--agent", help="the opponent of every scripted player")] = "greedy",
    minutes: Annotated[float, typer.Option("--minutes", help="stop after this long, whatever is left")] = 5.0,
):
    """Load-test kc-sim serve on 127.0.0.1: start a server on a free port, have PLAYERS scripted
    players complete ROUNDS rounds each through the API at once, and report the latency of a
    person's action (p50, p99) with the agents' thinking taken out, and any error."""
    if not 1 <= players <= 500 or rounds not in (1, 3, 5) or minutes <= 0:
        raise UserError("bad --players/--rounds/--minutes: expected 1-500 players, 1, 3 or 5 rounds, positive minutes")
    _need_extra()
    from kc_sim.serve.loadtest import run_load

    report = run_load(players=players, rounds=rounds, agent=agent, seconds=minutes * 60)
    for line in report.lines():
        typer.echo(line)
    if report.errors:
        raise typer.Exit(1)
