"""``kc-sim serve``'s command line: bad input is one line and exit 2, before anything listens;
a host that is not this machine's only is named as such; the player's name is cleaned."""

import socket
import subprocess
import sys

import pytest

from kc_sim.cli.serve import loopback
from kc_sim.serve.limits import clean_name


def kc_sim(*args):
    return subprocess.run([sys.executable, "-m", "kc_sim.cli", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args,says", [
    (["--port", "99999"], "bad --port 99999"),
    (["--agents", "nosuch"], "unknown agent 'nosuch'"),
    (["--agents", "greedy,human"], "'human' is the person at the page"),
    (["--max-games", "0"], "bad --max-games"),
])
def test_bad_options_are_one_line_and_exit_2(args, says, tmp_path):
    r = kc_sim("serve", "--data", str(tmp_path / "d"), *args)
    assert r.returncode == 2 and r.stderr.startswith("kc-sim: error: ") and says in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_a_port_in_use_and_a_data_file_are_refused(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        r = kc_sim("serve", "--port", str(s.getsockname()[1]), "--agents", "random", "--data", str(tmp_path / "d"))
    assert r.returncode == 2 and "the port is in use" in r.stderr
    (tmp_path / "f").write_text("")
    r = kc_sim("serve", "--agents", "random", "--data", str(tmp_path / "f"))
    assert r.returncode == 2 and "--data" in r.stderr and r.stderr.count("\n") == 1


def test_loopback_hosts():
    assert all(loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(loopback(h) for h in ("0.0.0.0", "::", "192.168.1.5", "example.org"))


def test_player_names_are_cleaned():
    assert clean_name(None) == clean_name("  ") == clean_name("<>;") == "human"
    assert clean_name("<script>alert(1)</script>") == "script alert 1 script"
    assert clean_name("Ada\x1b[31m Lovelace\u202e") == "Ada 31m Lovelace"
    assert clean_name("greedy", reserved=["greedy"]) == "human-greedy"
    assert len(clean_name("x" * 500)) == 24
    assert clean_name("Zoë O'Neil-Smith") == "Zoë O'Neil-Smith"


def test_another_host_is_served_with_a_warning(tmp_path):
    """--host 0.0.0.0 (every interface): one warning line naming the host and the way back to
    this machine only; the page and the API still answer (asked over 127.0.0.1 only)."""
    import httpx

    from kc_sim.serve.loadtest import start_server, stop_server

    proc, base = start_server(tmp_path / "d", agents="random", extra=["--host", "0.0.0.0"])
    try:
        port = base.rstrip("/").rsplit(":", 1)[1]
        assert base.startswith("http://0.0.0.0:")
        with httpx.Client(timeout=60) as c:
            assert c.get(f"http://127.0.0.1:{port}/").status_code == 200
            r = c.post(f"http://127.0.0.1:{port}/api/games", json={"opponents": ["random"], "seed": 1})
            assert r.status_code in (200, 201) and r.json()["game"]
    finally:
        stop_server(proc)
    err = proc.stderr.read()
    warned = [x for x in err.splitlines() if "warning" in x]
    assert len(warned) == 1 and "0.0.0.0" in warned[0] and "--host 127.0.0.1" in warned[0], err
    assert "Traceback" not in err
