"""Fault injection: damage a derived index (generation rows, BLOB bytes, postings, the
journals, the extension binary) and check that index_health() names the right reason
and every recall still equals the SQL oracle, with the reason in RecallHits.notes.

The files are built and maintained in a subprocess, so this process has never parsed
their generations: the first read here must meet the damage (a generation already in
the process cache would be answered from the cache, correctly, whatever the table holds).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import anatid
from anatid import Anatid
from anatid._native import NativeStatus
from anatid.verbs import indexes as index_verbs

PKG_ROOT = str(Path(anatid.__file__).resolve().parents[1])
ENTITIES = ["Ada", "Babbage", "Lovelace", "Turing", "Hopper", "Church", "Noether", "Gauss"]

# Builds template.anatid (two tenants), then one maintained copy per scenario, each with
# one write after its build so every journal holds a row.
BUILD = textwrap.dedent("""
    import random, shutil, sys
    import anatid
    out, names = sys.argv[1], sys.argv[2:]
    rng = random.Random(7)
    ents = %r
    words = "engine notes tea coffee proof machine loop tape compiler lambda".split()
    tpl = out + "/template.anatid"
    for tenant, n in ((1, 60), (2, 8)):
        with anatid.Anatid.open(tpl, tenant=tenant, embedding_dim=4) as db:
            for a, b in zip(ents, ents[1:6]):
                db.relate(a, b)
            for i in range(n):
                about = rng.sample(ents, rng.randint(1, 2))
                text = " ".join(rng.choice(words) for _ in range(rng.randint(2, 6)))
                db.remember(text, about, embedding=[rng.uniform(-1, 1) for _ in range(4)])
    for name in names:
        path = f"{out}/{name}.anatid"
        shutil.copy(tpl, path)
        with anatid.Anatid.open(path, tenant=1) as db:
            db.maintain_indexes(all_tenants=True)
            db.remember("tape engine written after the build", ["Ada"], embedding=[0.5, 0.5, 0.5, 0.5])
