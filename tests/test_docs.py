"""The project's own documentation (docs/rules.md, docs/formats.md) stays complete and
self-contained: every rule switch and value, every round column, no citation of files
outside the project, no broken relative link, no "where" line naming code that is gone."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from kc_sim.game import rules as R

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RULES_DOC = DOCS / "rules.md"
FORMATS_DOC = DOCS / "formats.md"

# Built from pieces so that this file does not itself contain the strings it looks for.
FORBIDDEN = ("RULES" + ".md", "FORMATS" + ".md", "/work/" + "shared", "../" + "shared")
SCANNED = ("kc_sim", "agents", "tests")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _code_words(doc: str) -> set[str]:
    """Every `backticked` item of a page, and each comma/space/equals-separated piece of it."""
    out = set()
    for item in re.findall(r"`([^`\n]+)`", doc):
        out.add(item)
        out.update(x for x in re.split(r"[\s,=]+", item) if x)
    return out


# --- rules.md: every switch and every value --------------------------------------------------

def _switch_values() -> dict[str, list[str]]:
    """The allowed values of every RuleSet field, as kc_sim.game.rules spells them."""
    values = {
        "draw": list(R.DRAW),
        "layout_kings": list(R.LAYOUT_KINGS),
        "scoring": list(R.SCORING),
        "king_on_empty_side": ["true", "false"],
        "must_play_kings": ["true", "false"],
        "decks": ["1", "2"],
        "match": [v.strip().split(" ")[0] for v in R.MATCH_HELP.split(",")],
    }
    fields = [f.name for f in dataclasses.fields(R.RuleSet)]
    assert sorted(values) == sorted(fields), "a RuleSet switch is missing from this test's table"
    for name, allowed in values.items():
        for v in allowed:   # each value really is accepted
            R.parse_rules(f"{name}={v.replace(':N', ':3')}")
    return values


def test_every_rule_field_is_documented():
    words = _code_words(_text(RULES_DOC))
    missing = [f.name for f in dataclasses.fields(R.RuleSet) if f.name not in words]
    assert not missing, f"docs/rules.md does not name the switches {missing}"


@pytest.mark.parametrize("switch", sorted(_switch_values()))
def test_every_value_of_each_switch_is_documented(switch):
    doc = _text(RULES_DOC)
    words = _code_words(doc)
    missing = [v for v in _switch_values()[switch] if v not in words]
    assert not missing, f"docs/rules.md does not give the values {missing} of {switch}"
    # and the switch's own table row lists them
    row = next((line for line in doc.splitlines() if line.startswith(f"| `{switch}` |")), None)
    assert row is not None, f"docs/rules.md has no table row for `{switch}`"
    assert all(f"`{v}`" in row or f"`{v}" in row for v in _switch_values()[switch]), row


def test_presets_are_documented_with_their_switches():
    doc = _text(RULES_DOC)
    for name, changes in R.PRESETS.items():
        assert f"`{name}`" in doc
        spelled = ",".join(f"{k}={str(v).lower()}" for k, v in changes.items())
        assert not changes or spelled in doc, f"preset {name} = {spelled} is not spelled out in docs/rules.md"
    assert R.RuleSet().spec() in doc, "the canonical classic spec is not in docs/rules.md"


def test_rules_doc_has_its_required_sections():
    doc = _text(RULES_DOC)
    for heading in ("## Worked examples", "## Readings kc-sim fixed", "## Drawing", "## The match"):
        assert heading in doc
    for n in range(1, 10):
        assert re.search(rf"^### {n}\. ", doc, flags=re.M), f"worked example {n} is missing"


# --- formats.md: every round column ------------------------------------------------------------

@pytest.fixture(scope="module")
def round_schema(tmp_path_factory):
    import pyarrow.parquet as pq

    from kc_sim.runs import RunReader
    from kc_sim.tournament.run import run_tournament

    out = tmp_path_factory.mktemp("docs") / "r"
    run_tournament(["random", "greedy"], rounds=200, jobs=1, quiet=True, out=out)
    files = RunReader(out).parts()
    assert files
    return pq.read_schema(files[0])


def _doc_column(name: str) -> str:
    """``agent_0`` is documented as ``agent_<s>`` (a seat), ``win_rate_pos_1`` as
    ``win_rate_pos_<p>`` (a position in turn order)."""
    return re.sub(r"_\d+$", "_<s>", re.sub(r"_pos_\d+$", "_pos_<p>", name))


def test_every_round_column_is_documented(round_schema):
    words = _code_words(_text(FORMATS_DOC))
    missing = [c for c in round_schema.names if _doc_column(c) not in words]
    assert not missing, f"docs/formats.md does not describe the round columns {missing}"


def test_round_columns_are_in_the_rounds_table(round_schema):
    doc = _text(FORMATS_DOC)
    section = doc.split("## `rounds/` parts", 1)[1].split("\n## ", 1)[0]
    for c in round_schema.names:
        assert f"| `{_doc_column(c)}` |" in section, f"no row for {c} in the rounds/ table"


def test_tally_metadata_key_and_fields_are_documented(round_schema):
    import json

    from kc_sim.stats import Tally
    from kc_sim.runs.schema import TALLY_KEY

    doc = _text(FORMATS_DOC)
    meta = round_schema.metadata or {}
    assert TALLY_KEY.encode() in meta
    assert f"`{TALLY_KEY}`" in doc
    words = _code_words(doc)
    stored = json.loads(meta[TALLY_KEY.encode()])
    fields = [*stored, *stored["sums"], *next(iter(stored["sums"].values())),
              *(v for s in Tally(2, 2).sums.values() for v in ("N", *s.values))]
    missing = [f for f in fields if f not in words]
    assert not missing, f"docs/formats.md does not describe the tally fields {missing}"


def test_record_fields_and_format_name_are_documented():
    from kc_sim.records.check import REQUIRED, RULE_SWITCHES
    from kc_sim.records.format import FORMAT
    from kc_sim.runs import FORMAT as RUN_FORMAT

    doc = _text(FORMATS_DOC)
    words = _code_words(doc)
    assert FORMAT in doc and RUN_FORMAT in doc
    # a format named as the current one is the current one (older ones are named as older)
    for page in (FORMATS_DOC, ROOT / "README.md"):
        for name in re.findall(r"kc-sim/tournament/\d+", _text(page)):
            context = _text(page).split(name, 1)[0][-80:] + name + _text(page).split(name, 1)[1][:80]
            assert name == RUN_FORMAT or "format 1" in context or "older" in context, (page.name, context)
    missing = [f for f in (*REQUIRED, *RULE_SWITCHES) if f not in words]
    assert not missing, f"docs/formats.md does not describe the record fields {missing}"


def test_action_examples_in_formats_are_right():
    from kc_sim.game.actions import parse_action

    doc = _text(FORMATS_DOC)
    line = next(x for x in doc.split("\n\n") if x.startswith("Examples: `AC>N`")).replace("\n", " ")
    pairs = re.findall(r"`([^`]+)` is (?:[\d *+]+= )?(\d+)", line)
    assert len(pairs) >= 6
    for text, number in pairs:
        assert parse_action(text) == int(number), (text, number)


# --- no citation of files outside the project ------------------------------------------------

def _allowed(line: str, needle: str) -> bool:
    """A line that asserts the string is absent (``"..." not in source``) is a guard, not a citation."""
    return bool(re.search(re.escape(needle) + r"""["'] not in """, line))


