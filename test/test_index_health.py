"""index_health(): each of the eight reasons, the counts, the MaintenancePolicy triggers,
and maintain_indexes() building exactly what is due (test_fault_injection.py covers
damaged_base and load_failure against real damage)."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

from anatid import Anatid, MaintenancePolicy, ValidationError
from anatid.indexes import health
from anatid.indexes.text import rebuild_fts_index as raw_text_rebuild
from anatid.verbs import indexes as index_verbs

from conftest import vec


@pytest.fixture
def db(tmp_path):
    d = Anatid.open(str(tmp_path / "h.anatid"), tenant=1, embedding_dim=4)
    if not d.native.loaded:
        d.close()
        pytest.skip(f"needs the native extension: {d.native.reason}")
    d.relate("Ada", "Babbage")
    for i in range(10):
        d.remember(f"engine note {i}", ["Ada" if i % 2 else "Babbage"], embedding=vec(1, i))
    yield d
    d.close()


def by_index(db, **kw) -> dict:
    return {e["index"]: e for e in db.index_health(**kw)}


def test_absent_then_fresh_then_stale(db):
    before = by_index(db)
    assert {i: (e["reason"], e["due"]) for i, e in before.items()} == {
        "graph": ("absent", True), "text": ("absent", True), "vector": ("absent", True)}
    assert before["text"]["pending_rows"] == 10 and before["text"]["generation_id"] is None
    report = db.maintain_indexes()
    assert all(report[i]["tenants"] for i in ("graph", "text", "vector"))
    fresh = by_index(db)
    assert {e["reason"] for e in fresh.values()} == {"fresh"} and not any(e["due"] for e in fresh.values())
    assert fresh["text"]["base_rows"] == 10 and fresh["vector"]["base_rows"] == 10
    assert fresh["graph"]["base_rows"] == 11          # 10 memories + 1 edge
    assert fresh["text"]["pending_rows"] == 0 and fresh["text"]["ratio"] == 0
    assert fresh["text"]["age_seconds"] >= 0
    db.remember("one more engine", ["Ada"], embedding=vec(0, 1))
    stale = by_index(db)
    assert stale["text"]["reason"] == "stale_generation" and stale["text"]["due"]
    assert stale["text"]["pending_rows"] == 1 and stale["text"]["ratio"] == pytest.approx(0.1)


def test_policy_triggers(db):
    db.maintain_indexes()
    for _ in range(3):
        db.remember("more engine", ["Ada"], embedding=vec(0, 0, 1))
    def reason(policy):
        return by_index(db, policy=policy)["text"]["reason"]
    assert reason(MaintenancePolicy(max_journal_rows=3)) == "stale_generation"
    assert reason(MaintenancePolicy(max_journal_rows=4)) == "fresh"
    assert reason(MaintenancePolicy(max_journal_rows=None, max_journal_ratio=0.3)) == "stale_generation"
    assert reason(MaintenancePolicy(max_journal_rows=None, max_journal_ratio=0.5)) == "fresh"
    assert reason(MaintenancePolicy(max_journal_rows=None, max_age=timedelta(microseconds=1))) == "stale_generation"
    assert reason(MaintenancePolicy(max_journal_rows=None, max_age=timedelta(days=1))) == "fresh"
    assert reason(MaintenancePolicy(max_journal_rows=None)) == "fresh"        # no trigger at all
    # maintain_indexes follows the same policy: nothing due, nothing built
    lazy = db.maintain_indexes(policy=MaintenancePolicy(max_journal_rows=100))
    assert lazy["text"]["tenants"] == [] and lazy["text"]["skipped"] == [{"tenant": 1, "reason": "fresh"}]
    eager = db.maintain_indexes(policy=MaintenancePolicy(max_journal_rows=3))
    assert eager["text"]["tenants"] and by_index(db)["text"]["pending_rows"] == 0


@pytest.mark.parametrize("kw", [{"max_journal_rows": 0}, {"max_journal_rows": 1.5}, {"max_journal_ratio": -1},
                                {"max_journal_ratio": float("nan")}, {"max_age": 5}, {"max_age": timedelta(0)}])
def test_policy_arguments_are_checked(kw):
    with pytest.raises(ValidationError):
        MaintenancePolicy(**kw)


def test_maintain_arguments_are_checked(db):
    with pytest.raises(ValidationError, match="policy"):
        db.maintain_indexes(policy={"max_journal_rows": 1})
    with pytest.raises(ValidationError, match="indexes"):
        db.maintain_indexes(indexes=("btree",))


def test_unvalidated_generation(db):
    db.maintain_indexes()
    raw_text_rebuild(db)          # publishes a generation without validating or recording it
    entry = by_index(db)["text"]
    assert entry["reason"] == "unvalidated" and entry["due"]
    assert db.maintain_indexes()["text"]["tenants"]            # always due, whatever the policy
    assert by_index(db)["text"]["reason"] == "fresh"


def test_historical_query(db):
    db.maintain_indexes()
    past = by_index(db, as_of=datetime.now(timezone.utc))
    assert {e["reason"] for e in past.values()} == {"historical_query"}
    hits = db.as_of(datetime.now(timezone.utc)).recall_2hop("Ada")
    assert "historical_query" in hits.notes
    assert "historical_query" in db.recall("engine", as_of=datetime.now(timezone.utc)).notes


def test_rebuild_in_progress(db, monkeypatch):
    seen = {}

    def look(index):
        if index == "text":      # another thread asks while the build's transaction is open
            t = threading.Thread(target=lambda: seen.update(by_index(db)))
            t.start()
            t.join()

    monkeypatch.setattr(index_verbs, "_before_publish", look)
    db.maintain_indexes()
    assert seen["text"]["reason"] == "rebuild_in_progress" and not seen["text"]["due"]
    assert seen["graph"]["reason"] != "rebuild_in_progress"
    assert by_index(db)["text"]["reason"] == "fresh"


def test_load_failure_and_the_doctor(db):
    from anatid._native import NativeStatus
    db.maintain_indexes()
    store = db._store
    native, store.native = store.native, NativeStatus(False, "disabled by ANATID_NATIVE=0 (test)")
    try:
        entries = by_index(db)
        assert {e["reason"] for e in entries.values()} == {"load_failure"}
        assert "ANATID_NATIVE" in entries["graph"]["detail"]
        assert "load_failure" in db.recall_2hop("Ada").notes and "load_failure" in db.recall("engine").notes
    finally:
        store.native = native
    assert db.doctor().finding("index_fresh") is None


def test_exactly_one_reason_per_index_and_tenant(db):
    other = Anatid.open(db._store.path, tenant=2)
    other.remember("tenant two", ["Ada"], embedding=vec(0, 0, 0, 1))
    db.maintain_indexes()
    entries = db.index_health(all_tenants=True)
    keys = [(e["index"], e["tenant"]) for e in entries]
    assert sorted(keys) == sorted({(i, t) for i in ("graph", "text", "vector") for t in (1, 2)})
    assert all(e["reason"] in health.REASONS for e in entries)
    reasons = {(e["index"], e["tenant"]): e["reason"] for e in entries}
    assert reasons[("text", 1)] == "fresh" and reasons[("text", 2)] == "absent"
    other.close()
    everyone = db.maintain_indexes(all_tenants=True)
    assert [t["tenant"] for t in everyone["text"]["tenants"]] == [2]
    assert {e["reason"] for e in db.index_health(all_tenants=True)} == {"fresh"}


def test_graph_maintenance_builds_only_the_due_tenants(db):
    with Anatid.open(db._store.path, tenant=2) as other:
        other.remember("tenant two", ["Ada"], embedding=vec(0, 0, 0, 1))
        db.maintain_indexes(all_tenants=True)
        gens = {e["tenant"]: e["generation_id"] for e in db.index_health(all_tenants=True) if e["index"] == "graph"}
        other.remember("tenant two again", ["Babbage"], embedding=vec(0, 0, 1, 1))
    report = db.maintain_indexes(all_tenants=True)
    assert [t["tenant"] for t in report["graph"]["tenants"]] == [2]
    assert report["graph"]["skipped"] == [{"tenant": 1, "reason": "fresh"}]
    now = {e["tenant"]: e for e in db.index_health(all_tenants=True) if e["index"] == "graph"}
    assert now[1]["generation_id"] == gens[1] and now[2]["generation_id"] != gens[2]
    assert {e["reason"] for e in now.values()} == {"fresh"}
    forced = db.maintain_indexes(all_tenants=True, force=True, indexes=("graph",))
    assert [t["tenant"] for t in forced["graph"]["tenants"]] == [1, 2]


def test_rebuild_fts_index_does_the_text_index_alone(db):
    report = db.rebuild_fts_index()
    assert report["index"] == "text" and report["tenants"][0]["rows"] == 10
    entries = by_index(db)
    assert entries["text"]["reason"] == "fresh" and entries["graph"]["reason"] == "absent"
    again = db.rebuild_fts_index()            # not due, rebuilt anyway
    assert again["tenants"][0]["generation_id"] != report["tenants"][0]["generation_id"]


def test_a_failed_validation_publishes_nothing(db, monkeypatch):
    db.maintain_indexes()
    before = by_index(db)
    db.remember("engine after", ["Ada"], embedding=vec(0, 1))
    monkeypatch.setattr(index_verbs, "_vector_problems", lambda *a: [123])
    with pytest.raises(index_verbs.IndexValidationError, match="not published"):
        db.maintain_indexes(indexes=("vector",))
    after = by_index(db)
    assert after["vector"]["generation_id"] == before["vector"]["generation_id"]
    assert after["vector"]["pending_rows"] == 1 and after["vector"]["reason"] == "stale_generation"


def test_the_docs_code_blocks_run():
    """docs/indexes.md's Python blocks are executed as written (they show the native path)."""
    import re
    with Anatid.open(":memory:") as probe:
        if not probe.native.loaded:
            pytest.skip(f"needs the native extension: {probe.native.reason}")
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[1] / "docs" / "indexes.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/indexes.md", "exec"), {})
