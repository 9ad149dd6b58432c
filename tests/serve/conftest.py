"""A real ``kc-sim serve`` process on 127.0.0.1 (a free port, its own data folder) for the
tests of this folder, driven over HTTP with httpx."""

import pytest

from kc_sim.serve.loadtest import start_server, stop_server


class Server:
    """A running server: its process, base url (ending in /) and data folder."""

    def __init__(self, data, agents="greedy,merger,random", extra=()):
        self.data, self.agents, self.extra = data, agents, list(extra)
        self.proc, self.base = start_server(data, agents=agents, extra=self.extra)

    @property
    def records(self):
        return self.data / "games.jsonl"

    def stop(self, sig=None):
        stop_server(self.proc, sig)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("serve") / "data")
    yield s
    s.stop()


@pytest.fixture()
def client():
    import httpx

    with httpx.Client(timeout=120) as c:
        yield c
