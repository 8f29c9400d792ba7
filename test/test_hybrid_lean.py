"""The lean native hybrid path (native_hybrid.NativeHybridEngine._lean): a few small
statements and the aggregate anatid_hybrid_recall instead of the anatid.anatid_hybrid
macro. It must give the oracle's ids, order, sources and hops, and it tokenizes ASCII
queries itself: pin that ascii_tokens is SQL's tokenizer on every ASCII input."""
from __future__ import annotations

import random
import string

import duckdb
import pytest

import anatid.store
from anatid import Anatid, BruteForceCeilingError, engines
from anatid.native_hybrid import ascii_tokens
from anatid.text import tokens_sql

from conftest import at

DIM = 8
WORDS = "apple pie tart dinner guest peanut sauce friday menu bob smith ann x1 42 garlic basil".split()
# ASCII names, names with non-ASCII separators (settled by the Unicode pattern in SQL),
# a non-ASCII letter (never a seed of an ASCII query) and a name with a digit.
ENTITIES = ("Ann", "Bob", "Dinner", "Friday menu", "Bob\u2014Smith", "Zo\u00eb", "Apple\u00a0Pie", "x1 guest")


def test_ascii_tokens_is_the_sql_tokenizer_on_every_ascii_character_and_random_strings():
    con = duckdb.connect()
    toks = lambda s: con.execute(f"SELECT {tokens_sql('$s')}", {"s": s}).fetchone()[0]
    for c in range(128):               # every character alone and between two letters
        for s in (chr(c), f"a{chr(c)}B", f"{chr(c)}{chr(c)}9"):
            assert ascii_tokens(s) == toks(s), repr(s)
    rng = random.Random(5)
    alphabet = string.printable + "\x00\x01\x7f"
    for _ in range(500):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert ascii_tokens(s) == toks(s), repr(s)
    assert ascii_tokens("caf\u00e9") is None


def both(db, query, **kw):
    native = db.recall(query, **kw)
    saved, engines._native_hybrid = engines._native_hybrid, None
    try:
        oracle = db.recall(query, **kw)
    finally:
        engines._native_hybrid = saved
    assert native.engine == "native" and oracle.engine == "sql"
    assert [(h.memory_id, h.sources, h.hop, h.content, h.kind) for h in native] == \
        [(h.memory_id, h.sources, h.hop, h.content, h.kind) for h in oracle]
    for a, b in zip(native, oracle):
        assert a.score == pytest.approx(b.score, rel=1e-12, abs=1e-15)
    return native


@pytest.mark.parametrize("seed", [11, 12])
def test_lean_path_equals_oracle_under_mutations_with_every_generation(tmp_path, seed):
    rng = random.Random(seed)
    db = Anatid.open(str(tmp_path / "lean.anatid"), tenant=1, embedding_dim=DIM)
    if not db.native.loaded:
        pytest.skip(db.native.reason)
    other = Anatid.open(str(tmp_path / "lean.anatid"), tenant=2, embedding_dim=DIM)
    live, lean = [], 0
    vec = lambda: [rng.gauss(0, 1) for _ in range(DIM)]
    sentence = lambda: " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))
    try:
        for i in range(30):
            other.remember(sentence(), entities=["Bob"], embedding=vec(), now=at(i + 1))
            live.append(db.remember(sentence(), entities=rng.sample(ENTITIES, 2), embedding=vec(),
                                    now=at(i + 1)).memory_id)
        db.maintain_indexes()
        for step in range(30):
            op = rng.random()
            if op < 0.4:
                live.append(db.remember(sentence(), entities=rng.sample(ENTITIES, rng.randint(0, 2)),
                                        embedding=vec(), now=at(100 + step)).memory_id)
            elif op < 0.55:
                mid = rng.choice(live)
                db.update(mid, sentence(), expected_version=db.get(mid).version, now=at(100 + step))
            elif op < 0.65:
                db.forget(live.pop(rng.randrange(len(live))), now=at(100 + step))
            elif op < 0.75:
                db.maintain_indexes()
            q = " ".join(rng.choice(WORDS + ["Bob", "SMITH", "pie!", "zo"]) for _ in range(rng.randint(1, 3)))
            k = rng.choice([1, 5, 10, 40])
            for kw in ({"embedding": vec()}, {}, {"seed_entity": rng.choice(ENTITIES)}):
                hits = both(db, q, k=k, allow_slow=True, **kw)
                lean += not any("macro" in n for n in hits.notes)
            both(db, "", embedding=vec(), k=k, allow_slow=True)
        assert lean > 60      # most reads took the lean path (the rest: generations not yet parsed)
    finally:
        db.close()
        other.close()