""") % (ENTITIES,)

SCENARIOS = ["text_truncated", "text_flipped", "vector_flipped", "graph_flipped", "graph_truncated",
             "text_deleted", "graph_deleted", "postings_dropped", "text_journal_truncated",
             "graph_journal_truncated", "journal_truncated_later", "journals_reordered", "race", "crash", "binary", "other_version", "graph_marker_lost"]


def run(code: str, *args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": PKG_ROOT, **(env or {})}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=full, timeout=120)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    with Anatid.open(":memory:") as probe:
        if not probe.native.loaded:
            pytest.skip(f"needs the native extension: {probe.native.reason}")
    out = tmp_path_factory.mktemp("faults")
    run(BUILD, str(out), *SCENARIOS)
    return out


def open_copy(files, name: str, tenant: int = 1) -> Anatid:
    return Anatid.open(str(files / f"{name}.anatid"), tenant=tenant)


def queries(db: Anatid) -> dict:
    """Every read path, as (id, hop or rounded score) lists, and their notes."""
    out, notes = {}, {}
    for name, hits in (("2hop", db.recall_2hop("Ada")), ("ctx", db.context("Turing", hops=1)),
                       ("text", db.recall("engine tape", k=10)),
                       ("vector", db.recall("", embedding=[0.5, 0.5, 0.5, 0.5], k=10)),
                       ("hybrid", db.recall("proof machine", embedding=[1, 0, 0, 0], seed_entity="Hopper", k=10))):
        out[name] = [(h.memory_id, h.hop if h.hop is not None else round(h.score, 6)) for h in hits]
        notes[name] = hits.notes
    return {"answers": out, "notes": notes}


def oracle(db: Anatid) -> dict:
    """The same reads through the SQL oracle (the native engines switched off for the call)."""
    store = db._store
    native, store.native = store.native, NativeStatus(False, "oracle run")
    try:
        return queries(db)["answers"]
    finally:
        store.native = native


def reasons(db: Anatid) -> dict:
    return {(e["index"], e["tenant"]): e["reason"] for e in db.index_health(all_tenants=True)}


def payload(con, table: str, part: int | None, tenant: int = 1) -> tuple[int, bytes]:
    if table == "graph":
        gen, blob = con.execute("SELECT generation_id, blob FROM anatid_graph_generations WHERE tenant_id = ?",
                                [tenant]).fetchone()
        return gen, bytes(blob)
    gen, blob = con.execute(f"SELECT g.gen_id, p.payload FROM anatid_{table}_gen g JOIN anatid_{table}_gen_parts p "
                            "ON p.gen_id = g.gen_id WHERE g.tenant_id = ? AND p.part = ?", [tenant, part]).fetchone()
    return gen, bytes(blob)


def put(con, table: str, part: int | None, gen: int, data: bytes) -> None:
    if table == "graph":
        con.execute("UPDATE anatid_graph_generations SET blob = ? WHERE generation_id = ?", [data, gen])
    else:
        con.execute(f"UPDATE anatid_{table}_gen_parts SET payload = ? WHERE gen_id = ? AND part = ?", [data, gen, part])


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x5A]) + data[at + 1:]


def assert_bypassed(db: Anatid, index: str, reason: str, reads: tuple[str, ...]):
    """Reads meet the damage on their own, before index_health() has looked."""
    got = queries(db)
    assert reasons(db)[(index, 1)] == reason
    assert got["answers"] == oracle(db)
    for name in reads:
        assert reason in got["notes"][name], (name, got["notes"][name])
    assert reasons(db)[(index, 2)] != reason       # the other tenant is untouched


# ---- damaged generation rows ---------------------------------------------------------

@pytest.mark.parametrize("name, table, part, damage", [
    ("text_truncated", "text", 9, lambda b: b[:-4]),                    # a part shorter than its header says
    ("text_flipped", "text", 1, lambda b: flip(b, 3)),                   # a memory id changed, lengths intact
    ("vector_flipped", "vector", 5, lambda b: flip(b, 10)),              # a vector component changed
    ("graph_flipped", "graph", None, lambda b: flip(b, len(b) // 2)),    # parses, or not: the checksum decides
    ("graph_truncated", "graph", None, lambda b: b[: len(b) - 9]),
])
def test_a_damaged_generation_is_bypassed(files, name, table, part, damage):
    with open_copy(files, name) as db:
        con = db.connection
        gen, data = payload(con, table, part)
        put(con, table, part, gen, damage(data))
        reads = {"text": ("text", "hybrid"), "vector": ("vector", "hybrid"), "graph": ("2hop", "ctx")}[table]
        assert_bypassed(db, table, "damaged_base", reads)
        report = db.doctor()
        assert report.finding("index_damaged_base").sample_ids == (f"{table}@1",)
        # maintenance rebuilds it from the canonical tables, and reads are native again
        built = db.maintain_indexes()
        assert built[table]["tenants"] and reasons(db)[(table, 1)] == "fresh"
        again = queries(db)
        assert again["answers"] == oracle(db)
        assert all("damaged_base" not in n for n in again["notes"].values())


def test_a_generation_of_another_format_version_is_bypassed(files):
    """A file maintained by another anatid version: its bases are not parsed, and rebuilt."""
    with open_copy(files, "other_version") as db:
        con = db.connection
        con.execute("UPDATE anatid_graph_generations SET format_version = format_version + 1 WHERE tenant_id = 1")
        gen, header = payload(con, "text", 0)
        put(con, "text", 0, gen, flip(header, 0))          # the magic, which names the layout's version
        assert_bypassed(db, "graph", "damaged_base", ("2hop", "ctx"))
        assert reasons(db)[("text", 1)] == "damaged_base" and "damaged_base" in queries(db)["notes"]["text"]
        db.maintain_indexes()
        assert {reasons(db)[(i, 1)] for i in ("graph", "text")} == {"fresh"}


@pytest.mark.parametrize("name, table", [("text_deleted", "text"), ("graph_deleted", "graph")])
def test_deleted_generation_rows(files, name, table):
    with open_copy(files, name) as db:
        con = db.connection
        if table == "graph":
            con.execute("DELETE FROM anatid_graph_generations WHERE tenant_id = 1")
            # the journal still names the generation it was built on
            assert_bypassed(db, "graph", "damaged_base", ("2hop", "ctx"))
        else:
            con.execute("DELETE FROM anatid_text_gen_parts WHERE gen_id IN "
                        "(SELECT gen_id FROM anatid_text_gen WHERE tenant_id = 1)")
            con.execute("DELETE FROM anatid_text_gen WHERE tenant_id = 1")
            assert_bypassed(db, "text", "absent", ("text",))
        db.maintain_indexes()
        assert reasons(db)[(table, 1)] == "fresh" and queries(db)["answers"] == oracle(db)


def test_postings_dropped_under_an_intact_doc_map_are_caught_by_validation(files):
    """The base built from such postings would be consistent yet wrong: the rebuild's
    validation re-derives the memory's postings from its text before publishing."""
    with open_copy(files, "postings_dropped") as db:
        con = db.connection
        victim, = con.execute("SELECT memory_id FROM anatid_text_docs WHERE tenant_id = 1 AND doc_len > 2 "
                              "ORDER BY memory_id LIMIT 1").fetchone()
        term, = con.execute("SELECT min(term) FROM anatid_postings WHERE memory_id = ?", [victim]).fetchone()
        con.execute("DELETE FROM anatid_postings WHERE memory_id = ?", [victim])
        report = db.maintain_indexes(force=True)
        assert report["text"]["tenants"][0]["repaired"] == [str(victim)]
        hits = db.recall(term, k=100)
        assert victim in [h.memory_id for h in hits]
        assert queries(db)["answers"] == oracle(db)
        assert con.execute("SELECT count(*) FROM anatid_postings WHERE memory_id = ?", [victim]).fetchone()[0] > 0


