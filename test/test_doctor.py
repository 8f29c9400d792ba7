"""doctor(): a clean file is ok; each corruption, made by direct SQL one at a
time, gives exactly its finding with the right sample id; doctor writes nothing."""
from __future__ import annotations

import shutil

import pytest

from anatid import Anatid
from anatid import doctor as doctor_module

from conftest import at, open_db, snapshot, vec


@pytest.fixture(scope="module")
def clean_file(tmp_path_factory):
    """A file that exercised every write verb; ids of what it holds."""
    path = tmp_path_factory.mktemp("doctor") / "clean.anatid"
    db = open_db(path)
    a = db.remember("alice likes tea", entities=["Alice"], embedding=vec(1), episode="we talked about tea",
                    now=at(1))
    b = db.remember("bob likes coffee", entities=["Bob"], embedding=vec(0, 1), now=at(2))
    db.relate("Alice", "Bob", now=at(3))
    c = db.supersede(a.memory_id, "alice likes green tea", now=at(4))
    db.update(b.memory_id, "bob likes strong coffee", expected_version=1, now=at(5))
    e = db.remember("a secret", entities=["Alice"], embedding=vec(0, 0, 1), now=at(6))
    db.forget(e.memory_id, hard=True, now=at(7))
    f = db.remember("forgettable", entities=["Bob"], now=at(8))
    db.forget(f.memory_id, now=at(9))
    con = db.connection
    ids = {"A": a.memory_id, "B": b.memory_id, "C": c.memory_id, "E": e.memory_id, "F": f.memory_id}
    ids["alice"], = con.execute("SELECT entity_id FROM anatid_entities WHERE name = 'Alice'").fetchone()
    ids["rel_edge"], = con.execute("SELECT edge_id FROM anatid_edges WHERE kind = 'relates'").fetchone()
    ids["sup_edge"], = con.execute("SELECT edge_id FROM anatid_edges WHERE kind = 'supersedes'").fetchone()
    ids["episode"], = con.execute("SELECT episode_id FROM anatid_episodes").fetchone()
    db.close()
    other = open_db(path, tenant=2)      # a second tenant, so checks must match tenants
    other.remember("tenant two", entities=["Alice"], embedding=vec(0, 0, 0, 1), now=at(10))
    other.close()
    return path, ids


@pytest.fixture
def copy(clean_file, tmp_path):
    path, ids = clean_file
    target = tmp_path / "copy.anatid"
    shutil.copy(path, target)
    return target, ids


def problems(report, indexes: bool = False) -> dict[str, tuple[str, int, tuple[str, ...]]]:
    """Findings other than the native extension's (which depends on the machine) and,
    unless asked for, the index_health() ones: these files never ran maintain_indexes()
    (test_index_health.py covers the reasons)."""
    return {f.check: (f.severity, f.count, f.sample_ids) for f in report.findings
            if f.check != "native_extension" and (indexes or not f.check.startswith("index_"))}


def test_clean_file_is_ok(copy):
    path, _ = copy
    with Anatid.open(str(path), read_only=True) as db:
        report = db.doctor()
    assert report.ok
    assert problems(report) == {}
    assert {"duplicate_live_versions", "dangling_about_edges", "orphaned_postings", "schema_missing_derived",
            "native_extension"} <= set(report.checks_run)