def test_lean_path_seeds_from_the_query_and_non_ascii_queries(tmp_path):
    db = Anatid.open(str(tmp_path / "seeds.anatid"), embedding_dim=DIM)
    if not db.native.loaded:
        pytest.skip(db.native.reason)
    try:
        a = db.remember("about the smiths", entities=["Bob\u2014Smith"], now=at(1))
        b = db.remember("something else", entities=["Zo\u00eb"], now=at(2))
        db.remember("dessert", entities=["Apple\u00a0Pie"], now=at(3))
        db.maintain_indexes()
        both(db, "warm up", k=5)
        hits = both(db, "smith bob", k=5)        # the em dash separates the name's tokens
        assert a.memory_id in [h.memory_id for h in hits] and not hits.notes
        assert "graph" in hits[0].sources
        hits = both(db, "zo", k=5)               # "zoë" is one token: not a seed of "zo"
        assert b.memory_id not in [h.memory_id for h in hits]
        hits = both(db, "zoë", k=5)              # a non-ASCII query: SQL tokenizes it, then the lean path
        assert b.memory_id in [h.memory_id for h in hits] and not hits.notes
        both(db, "Zoë café ZOË 東京", k=5)
        both(db, "apple pie", k=5)
    finally:
        db.close()


def test_lean_path_vector_ceiling(tmp_path, monkeypatch):
    db = Anatid.open(str(tmp_path / "ceiling.anatid"), embedding_dim=DIM)
    if not db.native.loaded:
        pytest.skip(db.native.reason)
    try:
        for i in range(5):
            db.remember(f"note {i}", embedding=[float(i + 1)] * DIM, now=at(i + 1))
        db.maintain_indexes()
        db.recall("note", embedding=[1.0] * DIM, k=3)               # parses the generations
        monkeypatch.setattr(anatid.store, "BRUTE_FORCE_CEILING", 3)
        with pytest.raises(BruteForceCeilingError):
            db.recall("note", embedding=[1.0] * DIM, k=3)
        assert len(db.recall("note", embedding=[1.0] * DIM, k=3, allow_slow=True)) == 3
        saved, engines._native_hybrid = engines._native_hybrid, None
        try:
            with pytest.raises(BruteForceCeilingError):
                db.recall("note", embedding=[1.0] * DIM, k=3)
        finally:
            engines._native_hybrid = saved
    finally:
        db.close()


def test_lean_path_hydrates_untouched_hits_from_the_text_generation(tmp_path):
    """The aggregate returns content and kind for hits the text generation holds and no write
    touched since its build; a written hit comes back NULL there and is read from the table."""
    from anatid import native_hybrid
    db = Anatid.open(str(tmp_path / "hydrate.anatid"), embedding_dim=DIM)
    if not db.native.loaded:
        pytest.skip(db.native.reason)
    seen = []
    real = native_hybrid._hydrate_sql
    try:
        ids = [db.remember(f"pie number {i}", kind="fact" if i % 2 else "preference",
                           embedding=[float(i + 1)] + [1.0] * (DIM - 1), now=at(i + 1)).memory_id for i in range(6)]
        db.maintain_indexes()
        both(db, "pie", k=6)                                  # parses the generations
        native_hybrid._hydrate_sql = lambda view: seen.append(1) or real(view)
        hits = both(db, "pie", k=6)
        assert len(hits) == 6 and not seen and not hits.notes  # every hit from the generation
        both(db, "", embedding=[1.0] * DIM, k=6)                # vector-only: hydrated the same way
        assert not seen
        db.update(ids[2], "pie corrected", expected_version=1, now=at(50))
        hits = both(db, "pie", k=6)
        assert seen and "pie corrected" in [h.content for h in hits]
    finally:
        native_hybrid._hydrate_sql = real
        db.close()


