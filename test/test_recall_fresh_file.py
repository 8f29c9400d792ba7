"""recall() on a file that never ran maintain_indexes(): the native engine answers from the
journals alone (native_hybrid's lean statement over an empty base: anatid_hybrid_recall
ranks the journal rows with no generation, the graph arm from the graph journal alone)
instead of planning the anatid.anatid_hybrid macro. It must give the SQL oracle's ids, order, sources, hops and scores; say so in the
notes; answer the same on read-only handles and inside transactions; and step aside for
the lean path as soon as a generation exists, even one published by another handle."""
from __future__ import annotations

import random

import pytest

import anatid.store
from anatid import Anatid, BruteForceCeilingError, engines
from anatid.native_hybrid import ScanCeilingError

from conftest import at

DIM = 4
WORDS = "apple river stone cloud maple ember harbor ada bob".split()
NAMES = ["Ada", "Bob", "Cyd", "Dee Dee", "Eve"]
JOURNAL = "absent: no text or vector generation"
JOURNAL_GRAPH = "graph arm: the journal alone"   # no graph generation: the graph journal answers


def oracle(db, query, **kw):
    saved, engines._native_hybrid = engines._native_hybrid, None
    try:
        return db.recall(query, **kw)
    finally:
        engines._native_hybrid = saved


def both(db, query, **kw):
    native, expected = db.recall(query, **kw), oracle(db, query, **kw)
    assert native.engine == "native" and expected.engine == "sql"
    assert [(h.memory_id, h.sources, h.hop, h.content, h.kind) for h in native] == \
        [(h.memory_id, h.sources, h.hop, h.content, h.kind) for h in expected], (query, kw)
    for a, b in zip(native, expected):
        assert a.score == pytest.approx(b.score, rel=1e-12, abs=1e-15)
    return native


def journal_answered(hits) -> bool:
    return any(n.startswith(JOURNAL) for n in hits.notes)


def native_or_skip(db):
    if not db.native.loaded:
        db.close()
        pytest.skip(db.native.reason)


def shapes(rng):
    vec = [rng.uniform(-1, 1) for _ in range(DIM)]
    q = " ".join(rng.sample(WORDS + ["dee", "eve", "zzz"], rng.randint(1, 3)))
    k = rng.choice([1, 5, 10, 30])
    return [(q, {"k": k}), ("", {"embedding": vec, "k": k}), (q, {"embedding": vec, "k": k}),
            (q, {"embedding": vec, "seed_entity": rng.choice(NAMES), "k": k}),
            ("", {"seed_entity": rng.choice(NAMES), "k": k}),
            (q, {"k": k, "weights": {"text": 2.0, "graph": 0.5}, "depth": rng.choice([5, 50])})]


@pytest.mark.parametrize("seed", [3, 4])
def test_fresh_file_recalls_equal_the_oracle_under_mutations(tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "fresh.anatid")
    db = Anatid.open(path, tenant=1, embedding_dim=DIM)
    native_or_skip(db)
    other = Anatid.open(path, tenant=2, embedding_dim=DIM)   # same words and names: no leak either way
    live, journal, clock = [], 0, 0
    sentence = lambda: " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4))) or "-- !"   # no tokens
    vec = lambda: [rng.uniform(-1, 1) for _ in range(DIM)]
    try:
        for h in (db, other):
            clock += 1
            ids = h.remember_many([{"content": sentence(), "entities": rng.sample(NAMES, 2),
                                    "embedding": vec() if rng.random() < 0.8 else None} for _ in range(40)],
                                  now=at(clock))
            if h is db:
                live += ids
            for a, b in zip(NAMES, NAMES[2:]):
                clock += 1
                h.relate(a, b, "knows", now=at(clock))
        for step in range(12):
            clock += 1
            op = rng.random()
            if op < 0.3:
                live.append(db.remember(sentence(), entities=rng.sample(NAMES, rng.randint(0, 2)),
                                        embedding=vec() if rng.random() < 0.7 else None, now=at(clock)).memory_id)
            elif op < 0.45:
                mid = rng.choice(live)
                db.update(mid, sentence(), expected_version=db.get(mid).version, now=at(clock))
            elif op < 0.55:
                db.forget(live.pop(rng.randrange(len(live))), now=at(clock))
            elif op < 0.65:
                old = live.pop(rng.randrange(len(live)))
                live.append(db.supersede(old, sentence(), now=at(clock)).memory_id)
            elif op < 0.75:
                db.unrelate(NAMES[0], NAMES[2], "knows", now=at(clock))
                db.relate(NAMES[1], NAMES[4], "knows", now=at(clock + 0.5))
            for query, kw in shapes(rng):
                hits = both(db, query, **kw)
                journal += journal_answered(hits)
                assert not any("anatid.anatid_hybrid macro" in n for n in hits.notes), hits.notes
        assert journal >= 12 * 3     # text or vector arms ran from the journal at least thrice a step
        hits = both(db, "apple", embedding=vec(), seed_entity="Ada", k=10)
        assert any(n.startswith(JOURNAL_GRAPH) for n in hits.notes)
        # a hard forget of a fresh file's memory: still the journal, still the oracle's answers
        db.forget(live.pop(), hard=True, now=at(clock + 10))
        for query, kw in shapes(rng):
            assert journal_answered(both(db, query, **kw)) == bool(query or "embedding" in kw)
        # maintained: the lean path answers, and says nothing about the journal
        db.maintain_indexes()
        for query, kw in shapes(rng):
            hits = both(db, query, **kw)
        hits = both(db, "apple", embedding=vec(), seed_entity="Ada", k=10)
        assert not journal_answered(hits) and not hits.notes
        # the other tenant is still fresh: the journal answers it (its own rows only)
        hits = both(other, "apple river", embedding=vec(), k=30)
        assert journal_answered(hits) and {h.memory_id for h in hits}.isdisjoint(live)
    finally:
        db.close()
        other.close()


