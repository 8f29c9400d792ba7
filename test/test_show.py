"""`anatid show`: the neighbourhood it gathers, the self-contained HTML and the SVG.

The fixture is a small story in 2090: Ada lives in London, then (at 50 s) in
Paris; Ada works with Babbage until 60 s; Babbage studied at Cambridge, which
is near Dora (three hops out); one Babbage memory is corrected, one Ada
memory forgotten; another tenant has its own Ada.
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from anatid import Anatid
from anatid.cli import main
from anatid.show import gather, render_html, render_svg
from conftest import at

SVG_NS = "{http://www.w3.org/2000/svg}"


def build_story(path) -> dict:
    """Write the fixture file; return the ids the tests look for."""
    with Anatid.open(str(path)) as db:
        london = db.remember("Ada lives in London", entities=["Ada"], now=at(0))
        db.relate("Ada", "Babbage", "works_with", now=at(10))
        db.relate("Babbage", "Cambridge", "studied_at", now=at(20))
        db.relate("Cambridge", "Dora", "near", now=at(25))
        engine = db.remember("Babbage designs the difference engine", entities=["Babbage"], now=at(30))
        program = db.remember("Ada writes the first program", entities=["Ada"], now=at(40))
        paris = db.supersede(london.memory_id, "Ada lives in Paris", entities=["Ada"], now=at(50))
        db.unrelate("Ada", "Babbage", now=at(60))
        db.update(engine.memory_id, "Babbage designs the analytical engine", expected_version=1, now=at(70))
        db.forget(program.memory_id, now=at(80))
        db.remember("Dora keeps bees", entities=["Dora"], now=at(90))
        edges = dict(db.connection.execute(
            "SELECT rel_kind, edge_id FROM anatid_edges WHERE kind = 'relates' AND tenant_id = 0").fetchall())
    with Anatid.open(str(path), tenant=7) as other:
        other.remember("tenant seven's secret about Ada", entities=["Ada"], now=at(95))
    return {"london": f"m:{london.memory_id}:1", "paris": f"m:{paris.memory_id}:1",
            "engine1": f"m:{engine.memory_id}:1", "engine2": f"m:{engine.memory_id}:2",
            "program": f"m:{program.memory_id}:1",
            "works_with": f"e:{edges['works_with']}", "studied_at": f"e:{edges['studied_at']}"}


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    path = tmp_path_factory.mktemp("show") / "story.anatid"
    ids = build_story(path)
    return path, ids


def _hood(path, **kw):
    with Anatid.open(str(path), read_only=True) as db:
        return gather(db, "Ada", **kw)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.states: dict[str, list[str]] = {}
        self.external: list[tuple[str, str, str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "data-key" in a:
            self.states.setdefault(a["data-key"], []).append(a.get("data-state"))
        for name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
            if name in a:
                self.external.append((tag, name, a[name]))


def _data_block(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="anatid-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))


def test_html_is_self_contained(story):
    path, _ = story
    page = render_html(_hood(path))
    for needle in ("http:", "https:", "//", "url(", "@import", "<link", "<iframe", "<img"):
        assert needle not in page, needle
    tags = _Tags()
    tags.feed(page)
    assert tags.external == []
    assert "script" in tags.tags and "svg" in tags.tags and "input" in tags.tags


def test_html_carries_nodes_edges_and_intervals(story):
    path, ids = story
    page = render_html(_hood(path))
    tags = _Tags()
    tags.feed(page)
    for name in ("Ada", "Babbage", "Cambridge"):
        assert f'<text class="name" x="12" y="19">{name}</text>' in page
    assert "Dora" not in page                           # three hops out
    assert "secret" not in page                         # another tenant
    # both relations, the cut one with its interval; every memory version with its intervals
    assert ids["works_with"] in tags.states and ids["studied_at"] in tags.states
    assert "works_with" in page and "studied_at" in page
    assert "Ada —works_with→ Babbage  valid [2090-01-01 00:00:10, 2090-01-01 00:01)" in page
    assert "valid [2090-01-01 00:00, 2090-01-01 00:00:50)  tx [2090-01-01 00:00, open)" in page     # London
    assert "valid [2090-01-01 00:00:50, open)  tx [2090-01-01 00:00:50, open)" in page               # Paris
    assert "valid [2090-01-01 00:00:30, open)  tx [2090-01-01 00:00:30, 2090-01-01 00:01:10)" in page
    assert "valid [2090-01-01 00:00:40, open)  tx [2090-01-01 00:00:40, 2090-01-01 00:01:20)" in page
    # opens on the latest instant: current plain, the rest faded, each with its fate
    last = {k: set(v) for k, v in tags.states.items()}
    assert last[ids["paris"]] == {"current"} and last[ids["engine2"]] == {"current"}
    assert last[ids["london"]] == {"past"} and last[ids["engine1"]] == {"past"} and last[ids["program"]] == {"past"}
    assert last[ids["works_with"]] == {"past"} and last[ids["studied_at"]] == {"current"}
    for fate in ("superseded", "corrected", "forgotten", "unrelated"):
        assert fate in page


def test_frames_replay_as_of_at_every_change(story):
    path, ids = story
    data = _data_block(render_html(_hood(path)))
    keys = data["keys"]
    shown = [{keys[i] for i in f["v"]} for f in data["frames"]]
    labels = [f["label"] for f in data["frames"]]
    assert data["initial"] == len(shown) - 1
    before = labels.index("2090-01-01 00:00:40")                 # the last change before the supersede
    assert ids["london"] in shown[before] and ids["paris"] not in shown[before]
    after = labels.index("2090-01-01 00:00:50")
    assert ids["paris"] in shown[after] and ids["london"] not in shown[after]
    assert "supersedes an earlier belief" in " ".join(data["frames"][after]["events"])
    assert ids["works_with"] in shown[after] and ids["works_with"] not in shown[labels.index("2090-01-01 00:01")]


def test_svg_parses_and_as_of_leaves_out_what_came_later(story):
    path, ids = story
    root = ET.fromstring(render_svg(_hood(path)).encode("utf-8"))
    assert root.tag == f"{SVG_NS}svg"
    states = {e.get("data-key"): e.get("data-state") for e in root.iter() if e.get("data-key")}
    assert states[ids["paris"]] == "current" and states[ids["london"]] == "past"

    early = ET.fromstring(render_svg(_hood(path, as_of=at(45))).encode("utf-8"))
    states = {e.get("data-key"): e.get("data-state") for e in early.iter() if e.get("data-key")}
    assert states[ids["london"]] == "current" and states[ids["works_with"]] == "current"
    assert ids["paris"] not in states and ids["engine2"] not in states
    text = " ".join(t.text or "" for t in early.iter(f"{SVG_NS}text"))
    assert "as of 2090-01-01 00:00:45 UTC" in text and "Ada lives in London" in text


def test_caps_say_what_was_left_out(story):
    path, _ = story
    hood = _hood(path, max_entities=2, max_memories=1)
    assert [n.name for n in hood.nodes] == ["Ada", "Babbage"]
    assert any("1 of 3 entities" in note for note in hood.omitted)
    assert any("beyond 1 per entity" in note for note in hood.omitted)
    assert "left out: 1 of 3 entities" in render_html(hood)
    assert _hood(path, hops=0).nodes[0].name == "Ada" and len(_hood(path, hops=0).nodes) == 1
    assert [n.name for n in _hood(path, hops=3).nodes][-1] == "Dora"
    assert '<text class="name" x="12" y="19">Dora</text>' in render_svg(_hood(path, hops=3))


def test_command_writes_html_and_svg(story, tmp_path, capsys):
    path, _ = story
    out = tmp_path / "ada.svg"
    assert main(["show", str(path), "Ada", "--hops", "1", "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    names = {t.text for t in ET.parse(out).getroot().iter(f"{SVG_NS}text") if t.get("class") == "name"}
    assert names == {"Ada", "Babbage"}
    html = tmp_path / "ada.html"
    assert main(["show", str(path), "Ada", "--as-of", "2090-01-01T00:00:45+00:00", "-o", str(html)]) == 0
    data = _data_block(html.read_text(encoding="utf-8"))
    assert data["frames"][data["initial"]]["label"] == "2090-01-01 00:00:45"       # opens there,
    assert data["frames"][-1]["label"] == "2090-01-01 00:01:20"                    # replays to the end
    assert main(["show", str(path), "Ada", "-o", str(tmp_path / "ada.png")]) == 2
    assert main(["show", str(path), "Nobody", "-o", str(html)]) == 2
    assert main(["show", str(path), "Ada", "--as-of", "2090-01-01T00:00:45", "-o", str(html)]) == 2   # naive
    assert main(["show", str(tmp_path / "missing.anatid"), "Ada"]) == 3
    assert main(["show", str(path), "Ada", "--tenant", "7", "-o", "-"]) == 0
    assert "tenant seven" in capsys.readouterr().out