# (name, SQL corrupting the file, check, severity, count, sample keys or literal ids)
CORRUPTIONS = [
    ("duplicate live version",
     "INSERT INTO anatid_memories SELECT * REPLACE (version + 1 AS version) FROM anatid_memories "
     "WHERE memory_id = $B AND tx_to IS NULL",
     "duplicate_live_versions", "error", 1, ["B"]),
    ("duplicate version number",
     "INSERT INTO anatid_memories SELECT * REPLACE (tx_from - INTERVAL 1 DAY AS tx_from, "
     "tx_from - INTERVAL 1 HOUR AS tx_to) FROM anatid_memories WHERE memory_id = $C",
     "duplicate_version_numbers", "error", 1, ["C"]),
    ("about edge to a missing memory",
     "INSERT INTO anatid_edges SELECT * REPLACE (7 AS edge_id, 999 AS src_id) FROM anatid_edges "
     "WHERE kind = 'about' AND src_id = $C",
     "dangling_about_edges", "error", 1, ["7"]),
    ("relates edge to a missing entity",
     "UPDATE anatid_edges SET dst_id = 999 WHERE edge_id = $rel_edge",
     "dangling_relates_edges", "error", 1, ["rel_edge"]),
    ("supersedes edge to a missing memory",
     "UPDATE anatid_edges SET dst_id = 999 WHERE edge_id = $sup_edge",
     "dangling_supersedes_edges", "error", 1, ["sup_edge"]),
    ("edge of an unknown kind",
     "UPDATE anatid_edges SET kind = 'likes' WHERE edge_id = $rel_edge",
     "unknown_edge_kinds", "error", 1, ["rel_edge"]),
    ("evidence of a deleted episode",
     "DELETE FROM anatid_episodes WHERE episode_id = $episode",
     "dangling_evidence_episodes", "error", 1, ["episode"]),
    ("evidence of an erased memory",
     "INSERT INTO anatid_evidence VALUES ($E, $episode, 1)",
     "dangling_evidence_memories", "error", 1, ["E"]),
    ("NaN in an embedding",
     "UPDATE anatid_embeddings SET embedding = [0, 'nan'::FLOAT, 0, 0]::FLOAT[] WHERE memory_id = $B",
     "embedding_non_finite", "error", 1, ["B"]),
    ("embedding of the wrong length",
     "UPDATE anatid_embeddings SET embedding = [0, 1, 0]::FLOAT[] WHERE memory_id = $B",
     "embedding_dimension", "error", 1, ["B"]),
    ("zero vector",
     "UPDATE anatid_embeddings SET embedding = [0, 0, 0, 0]::FLOAT[], norm = 0 WHERE memory_id = $A",
     "embedding_zero_norm", "warning", 1, ["A"]),
    ("stored norm differs from the vector",
     "UPDATE anatid_embeddings SET norm = 2 WHERE memory_id = $A",
     "embedding_norm_mismatch", "warning", 1, ["A"]),
    ("embedding of an erased memory",
     "INSERT INTO anatid_embeddings VALUES ($E, 1, [0, 0, 1, 0]::FLOAT[], 1)",
     "orphaned_embeddings", "error", 1, ["E"]),
    ("confidence 2.0",
     "UPDATE anatid_memories SET confidence = 2.0 WHERE memory_id = $C",
     "confidence_out_of_range", "error", 1, ["C"]),
    ("negative strength",
     "UPDATE anatid_memories SET strength = -1 WHERE memory_id = $C",
     "negative_strength", "error", 1, ["C"]),
    ("negative weight",
     "UPDATE anatid_edges SET weight = -0.5 WHERE edge_id = $rel_edge",
     "negative_weights", "error", 1, ["rel_edge"]),
    ("valid_to before valid_from",
     "UPDATE anatid_memories SET valid_to = valid_from - INTERVAL 1 SECOND WHERE memory_id = $A",
     "memory_interval_order", "error", 1, ["A"]),
    ("tx_to equal to tx_from",
     "UPDATE anatid_memories SET tx_to = tx_from WHERE memory_id = $B AND version = 1",
     "memory_interval_order", "error", 1, ["B"]),
    ("edge closed before it opened",
     "UPDATE anatid_edges SET valid_to = valid_from - INTERVAL 1 SECOND WHERE edge_id = $rel_edge",
     "edge_interval_order", "error", 1, ["rel_edge"]),
    ("postings left for an erased memory",
     "INSERT INTO anatid_postings VALUES (1, $E, 'secret', 1)",
     "orphaned_postings", "error", 1, ["E"]),
    ("text doc left for an erased memory",
     "INSERT INTO anatid_text_docs VALUES (1, $E, 2)",
     "orphaned_text_docs", "warning", 1, ["E"]),
    ("postings left for a forgotten memory",
     "INSERT INTO anatid_postings VALUES (1, $F, 'forgettable', 1)",
     "stale_postings", "warning", 1, ["F"]),
    ("text doc left for a forgotten memory",
     "INSERT INTO anatid_text_docs VALUES (1, $F, 1)",
     "stale_text_docs", "warning", 1, ["F"]),
    ("postings filed under another tenant",
     "UPDATE anatid_postings SET tenant_id = 3 WHERE memory_id = $C",
     "orphaned_postings", "error", 1, ["C"]),
    ("a dropped column",
     "ALTER TABLE anatid_memories DROP COLUMN last_used_at",
     "schema_missing_columns", "error", 1, ["anatid_memories.last_used_at"]),
    ("a column of another type",
     "ALTER TABLE anatid_audit ALTER COLUMN detail TYPE JSON",
     "schema_missing_columns", "error", 1, ["anatid_audit.detail"]),
    ("an extra column",
     "ALTER TABLE anatid_edges ADD COLUMN note VARCHAR",
     "schema_extra_columns", "warning", 1, ["anatid_edges.note"]),
]


