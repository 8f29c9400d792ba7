"""The docs are code: every ```sql and ```shell block of docs/sql.md and every ```python
block of docs/*.md runs in a test, on a fresh file (written by the package, never
maintained, as a newcomer's is).

docs/sql.md's blocks run here, by section (SQL_SECTIONS says what each runs against);
python blocks run here unless PYTHON_OWNERS names the test that runs them with the setup
they need. A block that cannot run is preceded by the line

    <!-- not executed: REASON -->

and skipped; keep them few (there are none today). A block in a section or page no test
knows fails test_every_block_has_a_runner, so a new example cannot go unrun.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from anatid import Anatid, utcnow

from conftest import ROOT, subprocess_env
from test_cli_load import _cli, _unavailable

sys.path.insert(0, str(ROOT / "examples"))

DOCS = ROOT / "docs"
FENCE = re.compile(r"^(?:<!-- not executed: (?P<why>.+?) -->\n)?```(?P<lang>[a-z]*)\n(?P<code>.*?)^```", re.M | re.S)
SQL_SECTIONS = {          # section of docs/sql.md -> what its blocks run against
    "Loading it": "the dinner party file, in a shell",
    "Graph recall": "a small fresh graph",
    "Hybrid recall": "the dinner party file and guests.csv (shell blocks: in a shell)",
    "ANN vector index (opt-in)": "two 2-d memories and an ANN index",
}
PYTHON_OWNERS = {         # page -> the test that runs its python blocks
    "agents.md": "test_agents_docs.py",
    "indexes.md": "test_index_health.py",
    "vaults.md": "test_vault_docs.py",
}


@dataclass(frozen=True)
class Block:
    page: str
    section: str
    lang: str
    code: str
    line: int
    skip: str | None


def blocks(page: str) -> list[Block]:
    text = (DOCS / page).read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[:m.start("lang")]
        heads = re.findall(r"^## (.+)$", before, re.M)
        out.append(Block(page, heads[-1] if heads else "", m["lang"], m["code"], before.count("\n") + 1, m["why"]))
    return out


def _run(blocks_, kind: str) -> list[Block]:
    chosen = [b for b in blocks_ if b.lang == kind]
    for b in chosen:
        if b.skip:
            print(f"not executed: {b.page}:{b.line}: {b.skip}")
    return [b for b in chosen if not b.skip]


def statements(code: str) -> list[str]:
    """The statements of a block, comments dropped ('--' lines)."""
    out = []
    for statement in code.split(";"):
        kept = "\n".join(line for line in statement.splitlines() if not line.strip().startswith("--"))
        if kept.strip():
            out.append(kept)
    return out


def section(name: str, lang: str = "sql") -> list[Block]:
    return _run([b for b in blocks("sql.md") if b.section == name], lang)


def _native_or_skip(db: Anatid) -> None:
    if not db.native.loaded:
        db.close()
        pytest.skip(db.native.reason)


# -- every block has a runner ------------------------------------------------------------------------
def test_every_block_has_a_runner():
    for b in blocks("sql.md"):
        if b.lang in ("sql", "shell") and not b.skip:
            assert b.section in SQL_SECTIONS, f"docs/sql.md:{b.line}: a {b.lang} block in a section no test runs"
    for page in sorted(p.name for p in DOCS.glob("*.md")):
        for b in blocks(page):
            if b.lang == "python" and page in PYTHON_OWNERS:
                owner = (ROOT / "test" / PYTHON_OWNERS[page]).read_text(encoding="utf-8")
                assert page in owner, f"{PYTHON_OWNERS[page]} no longer reads docs/{page}"
    # test_agents_docs.py runs the blocks followed by "prints": then every block must be
    agents = (DOCS / "agents.md").read_text(encoding="utf-8")
    assert len(re.findall(r"```python\n.*?```\n\nprints\n", agents, re.S)) == agents.count("```python")


def test_docs_have_examples():
    assert len(section("Graph recall")) >= 1 and len(section("Hybrid recall")) >= 4
    assert section("ANN vector index (opt-in)") and section("Loading it", "shell")


# -- docs/sql.md: graph recall -----------------------------------------------------------------------
def test_graph_recall_blocks_run_on_a_fresh_file_and_after_maintenance(tmp_path):
    db = Anatid.open(str(tmp_path / "fresh.anatid"))
    _native_or_skip(db)
    with db:
        db.relate("Ada Lovelace", "Babbage")
        db.relate("Ada", "Paris")
        lovelace = db.remember("Ada Lovelace wrote the notes", ["Ada Lovelace"])
        db.remember("Babbage built the engine", ["Babbage"])
        db.remember("Paris hosted the exhibition", ["Paris"], kind="event")
        later = db.remember("Ada lands in Paris", ["Ada"], valid_from=utcnow() + timedelta(hours=12))
        cur = db.connection.cursor()
        runs = []
        for _ in ("fresh", "maintained"):
            runs.append([cur.execute(s).fetchall() for b in section("Graph recall") for s in statements(b.code)])
            db.maintain_indexes()
        assert runs[0] == runs[1]
        first, tomorrow = runs[0][0], runs[0][-1]
        assert [r[0] for r in first] == [h.memory_id for h in db.recall_2hop("Ada Lovelace")]
        assert first[0][0] == lovelace.memory_id
        assert later.memory_id in [r[0] for r in tomorrow]               # valid from later today
        assert later.memory_id not in [h.memory_id for h in db.recall_2hop("Ada")]


# -- docs/sql.md: hybrid recall ----------------------------------------------------------------------
def test_hybrid_examples_run(tmp_path, monkeypatch):
    import dinner_party
    db = Anatid.open(str(tmp_path / "home.anatid"))
    _native_or_skip(db)
    try:
        dinner_party.build(db)
        (tmp_path / "guests.csv").write_text("name,seat\nAda,1\nTom,2\n", encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        cur = db.connection.cursor()
        results = [cur.execute(s).fetchall() for b in section("Hybrid recall") for s in statements(b.code)]
        peanut = results[0]
        assert peanut and "peanut" in peanut[0][1]
        assert any("satay" in r[0].lower() for r in results[1])
        assert {r[0] for r in results[2]} == {"Ada"}      # Tom is in no recalled fact
        assert all("ada" in r[2].lower() for r in results[2])
        assert results[-1][0][0] == len(results[-2]) or results[-1][0][0] > 0
    finally:
        db.close()


# -- docs/sql.md: ANN --------------------------------------------------------------------------------
def test_ann_examples_run(tmp_path):
    db = Anatid.open(str(tmp_path / "doc.anatid"), embedding_dim=2)
    _native_or_skip(db)
    with db:
        near = db.remember("near", embedding=[0.1, 0.8])
        db.remember("far", embedding=[1.0, -0.2])
        db.build_ann_index(use_when="always")
        cur = db.connection.cursor()
        rows = [cur.execute(s).fetchall() for b in section("ANN vector index (opt-in)") for s in statements(b.code)][-1]
        assert len(rows) == 2 and rows[0][0] == near.memory_id     # best first


# -- docs/sql.md: shell blocks -----------------------------------------------------------------------
def test_shell_blocks_run_in_a_shell(tmp_path):
    """`anatid extension --cli`, then the duckdb shell, in a fresh HOME, on a fresh memory.anatid."""
    import dinner_party
    cli = _cli()
    if cli is None:
        _unavailable("duckdb CLI not found; pip install duckdb-cli (part of the [test] extra)")
    db = Anatid.open(str(tmp_path / "memory.anatid"))
    _native_or_skip(db)
    with db:
        dinner_party.build(db)
    bin_dir = tmp_path / "bin"                     # `anatid` as this run's interpreter runs it
    bin_dir.mkdir()
    (bin_dir / "anatid").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m anatid "$@"\n', encoding="utf-8")
    (bin_dir / "anatid").chmod(0o755)
    path = os.pathsep.join([str(bin_dir), str(Path(cli).parent), os.environ.get("PATH", "")])
    env = subprocess_env(HOME=str(tmp_path), PATH=path)
    shells = [b for name in SQL_SECTIONS for b in section(name, "shell")]
    assert len(shells) >= 2
    outputs = []
    for b in shells:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", b.code], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"docs/sql.md:{b.line}: {done.stderr}"
        outputs.append(done.stdout)
    from anatid._version import __version__
    assert __version__ in outputs[0]
    assert "peanut" in outputs[-1].lower()


# -- python blocks of docs/*.md ----------------------------------------------------------------------
def _unowned_python_blocks() -> list[Block]:
    pages = sorted(p.name for p in DOCS.glob("*.md") if p.name not in PYTHON_OWNERS)
    return [b for page in pages for b in _run(blocks(page), "python")]


def test_python_blocks_run_on_a_fresh_file(tmp_path, monkeypatch):
    """Each page's blocks in order, in one namespace, in a directory holding a fresh
    memory.anatid (the name the docs use)."""
    todo = _unowned_python_blocks()
    assert todo, "no python block left to run here"
    with Anatid.open(str(tmp_path / "memory.anatid")) as db:
        db.relate("Ada", "Babbage")
        db.remember("Ada wrote the notes", ["Ada"])
    monkeypatch.chdir(tmp_path)
    namespaces: dict[str, dict] = {}
    for b in todo:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(b.code, f"docs/{b.page}:{b.line}", "exec"), namespaces.setdefault(b.page, {}))
        if b.page == "doctor.md":
            assert out.getvalue().splitlines()[0] == "True"