def test_no_file_cites_documents_outside_the_project():
    hits = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for n, line in enumerate(text.splitlines(), start=1):
                for needle in FORBIDDEN:
                    if needle in line and not _allowed(line, needle):
                        hits.append(f"{path.relative_to(ROOT)}:{n}: {needle}")
    assert not hits, "files citing documents outside the project:\n" + "\n".join(hits)


def test_readme_and_docs_cite_the_project_docs():
    readme = _text(ROOT / "README.md")
    for needle in FORBIDDEN[:2]:
        assert needle not in readme
        for doc in DOCS.glob("*.md"):
            assert needle not in _text(doc), doc
    assert "(docs/rules.md)" in readme and "(docs/formats.md)" in readme


# --- links ---------------------------------------------------------------------------------------

LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(md: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", _text(md), flags=re.S)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def _links(md: Path):
    text = re.sub(r"```.*?```", "", _text(md), flags=re.S)   # code blocks hold no links
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue                                              # http(s), mailto, in-page
        yield target


MARKDOWN = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("md", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_existing_files(md):
    bad = []
    for target in _links(md):
        path, _, anchor = target.partition("#")
        dest = (md.parent / path).resolve()
        if not dest.exists():
            bad.append(target)
        elif anchor and dest.parent == DOCS and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(target)                                    # anchors into docs/ are checked too
    assert not bad, f"{md.name}: broken links {bad}"


@pytest.mark.parametrize("md", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_in_page_anchors_of_docs_exist(md):
    anchors = _anchors(md)
    text = re.sub(r"```.*?```", "", _text(md), flags=re.S)
    bad = [t for t in LINK.findall(text) if t.startswith("#") and t[1:] not in anchors]
    assert not bad, f"{md.name}: links to missing sections {bad}"


# --- "where" lines name code that exists -----------------------------------------------------

@pytest.mark.parametrize("md", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_where_lines_name_existing_modules_and_names(md):
    text = _text(md)
    blocks = re.findall(r"\*\*where:\*\*(.*?)(?:\n\n|\Z)", text, flags=re.S)
    assert blocks, f"{md.name} has no where lines"
    bad = []
    for block in blocks:
        # `path/to/module.py` (`name`, `Class.method`, ...) ...
        for m in re.finditer(r"`([\w/]+\.py)`(?:\s*\(([^)]*)\))?", block):
            module = ROOT / m.group(1)
            if not module.exists():
                bad.append(m.group(1))
                continue
            source = _text(module)
            for name in re.findall(r"`([A-Za-z_][\w.]*)`", m.group(2) or ""):
                for part in name.split("."):
                    if not re.search(rf"\b{re.escape(part)}\b", source):
                        bad.append(f"{m.group(1)}: {name}")
    assert not bad, f"{md.name}: where lines name missing code {bad}"


def test_summary_columns_are_documented(tmp_path):
    from kc_sim.runs import read_summary
    from kc_sim.tournament.run import run_tournament

    out = tmp_path / "s"
    run_tournament(["random", "greedy", "merger"], players=3, matches=6, rules="match=rounds:2", rounds=None,
                   jobs=1, quiet=True, out=out)
    section = _text(FORMATS_DOC).split("## `summary.parquet`", 1)[1].split("\n## ", 1)[0]
    words = _code_words(section)
    missing = [c for c in read_summary(out).columns if _doc_column(c) not in words]
    assert not missing, f"docs/formats.md does not describe the summary columns {missing}"
