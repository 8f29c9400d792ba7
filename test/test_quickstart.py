"""The reference quickstart runs unchanged and prints its four lines; the longer
walkthrough in examples/quickstart.py runs cleanly and quickly."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]

# Copied verbatim from the reference design, section "Quickstart": it is a spec.
SEED_QUICKSTART = '''
from anatid import Anatid, utcnow

vec = [0.0] * 63 + [1.0]                                        # your embedding model's output

with Anatid.open("agent.anatid", tenant=1, embedding_dim=64) as db:
    db.relate("Ada", "Kestrel", rel_kind="leads")               # an entity to entity edge
    m = db.remember("Ada prefers dark roast coffee",            # a fact, filed under 2 entities
                    entities=["Ada", "coffee"], kind="preference",
                    embedding=vec, writer="agent-1",
                    episode="Standup 2026-03-01: Ada takes it dark roast.")  # raw evidence first
    t0 = utcnow()
    hits = db.recall("coffee", embedding=vec, seed_entity="Ada", k=3)   # findable already
    print(hits[0].content, hits[0].sources, "| bm25_stale:", hits.bm25_stale)

    new = db.supersede(m.memory_id, "Ada switched to decaf")    # closes the old row, keeps it
    print("old still current?", db.get(m.memory_id).is_current) # False, history intact
    print("at t0:", [x.content for x in db.as_of(t0).recall_2hop("Ada")])
    print("evidence:", db.provenance(new.memory_id).source_text)
'''

SEED_OUTPUT = """\
Ada prefers dark roast coffee ('vector', 'text', 'graph') | bm25_stale: False
old still current? False
at t0: ['Ada prefers dark roast coffee']
evidence: Standup 2026-03-01: Ada takes it dark roast.
"""


def _env():
    return subprocess_env()


def test_seed_quickstart_prints_its_four_lines(tmp_path):
    script = tmp_path / "quickstart_seed.py"
    script.write_text(SEED_QUICKSTART, encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == SEED_OUTPUT
    assert (tmp_path / "agent.anatid").exists()       # the memory file lands in the working directory


def test_examples_quickstart_runs_fast_and_clean(tmp_path):
    start = time.perf_counter()
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py")], cwd=tmp_path, env=_env(),
                         capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    lines = out.stdout.splitlines()
    assert lines[:4] == ["around Ada:", "  hop 0: Ada prefers dark roast coffee", "  hop 1: Kestrel ships in April",
                         "  hop 2: Bo is allergic to hazelnuts"]
    assert "rows still holding 'dark roast': 0" in lines
    assert any(line.startswith("stats: ") and "native loaded:" in line for line in lines)
    assert list(tmp_path.iterdir()) == []              # without a path it leaves nothing behind
    # "under a second" of work; the bound is loose for interpreter start-up on a busy CI machine
    assert elapsed < 10, elapsed
