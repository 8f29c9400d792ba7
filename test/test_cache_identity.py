"""Process-wide native caches serve the file that asked, never another file that happens to
share a generation id.

Generation ids are per-file `(ms << 20) | counter` (anatid.ids), so two files maintained in
the same millisecond can hold equal ids. Every process-wide cache is keyed by (generation id,
random nonce) (STYLE.md rule 18); here the id clock is frozen so two pool tenants' files get
equal ids for certain, and each must still answer with its own memories.
"""
from __future__ import annotations

import threading
import types

import pytest

import anatid
from anatid import ids as anatid_ids
from anatid.pool import DatabasePool
from anatid.verbs.graph_sql import graph_recall_oracle
from anatid import validate

FROZEN_S = 1_900_000_000.0     # any fixed instant after the id epoch

# tenant name -> (entity, memory contents): one entity, two memories, the same shape in
# every file (the same id sequence), different names and text
TENANTS = {"alpha": ("Ada", ["Ada wrote the first program", "Ada met Babbage"]),
           "beta": ("Bob", ["Bob repaired the loom", "Bob sold the loom"])}


@pytest.fixture
def frozen_ids(monkeypatch):
    """Every id allocator reads one instant: files written in the same order get equal ids."""
    monkeypatch.setattr(anatid_ids, "time", types.SimpleNamespace(time=lambda: FROZEN_S))


def _fill(db, entity, contents):
    mids = [db.remember(text, [entity]).memory_id for text in contents]
    db.maintain_indexes()
    return mids


def _graph_gen(db):
    return db.stats()["graph"]["generation_id"]


def _check_own(db, entity, contents):
    own = set(contents)
    for hits in (db.recall_2hop(entity), db.context(entity, hops=1), db.recall(contents[0].split()[-1], k=5)):
        got = {h.content for h in hits}
        assert got and got <= own, (hits.engine, hits.notes, got)
    assert {h.content for h in db.recall_2hop(entity)} == own


def test_two_pool_files_with_equal_generation_ids_each_answer_their_own(tmp_path, frozen_ids):
    with DatabasePool("{tenant}.anatid", root=tmp_path / "pool", max_open=4) as pool:
        dbs = {name: pool.get(name) for name in TENANTS}
        for name, (entity, contents) in TENANTS.items():
            _fill(dbs[name], entity, contents)
        gens = {name: _graph_gen(db) for name, db in dbs.items()}
        if dbs["alpha"].native.loaded:                         # (pure SQL builds no generation)
            assert gens["alpha"] == gens["beta"] is not None  # the collision this test is about
        for _ in range(2):                                     # the second round reads from the caches
            for name, (entity, contents) in TENANTS.items():
                _check_own(dbs[name], entity, contents)
        if dbs["alpha"].native.loaded:                         # and the health checks agree
            for db in dbs.values():
                graph = [r for r in db.index_health(deep=True) if r["index"] == "graph"]
                assert [r["reason"] for r in graph] == ["fresh"], graph


def test_two_handles_outside_a_pool_with_equal_generation_ids(tmp_path, frozen_ids):
    paths = {name: str(tmp_path / f"{name}.anatid") for name in TENANTS}
    with anatid.Anatid.open(paths["alpha"]) as a, anatid.Anatid.open(paths["beta"]) as b:
        handles = {"alpha": a, "beta": b}
        for name, (entity, contents) in TENANTS.items():
            _fill(handles[name], entity, contents)
        assert _graph_gen(a) == _graph_gen(b)        # equal ids (None without the extension)
        # beta's generation is the one loaded last; alpha must not be served beta's
        for name in ("alpha", "beta", "alpha"):
            _check_own(handles[name], *TENANTS[name])


def _native_matches_oracle(db, entity) -> bool:
    from anatid.native_graph import recall_ids
    store = db._store
    if not store.native.loaded:
        return True
    cur = store.read()
    key = [validate.name_key(entity)]
    native = recall_ids(cur, store.tenant, key, 2, 50, None, None)
    oracle = graph_recall_oracle(store, cur, store.view(None), key, 2, None, 50)
    return native is not None and [m for m, _ in native] == [h.memory_id for h in oracle]