@pytest.mark.parametrize("name,sql,check,severity,count,samples", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_each_corruption_gives_its_finding(copy, name, sql, check, severity, count, samples):
    path, ids = copy
    with Anatid.open(str(path), tenant=1) as db:
        db.connection.execute(sql, {k: v for k, v in ids.items() if f"${k}" in sql})
        report = db.doctor()
    expected = tuple(sorted(str(ids.get(s, s)) for s in samples))
    assert problems(report) == {check: (severity, count, expected)}
    assert report.ok is (severity != "error")


def test_doctor_writes_nothing(copy):
    """Table contents are identical before and after, on a file with problems of every kind."""
    path, ids = copy
    with Anatid.open(str(path), tenant=1) as db:
        for _, sql, *_ in CORRUPTIONS[:-3]:          # all but the schema changes
            db.connection.execute(sql, {k: v for k, v in ids.items() if f"${k}" in sql})
        before = repr(snapshot(db))                   # repr: NaN != NaN, but its text is stable
        report = db.doctor()
        assert repr(snapshot(db)) == before
    assert not report.ok and len(report.findings) >= 20


def test_missing_table_is_drift_and_its_checks_are_skipped(copy):
    path, ids = copy
    with Anatid.open(str(path)) as db:
        db.connection.execute("DROP TABLE anatid_text_docs")          # derived: costs speed only
        report = db.doctor()
        assert problems(report) == {"schema_missing_derived": ("warning", 3, (
            "anatid_text_docs.doc_len", "anatid_text_docs.memory_id", "anatid_text_docs.tenant_id"))}
        assert {"orphaned_text_docs", "stale_text_docs"} <= set(report.checks_skipped)
        assert report.ok
        db.connection.execute("DROP TABLE anatid_evidence")           # canonical: an error
        report = db.doctor()
    assert problems(report)["schema_missing_columns"] == ("error", 3, (
        "anatid_evidence.episode_id", "anatid_evidence.memory_id", "anatid_evidence.tenant_id"))
    assert "dangling_evidence_episodes" in report.checks_skipped and not report.ok


def test_samples_are_capped_and_sorted(copy):
    path, ids = copy
    with Anatid.open(str(path)) as db:
        db.connection.execute("INSERT INTO anatid_postings SELECT 1, r, 'x', 1 FROM range(100, 108) t(r)")
        finding = db.doctor().finding("orphaned_postings")
    assert finding.count == 8
    assert finding.sample_ids == ("100", "101", "102", "103", "104")


def test_findings_hold_ids_never_content(copy):
    path, ids = copy
    with Anatid.open(str(path)) as db:
        db.connection.execute("INSERT INTO anatid_postings VALUES (1, $E, 'secret', 1)", {"E": ids["E"]})
        text = repr(db.doctor().to_dict())
    assert "secret" not in text and "alice" not in text


def test_orphans_in_derived_index_tables(copy, monkeypatch):
    """Tables of sql/derived_*.sql are checked by their columns: memory_id rows of erased
    memories, parts of a vanished generation, generations older than a hard forget."""
    path, ids = copy
    fake = ("anatid_fake_gen", "anatid_fake_gen_parts", "anatid_fake_journal", "anatid_fake_terms")
    monkeypatch.setattr(doctor_module, "derived_index_tables", lambda: fake)
    monkeypatch.setattr(doctor_module, "TEXT_GENERATIONS", ("anatid_fake_gen",))
    with Anatid.open(str(path)) as db:
        con = db.connection
        con.execute("CREATE TABLE anatid_fake_journal (tenant_id BIGINT, memory_id BIGINT)")
        con.execute("CREATE TABLE anatid_fake_terms (tenant_id BIGINT, memory_id BIGINT, term VARCHAR)")
        con.execute("CREATE TABLE anatid_fake_gen (tenant_id BIGINT, gen_id BIGINT, built_at TIMESTAMP)")
        con.execute("CREATE TABLE anatid_fake_gen_parts (gen_id BIGINT, part INTEGER, payload BLOB)")
        con.execute("INSERT INTO anatid_fake_journal VALUES (1, $C), (1, $E)", {"C": ids["C"], "E": ids["E"]})
        con.execute("INSERT INTO anatid_fake_terms VALUES (1, $E, 'secret')", {"E": ids["E"]})
        erased_at, = con.execute("SELECT happened_at FROM anatid_audit WHERE verb = 'forget_hard'").fetchone()
        con.execute("INSERT INTO anatid_fake_gen VALUES (1, 10, $t - INTERVAL 1 SECOND), (1, 11, $t), "
                    "(2, 12, $t - INTERVAL 1 SECOND)", {"t": erased_at})
        con.execute("INSERT INTO anatid_fake_gen_parts VALUES (11, 0, 'x'::BLOB), (13, 0, 'y'::BLOB)")
        report = db.doctor()
    assert problems(report) == {
        "orphaned_rows:anatid_fake_journal": ("warning", 1, (str(ids["E"]),)),   # ids only
        "orphaned_rows:anatid_fake_terms": ("error", 1, (str(ids["E"]),)),       # may hold text
        "orphaned_parts:anatid_fake_gen_parts": ("error", 1, ("13",)),
        "generation_before_erase:anatid_fake_gen": ("error", 1, ("10",)),        # tenant 2 erased nothing
    }


def test_native_extension_findings(copy, monkeypatch, tmp_path):
    path, _ = copy
    monkeypatch.setenv("ANATID_NATIVE", "0")
    with Anatid.open(str(path), read_only=True) as db:
        report = db.doctor()
    assert report.ok and report.finding("native_extension").severity == "info"
    monkeypatch.delenv("ANATID_NATIVE")
    bogus = tmp_path / "not_an_extension.duckdb_extension"
    bogus.write_bytes(b"\0" * 64)
    monkeypatch.setenv("ANATID_EXTENSION_PATH", str(bogus))
    with Anatid.open(str(path), read_only=True) as db:
        finding = db.doctor().finding("native_extension")
    assert finding.severity == "warning" and "failed" in finding.message


def test_index_health_reasons_become_findings(copy):
    path, _ = copy
    with Anatid.open(str(path), read_only=True) as db:
        db.index_health = lambda: [
            {"index": "graph", "tenant": 1, "reason": "fresh"},
            {"index": "text", "tenant": 1, "reason": "absent"},
            {"index": "vector", "tenant": 1, "reason": "absent"},
            {"index": "graph", "tenant": 2, "reason": "damaged_base"},
        ]
        report = db.doctor()
    assert problems(report, indexes=True) == {"index_absent": ("info", 2, ("text@1", "vector@1")),
                                "index_damaged_base": ("warning", 1, ("graph@2",))}
    assert report.ok and "index_health" in report.checks_run


def test_every_check_is_documented():
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[1] / "docs" / "doctor.md").read_text(encoding="utf-8")
    names = [c.name for c in doctor_module.CHECKS] + ["native_extension", "orphaned_rows:", "orphaned_parts:",
                                                       "generation_before_erase:"]
    names += [f"index_{r}" for r in doctor_module.INDEX_REASON_SEVERITY]
    missing = [n for n in names if f"`{n}" not in doc]
    assert missing == []
