"""Headless-browser smoke test of `anatid show`'s HTML page in Debian's chromium.

Chromium runs with every network feature it has switched off, opens the page
from a file with ?as_of= set to an instant before the supersede (the page's
script moves the slider there and fires its input event, as a person would)
and dumps the DOM it ends with. Skipped when chromium is absent, except in CI
(CI=true), where .ci/run installs it and its absence is a failure.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from anatid import Anatid
from anatid.show import gather, render_html
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
