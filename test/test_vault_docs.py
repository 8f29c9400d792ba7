"""docs/vaults.md is code: its python block runs on a small synthetic vault, and
its Stop-hook block is valid JSON that calls `anatid hook stop`."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

from anatid.vault.synth import generate

DOC = Path(__file__).resolve().parents[1] / "docs" / "vaults.md"


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_python_block_runs(tmp_path):
    generate(tmp_path / "vault", notes=30, seed=1)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for block in _blocks("python"):
                exec(compile(block, str(DOC), "exec"), {})
    finally:
        os.chdir(cwd)
    assert len(out.getvalue().splitlines()) == 12


def test_hook_block_is_valid():
    (block,) = _blocks("json")
    hook = json.loads(block)["hooks"]["Stop"][0]["hooks"][0]
    assert hook["type"] == "command" and hook["command"].startswith("anatid hook stop")


def test_quality_doc_quotes_the_vault_ruler_results():
    # docs/quality.md's vault tables are benchmark/results/vault-ruler-*.json (python -m
    # benchmark.vault_ruler), not typed in: the full tables of the current graph mode, and
    # the graph mode before (PageRank) and after (the one graph ranking) per class
    root = DOC.parents[1]
    doc = (root / "docs" / "quality.md").read_text(encoding="utf-8")

    def row(s, mode):
        ab = "" if s["above_outdated"] is None else f"{s['above_outdated']:.3f}"
        return (f"| {s['query_class']} | {mode} | {s['n']} | {s['recall']:.3f} | {s['mrr']:.3f} | "
                f"{s['ndcg']:.3f} | {ab} |")

    def scores(name):
        return json.loads((root / "benchmark" / "results" / f"vault-ruler-{name}.json").read_text())["scores"]

    for name, full in (("hashing", True), ("minilm", True), ("hashing-509", False)):
        now, before = scores(name), scores(name + "-pagerank")
        assert len(now) == len(before) == 12       # four classes by three modes
        for s in now:
            if full or s["mode"] == "vector":
                assert row(s, s["mode"]) in doc, (name, row(s, s["mode"]))
            if s["mode"] == "graph":
                assert row(s, "graph, one graph ranking") in doc, (name, s)
        for s in before:
            if s["mode"] == "graph":
                assert row(s, "graph, PageRank (before)") in doc, (name, s)
    assert "{{" not in doc