# ---- the journals ----------------------------------------------------------------------

def test_a_truncated_text_journal_is_found_and_bypassed(files):
    """The read's journal invariant: a memory written after the base has no text journal row."""
    with open_copy(files, "text_journal_truncated") as db:
        db.connection.execute("DELETE FROM anatid_text_journal WHERE tenant_id = 1")   # the post-build write's row
        assert_bypassed(db, "text", "damaged_base", ("text", "hybrid"))
        assert "tape engine written after the build" in [h.content for h in db.recall("written after", k=5)]
        assert db.doctor().finding("index_damaged_base").sample_ids == ("text@1",)
        db.maintain_indexes()
        assert reasons(db)[("text", 1)] == "fresh" and queries(db)["answers"] == oracle(db)


def test_a_truncated_graph_journal_is_found_and_bypassed(files):
    """The read's journal invariant: an ABOUT edge written after the base has no graph journal row."""
    with open_copy(files, "graph_journal_truncated") as db:
        db.connection.execute("DELETE FROM anatid_graph_journal WHERE tenant_id = 1 AND op = 3")
        assert_bypassed(db, "graph", "damaged_base", ("2hop", "ctx"))
        db.maintain_indexes()
        assert reasons(db)[("graph", 1)] == "fresh" and queries(db)["answers"] == oracle(db)


def test_a_journal_truncated_between_reads_is_met_by_the_next_read(files):
    """The same handle read (and verified) the journal before it lost a row: the next read
    sees the row count change and checks again."""
    with open_copy(files, "journal_truncated_later") as db:
        before = queries(db)
        assert before["answers"] == oracle(db) and not any("damaged_base" in n for n in before["notes"].values())
        db.connection.execute("DELETE FROM anatid_vector_journal WHERE tenant_id = 1")
        got = queries(db)
        assert "damaged_base" in got["notes"]["vector"] and got["answers"] == oracle(db)
        assert reasons(db)[("vector", 1)] == "damaged_base" and reasons(db)[("vector", 2)] != "damaged_base"


def test_a_graph_journal_without_its_base_marker(files):
    with open_copy(files, "graph_marker_lost") as db:
        db.connection.execute("DELETE FROM anatid_graph_journal WHERE tenant_id = 1 AND op = 0")
        assert_bypassed(db, "graph", "damaged_base", ("2hop", "ctx"))


def test_reordered_journals_change_nothing(files):
    with open_copy(files, "journals_reordered") as db:
        con = db.connection
        for table in ("anatid_text_journal", "anatid_vector_journal", "anatid_graph_journal"):
            con.execute(f"CREATE TEMP TABLE j AS SELECT * FROM {table} ORDER BY seq DESC, random()")
            con.execute(f"DELETE FROM {table}")
            con.execute(f"INSERT INTO {table} SELECT * FROM j")
            con.execute("DROP TABLE j")
        assert set(reasons(db).values()) == {"stale_generation", "fresh"}
        got = queries(db)
        assert got["answers"] == oracle(db)
        assert all(not n or "damaged_base" not in n for n in got["notes"].values())


