"""Charts embedded in docs/benchmarks.md exist and were drawn from the current results.

benchmark/charts.py writes docs/charts/manifest.json: for each chart, the results file it
was drawn from and that file's sha256. A chart is stale when its results file has changed
since (it is older than its data); file modification times would not do, since a fresh
clone gives every file the same one. Skipped while the docs embed no chart yet.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks.md"
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)\)|<img[^>]+src=\"([^\"]+\.png)\"")


def chart_problems(docs: Path, root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(referenced charts, problems): a chart missing, unknown to its manifest, or older than its data."""
    if not docs.exists():
        return [], []
    refs = [a or b for a, b in _IMAGE.findall(docs.read_text(encoding="utf-8"))]
    problems = []
    manifests: dict[Path, dict] = {}
    for ref in refs:
        chart = (docs.parent / ref).resolve()
        if not chart.exists():
            problems.append(f"{ref}: missing (run make bench)")
            continue
        manifest = chart.parent / "manifest.json"
        if manifest not in manifests:
            manifests[manifest] = json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else {}
        entry = manifests[manifest].get(chart.name)
        if entry is None:
            problems.append(f"{ref}: not in {manifest.name}, so nothing says which results it shows")
            continue
        for name, digest in entry["sources"].items():
            source = Path(name) if Path(name).is_absolute() else root / name
            if not source.exists():
                problems.append(f"{ref}: its results file {name} is gone")
            elif hashlib.sha256(source.read_bytes()).hexdigest() != digest:
                problems.append(f"{ref}: older than {name} (results changed since it was drawn; "
                                "run python -m benchmark.charts)")
    return refs, problems


def test_charts_in_the_docs_are_present_and_fresh():
    refs, problems = chart_problems(DOCS)
    if not refs:
        pytest.skip("docs/benchmarks.md embeds no charts yet")
    assert problems == []


def test_the_check_fails_on_a_missing_or_stale_chart(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.syspath_prepend(str(ROOT))  # `benchmark` is a folder of the checkout, not a package installed
    from benchmark import charts
    results, docs = tmp_path / "results", tmp_path / "docs"
    results.mkdir()
    (results / "graph.json").write_text(json.dumps({"runs": [
        {"engine": e, "scale": s, "p50_ms": p * s / 1e5, "p95_ms": 2 * p * s / 1e5}
        for e, p in (("native", 0.3), ("sql", 2.0)) for s in (100_000, 1_000_000)]}))
    (results / "writes.json").write_text(json.dumps({"remember_many": {"per_s": 50000.0}}))
    (results / "notes.json").write_text(json.dumps({"nothing": "to draw"}))
    docs.mkdir()
    (docs / "benchmarks.md").write_text("# Benchmarks\n\nTables by their owners.\n")
    made = charts.render_all(results, docs / "charts", docs / "benchmarks.md", log=lambda *_: None)
    assert {m["chart"] for m in made} == {"graph--2-hop-latency-100k.png", "graph--2-hop-latency-1m.png",
                                         "2-hop-scaling.png", "writes--throughput.png"}
    text = (docs / "benchmarks.md").read_text()
    assert text.startswith("# Benchmarks\n\nTables by their owners.\n") and "## Charts" in text
    refs, problems = chart_problems(docs / "benchmarks.md", tmp_path)
    assert len(refs) == 4 and problems == []

    # Re-running replaces the section instead of appending a second one.
    charts.write_section(docs / "benchmarks.md", made, docs / "charts")
    assert (docs / "benchmarks.md").read_text().count("## Charts") == 1

    (results / "writes.json").write_text(json.dumps({"remember_many": {"per_s": 61000.0}}))
    (docs / "charts" / "2-hop-scaling.png").unlink()
    _, problems = chart_problems(docs / "benchmarks.md", tmp_path)
    assert len(problems) == 2
    assert any("writes--throughput.png: older than" in p for p in problems)
    assert any("2-hop-scaling.png: missing" in p for p in problems)
    shutil.rmtree(docs / "charts")


def test_every_row_is_labelled_and_no_chart_holds_more_than_five(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmark import chart_series, charts
    states = ("before", "steady", "after a write", "exact")
    path = tmp_path / "journal_check-1.json"
    path.write_text(json.dumps({
        "graph": {"ids": {s: {"p50_ms": 1.0 + i, "p95_ms": 2.0 + i} for i, s in enumerate(states)},
                  "verb recall_2hop": {s: {"p50_ms": 4.0 + i, "p95_ms": 6.0 + i} for i, s in enumerate(states)}},
        # "graph seeds" in a record's name under "hybrid" does not make it a 2-hop record
        "hybrid": {"verb recall (text + vector + graph seeds)": {s: {"p50_ms": 6.0, "p95_ms": 8.0} for s in states}},
        "results": [{"dim": d, "ann_ms": {"p50": 1.0, "p95": 2.0}} for d in (64, 384)],
        "engines": {f"ladybug: variant {i}": {"p50_ms": 40.0 - i, "p95_ms": 60.0} for i in range(6)}}))
    lats, _ = charts.read_results(path)
    by_workload = {}
    for r in lats:
        by_workload.setdefault(r.workload, []).append(r)
    assert len(by_workload["2-hop"]) == 8 and len(by_workload["hybrid"]) == 4
    labels = sorted(r.engine for r in by_workload["journal_check-1"])
    assert labels[:2] == ["dim 384 · ann", "dim 64 · ann"]           # list elements named by what differs
    for group in by_workload.values():
        for subject, rows in chart_series.split_messages(group):
            names = [r.engine for r in rows]
            assert 1 <= len(rows) <= chart_series.MAX_SERIES and len(set(names)) == len(names), names
    two_hop = dict(chart_series.split_messages(by_workload["2-hop"]))
    assert sorted(r.engine for r in two_hop["ids"]) == sorted(states)
    folded = chart_series.fold_variants([r for r in by_workload["journal_check-1"] if r.engine.startswith("ladybug")])
    assert [r.engine for r in folded] == ["ladybug, fastest of 6 variants: variant 5"]
