"""Hybrid recall: native engine vs SQL oracle vs numpy brute force.

Random corpora, random mutation sequences (remember, update, supersede, forget,
hard forget, index rebuilds at random points) over several tenants of one file;
after every step a random query must give the same ids, in the same order, with
the same sources, on the native path and the SQL oracle, and each arm alone must
agree with a numpy brute force written from the contract in docs/architecture.md.
"""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from anatid import Anatid, engines
from anatid.indexes.text import rebuild_fts_index
from anatid.indexes.vector import rebuild_vector_index
from anatid.text import tokens_sql

from conftest import at

DIM = 8
WORDS = ("apple pie tart dinner guest peanut sauce friday menu café cafe naïve 東京 x1 42 "
         "garlic basil olive lemon thyme").split()
ENTITIES = ("Ann", "Bob", "Dinner", "Friday menu", "Cleo")


def native_only(db):
    if not db.native.loaded:
        pytest.skip(f"native extension not loaded: {db.native.reason}")


def both(db, query, **kw):
    """(native hits, oracle hits) of one recall."""
    native = db.recall(query, **kw)
    saved = engines._native_hybrid
    engines._native_hybrid = None
    try:
        oracle = db.recall(query, **kw)
    finally:
        engines._native_hybrid = saved
    assert native.engine == "native" and oracle.engine == "sql"
    return native, oracle


def same(native, oracle):
    assert [(h.memory_id, h.sources, h.hop) for h in native] == [(h.memory_id, h.sources, h.hop) for h in oracle]
    for a, b in zip(native, oracle):
        assert a.score == pytest.approx(b.score, rel=1e-12, abs=1e-15)
    assert native.bm25_stale is False and oracle.bm25_stale is False


def text_brute_force(db, query, depth):
    """BM25 over the visible documents, from the contract, in numpy/Python."""
    cur = db._store.read()
    terms = sorted(set(cur.execute(f"SELECT {tokens_sql('$q')}", {"q": query}).fetchone()[0]))
    view = db._store.view()
    rows = cur.execute(f"""SELECT memory_id, {tokens_sql('content')} FROM anatid_memories
                           WHERE tenant_id = $t AND tx_to IS NULL AND valid_from <= $at
                             AND (valid_to IS NULL OR valid_to > $at)""",
                       {"t": db.tenant, "at": view.valid_at}).fetchall()
    if not rows or not terms:
        return []
    n = float(len(rows))
    avgdl = float(sum(len(toks) for _, toks in rows)) / n
    df = {t: sum(1 for _, toks in rows if t in toks) for t in terms}
    scored = []
    for mid, toks in rows:
        s, hit = 0.0, False
        for t in terms:
            tf = toks.count(t)
            if tf:
                hit = True
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                # tf * 2.2 and 0.75 * len are exact DECIMALs in the SQL; round them once
                s += idf * (tf * 22 / 10) / (tf + 1.2 * (0.25 + (len(toks) * 75 / 100) / avgdl))
        if hit:
            scored.append((-float(np.float32(s)), mid))
    return [mid for _, mid in sorted(scored)[:depth]]


def vector_brute_force(db, q, depth):
    cur = db._store.read()
    view = db._store.view()
    rows = cur.execute("""SELECT e.memory_id, e.embedding, e.norm FROM anatid_embeddings e
                          JOIN anatid_memories m ON m.memory_id = e.memory_id
                          WHERE e.tenant_id = $t AND m.tx_to IS NULL AND m.valid_from <= $at
                            AND (m.valid_to IS NULL OR m.valid_to > $at)""",
                       {"t": db.tenant, "at": view.valid_at}).fetchall()
    qv = np.asarray(q, dtype=np.float64)
    qn = float(np.linalg.norm(qv))
    scored = []
    for mid, emb, norm in rows:
        e = np.asarray(emb, dtype=np.float32).astype(np.float64)
        dot = 0.0
        for x, y in zip(e, qv):       # dimension order, as the contract says
            dot += float(x) * float(y)
        scored.append((-float(np.float32(dot / (norm * qn))), mid))
    return [mid for _, mid in sorted(scored)[:depth]]


def sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9))) + rng.choice(["", ".", "!", " ?"])


def embedding(rng):
    return [rng.gauss(0, 1) for _ in range(DIM)]


def query(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_mutations_native_equals_oracle_and_brute_force(tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "hybrid.anatid")
    dbs = [Anatid.open(path, tenant=t, embedding_dim=DIM) for t in (0, 1, 2)]
    native_only(dbs[0])
    live = {t: [] for t in range(3)}
    clock = [0]

    def now():
        clock[0] += 1
        return at(clock[0])

    try:
        for step in range(40):
            t = rng.randrange(3)
            db = dbs[t]
            op = rng.random()
            if op < 0.45 or len(live[t]) < 3:
                kw = {"embedding": embedding(rng)} if rng.random() < 0.8 else {}
                ents = rng.sample(ENTITIES, rng.randint(0, 2))
                m = db.remember(sentence(rng), entities=ents, now=now(), **kw)
                live[t].append(m.memory_id)
            elif op < 0.55:
                mid = rng.choice(live[t])
                db.update(mid, sentence(rng), expected_version=db.get(mid).version, now=now())
            elif op < 0.65:
                old = live[t].pop(rng.randrange(len(live[t])))
                live[t].append(db.supersede(old, sentence(rng), embedding=embedding(rng), now=now()).memory_id)
            elif op < 0.72:
                db.forget(live[t].pop(rng.randrange(len(live[t]))), now=now())
            elif op < 0.77:
                db.forget(live[t].pop(rng.randrange(len(live[t]))), hard=True, now=now())
            elif op < 0.87:
                rebuild_fts_index(db)
            else:
                rebuild_vector_index(db)

            q, e = query(rng), embedding(rng)
            k = rng.choice([1, 5, 10, 30])
            same(*both(db, q, embedding=e, k=k))
            same(*both(db, q, k=k))
            same(*both(db, "", embedding=e, k=k))
            same(*both(db, q, seed_entity=rng.choice(ENTITIES), k=k))
            # each arm alone against numpy; a zero graph weight keeps the text arm's order
            depth = 50
            text_native = [h.memory_id for h in db.recall(q, k=depth, weights={"graph": 0.0}) if "text" in h.sources]
            assert text_native == text_brute_force(db, q, depth)
            vec_native = [h.memory_id for h in db.recall("", embedding=e, k=depth)]
            assert vec_native == vector_brute_force(db, e, depth)
    finally:
        for db in dbs:
            db.close()
