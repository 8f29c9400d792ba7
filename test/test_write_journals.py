"""remember and remember_many write their journal rows from the values in hand (no read
of the canonical tables); those rows must equal, column for column, what the read-back
form of each hook writes for the same memories."""
from __future__ import annotations

from anatid import Anatid
from anatid.indexes import graph, text, vector

from conftest import at

_COLS = {"anatid_text_journal": "memory_id, doc_len, vf, vt, postings",
         "anatid_vector_journal": "memory_id, vf, vt, norm, embedding",
         "anatid_graph_journal": "op, regexp_replace(entry, '^([0-9]+)\\|[0-9]+\\|', '\\1||') AS entry"}


def _rows(cur, table, seq_cut, after):
    op = ">" if after else "<="
    return sorted(cur.execute(f"SELECT {_COLS[table]} FROM {table} WHERE seq {op} $s", {"s": seq_cut}).fetchall())


def _check(db, mids):
    store = db._store
    cur = store.cursor()
    edges = cur.execute("SELECT src_id, dst_id FROM anatid_edges WHERE kind = 'about' ORDER BY edge_id").fetchall()
    cut = store.ids.take()[0]
    with store.write() as w:
        text._journal(store, w, mids)
        vec_ids = [r[0] for r in w.execute("SELECT memory_id FROM anatid_embeddings").fetchall()]
        if vec_ids:
            vector._journal(store, w, vec_ids)
        graph._about_added(store, w, edges, None)
    for table in _COLS:
        known, read_back = _rows(cur, table, cut, False), _rows(cur, table, cut, True)
        assert known == read_back, table
        assert known, table


def test_remember_journals_equal_the_read_back_form(tmp_path):
    db = Anatid.open(str(tmp_path / "j.anatid"), embedding_dim=3)
    mids = [
        db.remember("Café au lait with Ünïcode names", entities=["Zoë", "Ωmega ✓"], embedding=[1, 2, 3],
                    now=at(1)).memory_id,
        db.remember("plain ascii, 42 times: it's fine", entities=["alice", "Bob"], kind="event",
                    valid_from=at(0), valid_to=at(5), now=at(2)).memory_id,
        db.remember("...", entities=["alice"], now=at(3)).memory_id,            # no tokens at all
        db.remember("later fact", entities=["carol"], valid_from=at(50), embedding=[0, 0, 1], now=at(4)).memory_id,
    ]
    _check(db, mids)


def test_remember_many_journals_equal_the_read_back_form(tmp_path):
    db = Anatid.open(str(tmp_path / "m.anatid"), embedding_dim=2)
    got = db.remember_many([
        {"content": "первый факт about alice", "entities": ["alice", "Δ"], "embedding": [1, 0]},
        {"content": "second: alice and bob", "entities": ["alice", "bob"], "kind": "event", "valid_to": at(90)},
        {"content": "!!!", "entities": ["bob"], "embedding": [0, 1]},
    ] + [{"content": f"bulk note {i}", "entities": [f"e{i % 3}"], "embedding": [i / 7, 1 / (i + 1)],
          **({"valid_to": at(80)} if i % 2 else {})} for i in range(40)], now=at(1))
    _check(db, list(got))


def test_relate_many_equals_relate_one_by_one(tmp_path):
    """Same edges, same graph journal rows (but seq), same 2-hop recall as a relate loop."""
    pairs = [("alice", "bob", "knows"), ("Bob", "carol"), ("alice", "bob", "knows"), ("carol", "alice", "likes", 2.0),
             {"a": "dave", "b": "alice"}, ("bob", "alice", "knows")]
    dbs = []
    for name in ("loop", "many"):
        db = Anatid.open(str(tmp_path / f"{name}.anatid"))
        db.remember("alice met bob and carol", entities=["alice", "bob", "carol"], now=at(1))
        db.relate("alice", "dave", now=at(2))  # an edge that is already open
        dbs.append(db)
    loop, many = dbs
    one = [loop.relate(p["a"], p["b"], now=at(3)) if isinstance(p, dict) else loop.relate(*p[:3], **(
        {"weight": p[3]} if len(p) > 3 else {}), now=at(3 + i % 1)) for i, p in enumerate(pairs)]
    got = many.relate_many(pairs, now=at(3))
    strip = lambda e: (e.kind, e.rel_kind, e.weight, e.valid_from, e.valid_to)
    assert [strip(e) for e in got] == [strip(e) for e in one]
    assert got[0].edge_id == got[2].edge_id
    q = ("SELECT s.name, d.name, e.rel_kind, e.weight, e.valid_from FROM anatid_edges e JOIN anatid_entities s "
         "ON s.entity_id = e.src_id JOIN anatid_entities d ON d.entity_id = e.dst_id WHERE e.kind = 'relates' "
         "ORDER BY ALL")
    assert loop.connection.execute(q).fetchall() == many.connection.execute(q).fetchall()
    jq = ("SELECT DISTINCT op, regexp_replace(regexp_replace(entry, '^([0-9]+)\\|[0-9]+\\|', '\\1||'), "
          "'\\|[0-9]+\\|[0-9]+\\|', '|x|y|') FROM anatid_graph_journal WHERE op IN (1, 2) ORDER BY ALL")
    assert loop.connection.execute(jq).fetchall() == many.connection.execute(jq).fetchall()
    for seed in ("alice", "bob", "carol", "dave"):
        a = [(h.memory_id is not None, h.score) for h in loop.recall_2hop(seed, limit=10)]
        b = [(h.memory_id is not None, h.score) for h in many.recall_2hop(seed, limit=10)]
        assert a == b, seed


def test_known_entities_never_outlive_a_rolled_back_transaction(tmp_path):
    """remember skips the entity lookup for entities its handle saw committed; one created
    (or first seen) inside a transaction that rolls back must be looked up again."""
    import pytest
    db = Anatid.open(str(tmp_path / "e.anatid"))
    db.remember("alice is known", entities=["Alice"], now=at(1))
    with pytest.raises(RuntimeError):
        with db.transaction():
            db.remember("zed appears", entities=["Zed", "alice"], now=at(2))
            db.remember("zed again", entities=["zed"], now=at(3))
            raise RuntimeError("roll back")
    m = db.remember("zed for real", entities=["ZED", "ALICE"], now=at(4))
    assert list(m.entities) == ["ZED", "Alice"]         # first committed spelling wins
    rows = db.connection.execute("SELECT e.name FROM anatid_edges a JOIN anatid_entities e ON e.entity_id = a.dst_id "
                                 "WHERE a.src_id = $m ORDER BY e.name", {"m": m.memory_id}).fetchall()
    assert rows == [("Alice",), ("ZED",)]


def test_remember_many_stores_the_vectors_remember_stores(tmp_path):
    """remember_many validates its embeddings in one numpy pass and writes them through
    numpy: the stored FLOAT[] and norms equal remember()'s, one by one."""
    import random
    rng = random.Random(5)
    vecs = [[rng.uniform(-1e3, 1e3) / 7 for _ in range(5)] for _ in range(30)]
    one = Anatid.open(str(tmp_path / "one.anatid"))
    many = Anatid.open(str(tmp_path / "many.anatid"))
    for i, v in enumerate(vecs):
        one.remember(f"v{i}", embedding=v, now=at(1))
    many.remember_many([{"content": f"v{i}", "embedding": v} for i, v in enumerate(vecs)], now=at(1))
    q = ("SELECT m.content, e.embedding, e.norm FROM anatid_embeddings e JOIN anatid_memories m "
         "USING (memory_id) ORDER BY m.content")
    assert one.connection.execute(q).fetchall() == many.connection.execute(q).fetchall()