def test_seed_cache_follows_inserts_rollbacks_and_out_of_order_ids(tmp_path):
    """native_hybrid.seeds_from_terms (a per-handle cache of entity name tokens) against
    SQL's rule evaluated on every name, after each kind of change to anatid_entities."""
    from anatid.native_hybrid import seeds_from_terms
    db = Anatid.open(str(tmp_path / "seedcache.anatid"), tenant=1)
    store, cur = db._store, db.connection.cursor()
    rule = (f"SELECT name_key FROM anatid_entities WHERE tenant_id = 1 AND len({tokens_sql('name')}) > 0 "
            f"AND list_has_all($terms, {tokens_sql('name')}) ORDER BY name_key")
    add = ("INSERT INTO anatid_entities (entity_id, tenant_id, name, name_key, kind, created_at) "
           "VALUES ($id, $tenant, $name, lower($name), NULL, TIMESTAMP '2026-01-01')")
    terms = sorted({"ann", "bob", "smith", "zoë", "x1", "guest", "apple", "pie", "friday", "menu", "late"})

    def same():
        assert seeds_from_terms(store, cur, 1, terms) == [r[0] for r in cur.execute(rule, {"terms": terms}).fetchall()]
    try:
        for name in ENTITIES:
            db.upsert_entity(name)
        db.upsert_entity("Ann", kind="person")       # a kind update changes nothing
        other = Anatid.open(str(tmp_path / "seedcache.anatid"), tenant=2)
        other.upsert_entity("Friday")                 # another tenant's entity is never a seed
        other.close()
        same()
        db.upsert_entity("Late guest")                # a new entity past the cached max
        same()
        cur.execute("BEGIN")
        cur.execute(add, {"id": 2**62, "tenant": 1, "name": "Phantom guest"})
        assert "phantom guest" in seeds_from_terms(store, cur, 1, sorted(terms + ["phantom"]))
        cur.execute("ROLLBACK")                       # the cache saw it: the count tells
        assert "phantom guest" not in seeds_from_terms(store, cur, 1, sorted(terms + ["phantom"]))
        same()
        cur.execute(add, {"id": 3, "tenant": 1, "name": "Early Apple"})   # below the cached max
        same()
        cur.execute(add, {"id": 4, "tenant": 1, "name": "Menu\u00e9 friday"})  # non-ASCII, below the max
        same()
        # a rolled-back id below the max, then another id below the max: count and max are
        # as the cache saw them inside the transaction, the set of ids is not
        cur.execute("BEGIN")
        cur.execute(add, {"id": 5, "tenant": 1, "name": "Phantom yak"})
        assert "phantom yak" in seeds_from_terms(store, cur, 1, sorted(terms + ["phantom", "yak"]))
        cur.execute("ROLLBACK")
        cur.execute(add, {"id": 6, "tenant": 1, "name": "Yak"})
        assert seeds_from_terms(store, cur, 1, sorted(terms + ["phantom", "yak"])) == \
            [r[0] for r in cur.execute(rule, {"terms": sorted(terms + ["phantom", "yak"])}).fetchall()]
        same()
    finally:
        db.close()


