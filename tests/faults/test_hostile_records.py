"""Hostile game records through ``check``, ``replay`` (in a pseudo-terminal), ``replay --html``
and ``render``, run as real ``kc-sim`` processes: deep nesting, lines and names too long for
memory, script and comment openers, terminal escapes, line separators and lone surrogates,
numbers too long to convert. Each ends in one line and exit 2, or in a correct result whose
output holds the name only as text: cut to 64 characters, without control characters.

The browser side (the page still works with such a name, in a replay page and in a report)
is in tests/ui/test_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pexpect
import pytest

from kc_sim.records.untrusted import MAX_LINE_BYTES
from tests.faults.hostile import KC, kc, one_line_error

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[H\r\nkc-sim: forged line\u2028\u202e"
READERS = {
    "check": ["check", "{f}"],
    "replay": ["replay", "{f}", "--no-pause"],
    "replay --html": ["replay", "{f}", "--html", "{tmp}/page.html"],
    "render": ["render", "{f}", "-o", "{tmp}/pos.svg"],
}


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> dict:
    """One real game record (2 players), as a dict to change."""
    d = tmp_path_factory.mktemp("rec")
    r = kc("record", "--rounds", "1", "--seed", "5", "-o", d / "r.jsonl")
    assert r.returncode == 0, r.stderr
    return json.loads((d / "r.jsonl").read_text())


def write(path, *lines) -> str:
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return str(path)


def run(reader: str, f, tmp_path):
    return kc(*[a.format(f=f, tmp=tmp_path) for a in READERS[reader]])


@pytest.mark.parametrize("reader", ["check", "replay --html"])      # replay and render: the 200 MB name below
def test_a_line_over_the_limit_is_one_line(tmp_path, reader):
    f = write(tmp_path / "long.jsonl", '{"players": ["' + "x" * (MAX_LINE_BYTES + 10) + '"]}')
    one_line_error(run(reader, f, tmp_path), ":1:", "over 16,777,216", "one game record per line")


@pytest.mark.parametrize("reader", ["check", "render"])      # 100,000 deep in all four: tests/faults/test_outputs.py
def test_deep_nesting_inside_a_record_is_one_line(tmp_path, record, reader):
    text = json.dumps(record)
    f = write(tmp_path / "deep.jsonl", text[:-1] + ', "extra": ' + "[" * 50_000 + "]" * 50_000 + "}")
    one_line_error(run(reader, f, tmp_path), "nested 50,001 deep", "over the limit of 64")


@pytest.mark.parametrize("field,value,says", [
    ("seed", "9" * 5000, "not usable JSON"),                       # json cannot convert 5,000 digits
    ("seed", '"' + "s" * 1_000_000 + '"', "field seed: got 'sss"),
    ("players", '[{"a": 1}, "random"]', "expected a list of agent names"),
    ("hands", '[["' + "7H" * 500_000 + '"], []]', "expected a card text"),
])
def test_malformed_fields_are_short_one_line_errors(tmp_path, record, field, value, says):
    text = json.dumps(record)
    text = re.sub(f'"{field}": ' + r'(\d+|\[\[.*?\]\]|\[.*?\])', lambda m: f'"{field}": {value}', text, count=1)
    f = write(tmp_path / "bad.jsonl", text)
    for reader in ("check", "render") if field == "seed" else ("check",):
        err = one_line_error(run(reader, f, tmp_path), says)
        assert len(err) < 400, len(err)


def _peak_rss(args) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``kc-sim ARGS`` from a small Python parent; returns its result and the child's peak RSS in MB."""
    code = ("import json, resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "print(json.dumps([r.returncode, r.stdout, r.stderr, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))")
    out = subprocess.run([sys.executable, "-c", code, *KC, *map(str, args)], capture_output=True, text=True,
                         timeout=300)
    rc, stdout, stderr, peak = json.loads(out.stdout)
    return subprocess.CompletedProcess(args, rc, stdout, stderr), peak


@pytest.fixture(scope="module")
def huge_name(tmp_path_factory, record):
    """A record whose first seat name is 200 MB."""
    big = tmp_path_factory.mktemp("huge") / "big.jsonl"
    head, tail = json.dumps(record).split('"players": [', 1)
    with open(big, "w") as f:
        f.write(head + '"players": ["')
        for _ in range(200):
            f.write("N" * 2**20)
        f.write('", ' + tail.split(", ", 1)[1] + "\n")
    yield big
    big.unlink()


@pytest.mark.parametrize("reader", ["replay", "render"])
def test_a_200_mb_name_does_not_exhaust_memory(tmp_path, huge_name, reader):
    r, peak = _peak_rss([a.format(f=huge_name, tmp=tmp_path) for a in READERS[reader]])
    one_line_error(r, "over 16,777,216")
    assert peak < 600, f"peak RSS {peak:.0f} MB"


def test_a_5_mb_name_makes_a_small_page(tmp_path, record):
    f = write(tmp_path / "five.jsonl", record | {"players": ["A" * 5_000_000, "random"]})
    r = run("replay --html", f, tmp_path)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "page.html").read_text()
    assert len(page) < 300_000, len(page)
    assert "A" * 61 + "..." in page and "A" * 65 not in page
    r = run("render", f, tmp_path)
    assert r.returncode == 0 and len(r.stdout) < 300
    assert (tmp_path / "pos.svg").stat().st_size < 50_000


@pytest.mark.parametrize("name", ["<!--<script>", "</script><script>alert(1)</script>", "]]>&amp;<![CDATA[",
                                  ESCAPES, "\ud800 lone surrogate"])
def test_names_stay_text_in_the_page_and_the_picture(tmp_path, record, name):
    f = write(tmp_path / "names.jsonl", record | {"players": [name, "random"]})
    r = run("replay --html", f, tmp_path)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    doc = re.search(r'<script type="application/json" data-role="doc">(.*?)</script>', page, re.S).group(1)
    assert not set("<>&") & set(doc)                               # nothing can end or comment out the script
    assert json.loads(doc)["names"][0] == name.translate({c: "?" for c in range(32)} | {0x2028: "?", 0x202E: "?",
                                                                                         0xD800: "?"})
    assert "\x1b" not in page and "\x07" not in page
    if name not in (ESCAPES, "<!--<script>"):
        return
    r = run("render", f, tmp_path)
    assert r.returncode == 0, r.stderr
    svg = (tmp_path / "pos.svg").read_text(encoding="utf-8")
    assert "<script" not in svg and "<!--" not in svg and "\x1b" not in svg
    import xml.dom.minidom
    xml.dom.minidom.parseString(svg.encode())                       # still well-formed XML


def test_terminal_escapes_never_reach_the_terminal(tmp_path, record):
    """In a real terminal (a pty) ``replay`` and ``render`` print the names cleaned: no escape
    sequence, no bell, no carriage return or line of their own."""
    f = write(tmp_path / "esc.jsonl", record | {"players": [ESCAPES, "random"]})
    shown = "?]0;pwned??[2J?[H??kc-sim: forged line??"
    for args in (["replay", f, "--no-pause"], ["render", f, "-o", str(tmp_path / "p.svg")]):
        child = pexpect.spawn(KC[0], [*KC[1:], *args], encoding="utf-8", codec_errors="replace", timeout=120,
                              dimensions=(50, 200))
        out = child.read()
        child.close()
        assert child.exitstatus == 0, out[-2000:]
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\u2028" not in out
        lines = out.replace("\r\n", "\n").split("\n")
        assert "\r" not in out.replace("\r\n", "\n")
        assert not any(line.startswith("kc-sim: forged line") for line in lines)
        assert shown in out


def test_not_utf8_and_not_json_are_one_line(tmp_path):
    f = tmp_path / "bin.jsonl"
    f.write_bytes(b'{"format": "kc-sim/game/1", "players": ["\xff\xfe"]}\n')
    one_line_error(run("check", f, tmp_path), ":1:", "not UTF-8")
    f.write_bytes(b"{not json}\n")
    one_line_error(run("replay", f, tmp_path), ":1:", "not JSON")