def fill(path, n=30):
    rng = random.Random(9)
    with Anatid.open(path, embedding_dim=DIM) as db:
        db.remember_many([{"content": " ".join(rng.choice(WORDS) for _ in range(3)), "entities": rng.sample(NAMES, 2),
                           "embedding": [rng.uniform(-1, 1) for _ in range(DIM)]} for _ in range(n)], now=at(1))
        db.relate("Ada", "Cyd", "knows", now=at(2))


def test_read_only_handles_and_transactions_use_the_journal(tmp_path):
    path = str(tmp_path / "ro.anatid")
    fill(path)
    with Anatid.open(path, read_only=True) as ro:
        native_or_skip(ro)
        for kw in ({"k": 5}, {"embedding": [0.1, 0.2, 0.3, 0.4], "k": 5, "seed_entity": "Ada"}):
            assert journal_answered(both(ro, "apple stone", **kw))
    with Anatid.open(path) as db:
        with db.transaction():
            m = db.remember("zebra crossing", embedding=[1.0, 0.0, 0.0, 0.0], now=at(3))
            hits = both(db, "zebra", embedding=[1.0, 0.0, 0.0, 0.0], k=3)  # the uncommitted write, in its snapshot
            assert journal_answered(hits) and hits[0].memory_id == m.memory_id


def test_a_generation_published_by_another_handle_takes_over(tmp_path):
    path = str(tmp_path / "takeover.anatid")
    fill(path)
    a, b = Anatid.open(path), Anatid.open(path)
    try:
        native_or_skip(a)
        assert journal_answered(both(a, "apple", k=5))           # remembered: the journal statement first next time
        assert journal_answered(both(a, "apple", k=5))
        b.maintain_indexes()
        hits = both(a, "apple", k=5)                              # that statement sees the generation: lean
        assert not journal_answered(hits)
        for i in range(3):
            a.remember(f"apple pie {i}", embedding=[0.5, 0.5, 0.0, 0.0], now=at(10 + i))
        assert not journal_answered(both(a, "apple pie", embedding=[0.5, 0.5, 0.0, 0.0], k=5))
        # text generation only (rebuild_fts_index): the first text recall needs the macro (it parses the
        # generation), a vector recall does not
        from anatid.indexes.text import rebuild_fts_index
        c = str(tmp_path / "mixed.anatid")
        fill(c)
        with Anatid.open(c) as m:
            rebuild_fts_index(m)
            assert not journal_answered(both(m, "apple", embedding=[0.1, 0.1, 0.1, 0.1], k=5))
            assert journal_answered(both(m, "", embedding=[0.1, 0.1, 0.1, 0.1], k=5))
            # the text generation parsed by then: the same statement ranks the vector journal alone
            hits = both(m, "apple", embedding=[0.1, 0.1, 0.1, 0.1], k=5)
            assert any(n.startswith("absent: no vector generation") for n in hits.notes), hits.notes
    finally:
        a.close()
        b.close()


def test_as_of_and_kinds_stay_with_the_oracle(tmp_path):
    path = str(tmp_path / "oracle.anatid")
    fill(path)
    with Anatid.open(path) as db:
        native_or_skip(db)
        assert db.as_of(at(1)).recall("apple", k=5).engine == "sql"
        assert db.recall("apple", k=5, kinds=["note"]).engine == "sql"


def test_ceilings_and_unjournalled_rows_fail_as_in_the_macro(tmp_path, monkeypatch):
    path = str(tmp_path / "ceiling.anatid")
    fill(path, n=6)
    with Anatid.open(path) as db:
        native_or_skip(db)
        monkeypatch.setattr(anatid.store, "SCAN_CEILING", 3)
        with pytest.raises(ScanCeilingError, match="SCAN_CEILING=3"):
            db.recall("apple river stone cloud maple ember harbor", k=3)
        monkeypatch.setattr(anatid.store, "BRUTE_FORCE_CEILING", 3)
        with pytest.raises(BruteForceCeilingError):
            db.recall("", embedding=[1.0, 0.0, 0.0, 0.0], k=3)
        assert len(db.recall("", embedding=[1.0, 0.0, 0.0, 0.0], k=3, allow_slow=True)) == 3
        monkeypatch.undo()
        # rows written by plain SQL, with no journal row: the SQL oracle answers (health.guard_hybrid's
        # 'absent'), as before the macro; inside a transaction too (nothing raised, nothing aborted)
        cur = db._store.read()
        cur.execute("INSERT INTO anatid_text_docs VALUES (0, 1, 1)")
        for kw in ({}, {"embedding": [1.0, 0.0, 0.0, 0.0]}):
            hits = db.recall("apple", k=3, **kw)
            assert hits.engine == "sql" and "the SQL oracle answers: absent" in hits.notes
            with db.transaction():
                assert db.recall("apple", k=3, **kw).engine == "sql"
                db.remember("still writable", now=at(20))
        cur.execute("DELETE FROM anatid_text_docs WHERE memory_id = 1")
        m = db.remember("vectorless", now=at(21))   # then given a vector by plain SQL
        cur.execute("INSERT INTO anatid_embeddings (memory_id, tenant_id, embedding, norm) "
                    "VALUES ($m, 0, [1, 1, 1, 1]::FLOAT[], 2.0)", {"m": m.memory_id})
        hits = db.recall("", embedding=[1.0, 0.0, 0.0, 0.0], k=3)
        assert hits.engine == "sql" and "the SQL oracle answers: absent" in hits.notes
        assert hits.notes and journal_answered(db.recall("apple", k=3))   # the text journal is whole