def test_query_seeds_resolve_in_the_rank_statement(tmp_path):
    """The seeds from the query are resolved in C++ on the graph fold (src/graph_seeds.hpp):
    an entity added after the build must be a seed at once, and a recall reads no entity
    table at all."""
    db = Anatid.open(str(tmp_path / "spec.anatid"), embedding_dim=DIM)
    if not db.native.loaded:
        pytest.skip(db.native.reason)
    try:
        db.remember("quince tart for dinner", entities=["Dinner"], now=at(1))
        db.remember("another note", entities=["Ann"], now=at(2))
        db.maintain_indexes()
        both(db, "quince tart", k=5)                 # no entity named quince yet
        q = db.remember("ripe in october", entities=["Quince"], now=at(3))
        hits = both(db, "quince tart", k=5)          # the new entity is a seed at once
        assert q.memory_id in [h.memory_id for h in hits if "graph" in h.sources]
        store, statements = db._store, []
        read = store.read

        class Counting:
            def __init__(self, cur):
                self._cur = cur

            def execute(self, sql, params=None):
                statements.append(sql)
                return self._cur.execute(sql, params)

            def __getattr__(self, name):
                return getattr(self._cur, name)
        store.read = lambda: Counting(read())
        try:
            db.recall("ripe october", k=5)          # no seed, nothing changed: the rank statement only
        finally:
            store.read = read
        # (a hit written after the build is read from anatid_memories: a second statement)
        assert "anatid_hybrid_recall" in statements[0] and not any("anatid_entities" in s for s in statements)
    finally:
        db.close()


def test_a_non_ascii_name_hands_the_seeds_to_python(tmp_path):
    """A name key C++ cannot tokenize exactly (not ASCII: DuckDB's Unicode lower() decides its
    tokens) makes the statement decline the seeds; Python resolves them, the answer is the
    oracle's, and the handle remembers to resolve them itself for that tenant."""
    from anatid import native_hybrid
    db = Anatid.open(str(tmp_path / "unicode.anatid"), embedding_dim=DIM)
    if not db.native.loaded:
        pytest.skip(db.native.reason)
    try:
        db.remember("Zoë bakes quince tart", entities=["Zoë"], now=at(1))
        db.remember("quince jam on toast", entities=["Jam"], now=at(2))
        db.remember("toast at breakfast", entities=["Jam", "Breakfast"], now=at(3))
        db.maintain_indexes()
        for query in ("zoë quince", "jam quince"):
            hits = both(db, query, k=5)
            assert any("graph" in h.sources for h in hits)
        assert native_hybrid._python_seeds_hint(db._store, db._store.tenant)
    finally:
        db.close()


def test_vector_only_recall_parses_the_text_generation_to_hydrate(tmp_path):
    """A workload without text queries never had the text generation parsed, so every hit was
    read from anatid_memories: the first such recall now parses it, the next ones hydrate from it."""
    from anatid import native_hybrid, text_resident
    db = Anatid.open(str(tmp_path / "veconly.anatid"), embedding_dim=DIM)
    if not db.native.loaded:
        pytest.skip(db.native.reason)
    seen = []
    real = native_hybrid._hydrate_sql
    try:
        for i in range(8):
            db.remember(f"plum number {i}", kind="fact", embedding=[float(i + 1)] + [1.0] * (DIM - 1), now=at(i + 1))
        db.maintain_indexes()
        cur = db.connection.cursor()
        assert cur.execute(text_resident._TEXT_RESIDENT, {"tenant": 0}).fetchone() == (False,)
        both(db, "", embedding=[1.0] * DIM, k=5)                # the macro (parses the vector generation)
        both(db, "", embedding=[1.0] * DIM, k=5)                # hydrated by SQL, and parses the text one
        assert cur.execute(text_resident._TEXT_RESIDENT, {"tenant": 0}).fetchone() == (True,)
        native_hybrid._hydrate_sql = lambda view: seen.append(1) or real(view)
        hits = both(db, "", embedding=[2.0] + [1.0] * (DIM - 1), k=5)
        assert len(hits) == 5 and not seen
    finally:
        native_hybrid._hydrate_sql = real
        db.close()