# ---- concurrent writes and crashes ------------------------------------------------------

def test_a_write_racing_a_build_is_kept(files, monkeypatch):
    with open_copy(files, "race") as db:
        written = []

        def racer(index):
            if index == "text" and not written:
                t = threading.Thread(target=lambda: written.append(db.remember("raced quokka", ["Ada"])))
                t.start()
                t.join()

        monkeypatch.setattr(index_verbs, "_before_publish", racer)
        db.maintain_indexes(force=True)
        monkeypatch.setattr(index_verbs, "_before_publish", None)
        mid = written[0].memory_id
        pending = {e["index"]: e["pending_rows"] for e in db.index_health()}
        assert pending["text"] >= 1            # its journal row was not absorbed by the build
        found = db.recall("quokka")            # the only text match, first; the graph arm adds Ada's others
        assert found[0].memory_id == mid and "text" in found[0].sources
        assert [h.memory_id for h in found if "text" in h.sources] == [mid]
        assert mid in [h.memory_id for h in db.recall_2hop("Ada")]
        assert queries(db)["answers"] == oracle(db)


CRASH = textwrap.dedent("""
    import os, signal, sys
    import anatid
    from anatid.verbs import indexes
    def die(index):
        if index == "text":
            print("building", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
    indexes._before_publish = die
    with anatid.Anatid.open(sys.argv[1], tenant=1) as db:
        db.remember("engine written before the crash", ["Ada"])
        db.maintain_indexes(force=True)
""")


def test_a_build_killed_midway_publishes_nothing_half_built(files):
    path = str(files / "crash.anatid")
    with Anatid.open(path, tenant=1) as db:
        before = {e["index"]: e["generation_id"] for e in db.index_health()}
    done = run(CRASH, path, check=False)
    assert done.returncode == -signal.SIGKILL and "building" in done.stdout
    with Anatid.open(path, tenant=1) as db:
        after = {e["index"]: (e["generation_id"], e["reason"]) for e in db.index_health()}
        assert after["graph"][0] != before["graph"] and after["graph"][1] == "fresh"   # its own transaction
        assert after["text"] == (before["text"], "stale_generation")     # the old base, whole, plus its journal
        assert after["vector"][0] == before["vector"]
        assert queries(db)["answers"] == oracle(db)
        assert db.recall("before the crash", k=3)[0].content == "engine written before the crash"


# ---- the extension binary ----------------------------------------------------------------

PROBE = textwrap.dedent("""
    import json, sys
    import anatid
    if len(sys.argv) > 2:
        import anatid._native
        anatid._native.__version__ = sys.argv[2]
    with anatid.Anatid.open(sys.argv[1], tenant=1, read_only=True) as db:
        hits = [db.recall_2hop("Ada"), db.recall("engine tape", k=10),
                db.recall("proof", embedding=[1, 0, 0, 0], k=10)]
        print(json.dumps({"native": db.native.loaded, "why": db.native.reason,
                          "health": sorted({e["reason"] for e in db.index_health()}),
                          "ids": [[h.memory_id for h in r] for r in hits], "notes": [list(r.notes) for r in hits]}))
""")


def test_a_missing_garbage_or_mismatched_extension_is_a_load_failure(files, tmp_path):
    path = str(files / "binary.anatid")
    want = json.loads(run(PROBE, path, env={"ANATID_NATIVE": "0"}).stdout)
    assert want["health"] == ["load_failure"] and all("load_failure" in n for n in want["notes"])
    garbage = tmp_path / "anatid.duckdb_extension"
    garbage.write_bytes(random.Random(1).randbytes(4096))
    cases = [({"ANATID_EXTENSION_PATH": str(tmp_path / "missing.duckdb_extension")}, (), "not found"),
             ({"ANATID_EXTENSION_PATH": str(garbage)}, (), "failed"),
             ({}, ("0.0.0-mismatch",), "version")]
    for env, extra, why in cases:
        got = json.loads(run(PROBE, path, *extra, env=env).stdout)
        assert not got["native"] and why in got["why"], got["why"]
        assert got["health"] == ["load_failure"]
        assert got["ids"] == want["ids"] and all("load_failure" in n for n in got["notes"])