def test_concurrent_maintain_on_two_pool_tenants(tmp_path, frozen_ids):
    """maintain_indexes() on two tenants at once, 20 times: every read afterwards is each
    tenant's own, and the native answer equals the SQL oracle's."""
    with DatabasePool("{tenant}.anatid", root=tmp_path / "pool", max_open=4) as pool:
        dbs = {name: pool.get(name) for name in TENANTS}
        for name, (entity, contents) in TENANTS.items():
            for text in contents:
                dbs[name].remember(text, [entity])
        failures = []
        for trial in range(20):
            for name, (entity, _) in TENANTS.items():
                dbs[name].remember(f"{entity} trial {trial}", [entity])
            start = threading.Barrier(len(dbs))

            def run(db):
                start.wait()
                db.maintain_indexes()

            threads = [threading.Thread(target=run, args=(db,)) for db in dbs.values()]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for name, (entity, contents) in TENANTS.items():
                db = dbs[name]
                got = {h.content for h in db.recall_2hop(entity, limit=100)}
                want = set(contents) | {f"{entity} trial {i}" for i in range(trial + 1)}
                if got != want or not _native_matches_oracle(db, entity):
                    failures.append((trial, name, sorted(want - got)))
        assert not failures, failures


# ---- files written before graph generations had a nonce --------------------------------

def _make_unkeyed(path):
    """The file as an anatid from before nonces left it: no nonce column, nonce-less markers."""
    import duckdb
    con = duckdb.connect(path)
    try:
        con.execute("ALTER TABLE anatid_graph_generations DROP COLUMN nonce")
        con.execute("UPDATE anatid_graph_journal SET entry = concat('0|', split_part(entry, '|', 2), '|', "
                    "split_part(entry, '|', 3), '||||||') WHERE op = 0")
    finally:
        con.close()


def test_an_unkeyed_file_read_only_answers_via_the_oracle_and_read_write_migrates(tmp_path, frozen_ids):
    paths = {name: str(tmp_path / f"{name}.anatid") for name in TENANTS}
    for name, (entity, contents) in TENANTS.items():
        with anatid.Anatid.open(paths[name]) as db:
            native = db.native.loaded
            _fill(db, entity, contents)
    if not native:
        pytest.skip("pure SQL builds no graph generation: nothing to migrate")
    _make_unkeyed(paths["alpha"])
    with anatid.Anatid.open(paths["beta"]) as beta:        # beta's generation, same id, in the cache
        _check_own(beta, *TENANTS["beta"])
        with anatid.Anatid.open(paths["alpha"], read_only=True) as old:
            entity, contents = TENANTS["alpha"]
            hits = old.recall_2hop(entity)
            assert {h.content for h in hits} == set(contents)
            assert "unkeyed_generation" in hits.notes, hits.notes
            assert {h.content for h in old.context(entity, hops=1)} == set(contents)
            graph = [r for r in old.index_health() if r["index"] == "graph"]
            assert [r["reason"] for r in graph] == ["absent"] and "predates nonces" in graph[0]["detail"]
        with anatid.Anatid.open(paths["alpha"]) as migrated:   # read-write: the nonce is added
            cur = migrated._store.read()
            nonce = cur.execute("SELECT nonce FROM anatid_graph_generations").fetchone()[0]
            marker = cur.execute("SELECT entry FROM anatid_graph_journal WHERE op = 0").fetchone()[0]
            assert nonce is not None and marker.split("|")[3] == str(nonce)
            hits = migrated.recall_2hop(entity)
            assert {h.content for h in hits} == set(contents)
            assert hits.engine == "native" and "unkeyed_generation" not in hits.notes, hits.notes
            _check_own(migrated, *TENANTS["alpha"])
            _check_own(beta, *TENANTS["beta"])


# ---- the Python-side process-wide state -----------------------------------------------

def test_two_in_memory_files_do_not_share_index_health_state():
    """health's damaged flags are process-wide, keyed by the file: two ":memory:" handles are
    two files (their paths are the same string), and a flag on one must not send the
    other's reads to the SQL oracle as damaged."""
    from anatid.indexes import health
    with anatid.Anatid.open(":memory:") as a, anatid.Anatid.open(":memory:") as b:
        for db, (entity, contents) in zip((a, b), TENANTS.values()):
            _fill(db, entity, contents)
        health.mark_damaged(a._store, "graph", 0, "test: a's base is damaged")
        try:
            assert health.flagged(a._store, "graph", 0)
            assert health.flagged(b._store, "graph", 0) is None
            hits = b.recall_2hop("Bob")
            assert "damaged_base" not in hits.notes and {h.content for h in hits} == set(TENANTS["beta"][1])
            assert "damaged_base" in a.recall_2hop("Ada").notes or not a.native.loaded
        finally:
            health.clear_damaged(a._store, "graph", [0])
