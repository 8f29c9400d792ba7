"""Headless-browser tests of `anatid show`'s HTML page in Debian's chromium.

Chromium runs with every network feature it has switched off, opens the page
from a file with ?as_of= set to an instant before the supersede (the page's
script moves the slider there and fires its input event, as a person would)
and dumps the DOM it ends with. A second page, forty entities two hops out,
is opened in a 1,200 px window with a script that measures what the browser
drew (getBoundingClientRect) and writes the numbers into the DOM it dumps: no
card may reach past the window's edge and no two labels may overlap. Skipped
when chromium is absent, except in CI (CI=true), where .ci/run installs it and
its absence is a failure.
"""
from __future__ import annotations

import json
import os
import re
import struct
import shutil
import subprocess

import pytest

from anatid import Anatid
from anatid.show import gather, render_html
from conftest import at
from test_show import build_story

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         "--disable-default-apps", "--no-default-browser-check", "--disable-breakpad",
         "--host-resolver-rules=MAP * ~NOTFOUND"]   # nothing may resolve: the page must need no network


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed; .ci/run installs it (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return CHROMIUM


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    ids = build_story(root / "story.anatid")
    with Anatid.open(str(root / "story.anatid"), read_only=True) as db:
        html = render_html(gather(db, "Ada"))
    path = root / "ada.html"
    path.write_text(html, encoding="utf-8")
    return path, ids, root


def _dom(browser, url: str, profile) -> str:
    done = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "</html>" in done.stdout, done.stderr[-2000:]
    return done.stdout


def _states(dom: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for key, state in re.findall(r'data-key="([^"]+)" data-state="([^"]+)"', dom):
        out.setdefault(key, set()).add(state)
    return out


def test_slider_before_the_supersede_shows_the_older_belief(browser, page):
    path, ids, root = page
    # 00:00:45 lies between "Ada writes the first program" (40 s) and the supersede (50 s).
    dom = _dom(browser, path.as_uri() + "?as_of=2090-01-01T00:00:45Z", root / "profile-before")
    states = _states(dom)
    assert states[ids["london"]] == {"current"}           # "Ada lives in London" shown plain
    assert states[ids["paris"]] == {"future"}             # not yet believed: hidden
    assert states[ids["works_with"]] == {"current"}
    assert "as of 2090-01-01 00:00:40 UTC" in dom
    assert "remembered “Ada writes the first program”" in dom

    # With no instant asked for, the page opens on the latest change: London is faded.
    states = _states(_dom(browser, path.as_uri(), root / "profile-latest"))
    assert states[ids["london"]] == {"past"} and states[ids["paris"]] == {"current"}
    assert states[ids["works_with"]] == {"past"}


def build_crowd(path) -> None:
    """Forty-odd entities within two hops of Ada: eight neighbours with three to nine
    neighbours each, long names and memories, relations among the far ones, one cut."""
    kinds = ["works_with", "studied_at", "corresponds_with", "funded_by", "near", "translated"]
    with Anatid.open(str(path)) as db:
        t = 0
        for i in range(6):
            db.remember(f"Ada note {i}: the analytical engine could act on things other than number, "
                        f"were their relations expressible by abstract operations", entities=["Ada"], now=at(t))
            t += 1
        def far(i, j):
            return f"Far {i}.{j} " + ("Mechanics' Institute of Manchester" if j % 4 == 0 else "lab")

        for i in range(8):
            near = f"Correspondent {i} of the Royal Astronomical Society" if i % 3 == 0 else f"Colleague {i}"
            db.relate("Ada", near, kinds[i % len(kinds)], now=at(t))
            for j in range(3 + i % 7):
                db.relate(near, far(i, j), kinds[(i + j) % len(kinds)], now=at(t + 1))
                if j % 3 == 1:
                    db.remember(f"{far(i, j)} keeps a long ledger of every gear cut for the difference engine",
                                entities=[far(i, j)], now=at(t + 2))
                if j == 2:
                    db.relate(far(i, j), far((i + 1) % 8, 1), "near", now=at(t + 3))
                t += 4
            for k in range(3):
                db.remember(f"{near} wrote letter {k} about Bernoulli numbers and punched cards",
                            entities=[near], now=at(t))
                t += 1
        db.unrelate("Ada", "Colleague 1", now=at(t + 10))


# Run in the page after its own script: every visible card and label, where the browser drew it.
MEASURE = """<script>
(function () {
  function box(el) { var r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }
  function shown(el) { var r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; }
  var svg = document.querySelector(".drawing svg");
  var cards = Array.prototype.filter.call(svg.querySelectorAll("rect.card"), shown).map(function (r) {
    return {box: box(r), name: r.parentNode.querySelector("text").textContent};
  });
  var labels = Array.prototype.filter.call(svg.querySelectorAll("text"), shown).map(function (t) {
    var card = t.closest(".node, .fold");
    return {box: box(t), text: t.textContent, card: card ? box(card.querySelector("rect.card")) : null};
  });
  var out = document.createElement("pre");
  out.id = "anatid-measure";
  out.textContent = JSON.stringify({width: document.documentElement.clientWidth, cards: cards, labels: labels});
  document.body.appendChild(out);
})();
</script>"""


@pytest.fixture(scope="module")
def crowd(tmp_path_factory):
    root = tmp_path_factory.mktemp("crowd")
    build_crowd(root / "crowd.anatid")
    with Anatid.open(str(root / "crowd.anatid"), read_only=True) as db:
        hood = gather(db, "Ada", hops=2)
    return hood, render_html(hood), root


def _overlap(a, b) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5


def test_forty_entities_fit_1200_px_with_no_label_over_another(browser, crowd):
    hood, html, root = crowd
    assert len(hood.nodes) == 40 and hood.omitted              # the cap bites: a full-sized picture
    path = root / "measured.html"
    path.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = subprocess.run([browser, *FLAGS, f"--user-data-dir={root / 'profile-measure'}", "--window-size=1200,900",
                          "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=60)
    assert dom.returncode == 0, dom.stderr[-2000:]
    m = json.loads(re.search(r'<pre id="anatid-measure">(.*?)</pre>', dom.stdout, re.S).group(1)
                   .replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert 1100 <= m["width"] <= 1200
    assert len(m["cards"]) >= 20 and len(m["labels"]) >= 100
    for card in m["cards"]:
        assert card["box"][0] >= 0 and card["box"][2] <= m["width"], f"{card['name']} lies off-screen: {card['box']}"
    for i, a in enumerate(m["cards"]):
        for b in m["cards"][i + 1:]:
            assert not _overlap(a["box"], b["box"]), f"cards {a['name']!r} and {b['name']!r} overlap"
    for i, a in enumerate(m["labels"]):
        if a["card"] is not None:     # a label stays inside its card
            assert a["box"][0] >= a["card"][0] and a["box"][2] <= a["card"][2] + 0.5, f"{a['text']!r} spills out"
        for b in m["labels"][i + 1:]:
            assert not _overlap(a["box"], b["box"]), f"labels {a['text']!r} and {b['text']!r} overlap"
    # "+N more" cards fold what does not fit; they say how many
    assert re.search(r'class="foldtitle"[^>]*>\+\d+ more<', dom.stdout)

    # and the browser's own picture of it, 1,200 px across
    shot = root / "crowd.png"
    done = subprocess.run([browser, *FLAGS, f"--user-data-dir={root / 'profile-shot'}", "--window-size=1200,2400",
                           "--hide-scrollbars", f"--screenshot={shot}", path.as_uri()],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">I", head[16:20])[0] == 1200
    if os.environ.get("ANATID_SHOW_SHOTS"):           # keep it to look at
        shutil.copy(shot, os.environ["ANATID_SHOW_SHOTS"])
