"""remember_many writes every table from registered relations and builds its journals
set-wise: the canonical and derived rows it writes equal a remember() loop's, its journal
rows equal the read-back form's, and the batch shapes with an empty relation (no tokens,
no entities, no vectors, no writer) still write the right rows."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from anatid import Anatid
from anatid.errors import ValidationError

from conftest import at
from test_write_journals import _check

ITEMS = [
    {"content": "Ünïcode Café, déjà vu ✓ 42", "entities": ["Zoë", "alice"], "embedding": [0.5, -1.0, 2.0]},
    {"content": "plain ascii: alice, alice and BOB", "entities": ["Alice", " bob "], "kind": "event",
     "confidence": 0.25, "writer": "w1"},
    {"content": "...", "entities": []},                                       # no tokens at all
    {"content": "日本語のテキスト and ascii", "valid_from": at(-9), "valid_to": at(50), "embedding": [1, 0, 0]},
    {"content": "later fact", "entities": ["carol", "CAROL"], "valid_from": at(40)},
]

# Everything a memory leaves behind, keyed by content instead of ids and instants.
_QUERIES = [
    "SELECT content, version, kind, confidence, strength, writer, valid_from, valid_to, tx_from FROM anatid_memories",
    "SELECT m.content, e.name, a.valid_from FROM anatid_edges a JOIN anatid_memories m ON m.memory_id = a.src_id "
    "JOIN anatid_entities e ON e.entity_id = a.dst_id WHERE a.kind = 'about'",
    "SELECT name, name_key FROM anatid_entities",
    "SELECT m.content, p.term, p.tf FROM anatid_postings p JOIN anatid_memories m USING (memory_id)",
    "SELECT m.content, d.doc_len FROM anatid_text_docs d JOIN anatid_memories m USING (memory_id)",
    "SELECT m.content, e.embedding, e.norm FROM anatid_embeddings e JOIN anatid_memories m USING (memory_id)",
    "SELECT m.content, j.doc_len, j.vf, j.vt, j.postings FROM anatid_text_journal j "
    "JOIN anatid_memories m USING (memory_id)",
    "SELECT m.content, j.vf, j.vt, j.norm, j.embedding FROM anatid_vector_journal j JOIN anatid_memories m "
    "USING (memory_id)",
    "SELECT op, regexp_replace(entry, '^([0-9]+)\\|[0-9]+\\|[0-9]+\\|[0-9]+\\|', '\\1||||') FROM anatid_graph_journal "
    "WHERE op = 3",
]


def _state(db):
    return [sorted(db.connection.execute(q).fetchall(), key=repr) for q in _QUERIES]


def test_remember_many_writes_what_a_remember_loop_writes(tmp_path):
    loop = Anatid.open(str(tmp_path / "loop.anatid"), embedding_dim=3)
    many = Anatid.open(str(tmp_path / "many.anatid"), embedding_dim=3)
    for item in ITEMS:
        loop.remember(item["content"], **{k: v for k, v in item.items() if k != "content"}, now=at(1))
    many.remember_many(ITEMS, now=at(1))
    got, want = _state(many), _state(loop)
    for q, g, w in zip(_QUERIES, got, want):
        assert g == w, q
    assert all(want[i] for i in (0, 1, 3, 4, 5, 6, 7, 8))


ASCII_ITEMS = [  # an all-ASCII batch takes remember_many's one-string tokenizer
    {"content": "Alice's e-mail: ALICE@example.com; alice, alice & Bob_2 (v2.0) 3.14!", "entities": ["Alice"]},
    {"content": "\ttabs\nnew\x1flines\x7f and\x01ctrl 42 42 042", "embedding": [0, 1, 0]},
    {"content": "~`^|{}[]<>/\\", "entities": ["bob"]},                         # no tokens
    {"content": "x"},
]


def test_remember_many_ascii_batch_tokens_like_a_remember_loop(tmp_path):
    loop = Anatid.open(str(tmp_path / "loop.anatid"), embedding_dim=3)
    many = Anatid.open(str(tmp_path / "many.anatid"), embedding_dim=3)
    for item in ASCII_ITEMS:
        loop.remember(item["content"], **{k: v for k, v in item.items() if k != "content"}, now=at(1))
    many.remember_many(ASCII_ITEMS, now=at(1))
    got, want = _state(many), _state(loop)
    for q, g, w in zip(_QUERIES, got, want):
        assert g == w, q
    assert len(want[3]) > 10  # postings rows to compare


@pytest.mark.parametrize("items", [
    [{"content": "!!!"}, {"content": "???", "writer": None}],                 # no tokens, entities or vectors
    [{"content": "only text here"}],
    [{"content": "Ωmega only", "entities": ["Ωmega"]}],                        # non-ASCII only
    [{"content": "vectors only ...", "embedding": [1.0, 2.0, 3.0]}, {"content": "---", "embedding": [0, 0, 1]}],
])
def test_remember_many_batch_shapes_journal_like_the_read_back_form(tmp_path, items):
    db = Anatid.open(str(tmp_path / "s.anatid"), embedding_dim=3)
    ids = db.remember_many(items, now=at(1))
    rows = db.connection.execute("SELECT count(*) FROM anatid_text_docs").fetchone()[0]
    assert rows == len(ids)
    if any("embedding" in i for i in items) and any("entities" in i for i in items):
        _check(db, ids)
    else:
        store = db._store
        from anatid.indexes import text
        cut = store.ids.take()[0]
        with store.write() as w:
            text._journal(store, w, ids)
        q = "SELECT memory_id, doc_len, vf, vt, postings FROM anatid_text_journal WHERE seq {} $s ORDER BY ALL"
        cur = db.connection
        assert cur.execute(q.format("<="), {"s": cut}).fetchall() == cur.execute(q.format(">"), {"s": cut}).fetchall()


def test_remember_many_rejects_a_bad_item_and_writes_nothing(tmp_path):
    db = Anatid.open(str(tmp_path / "r.anatid"), embedding_dim=3)
    db.remember_many(ITEMS[:2], now=at(1))
    before = _state(db)
    bad = [dict(ITEMS[1]), {"content": "fine", "entities": ["ok", "  "]}]
    with pytest.raises(ValidationError) as e:
        db.remember_many(bad, now=at(2))
    assert e.value.argument == "entities"
    with pytest.raises(ValidationError) as e:
        db.remember_many([{"content": "x", "kind": 7}], now=at(2))
    assert e.value.argument == "kind"
    with pytest.raises(ValidationError) as e:
        db.remember_many([{"content": "x", "writer": "w1"}, {"content": "y", "writer": "bad\x00w"}], now=at(2))
    assert e.value.argument == "writer"
    assert _state(db) == before


def test_remember_many_instants_to_the_microsecond_like_a_remember_loop(tmp_path):
    """Instants reach DuckDB as datetime64[us] columns (None as NaT): exact to the
    microsecond, before 1970 and up to year 9999, and NULL where None."""
    from datetime import datetime, timedelta, timezone
    items = [
        {"content": "moon landing alice", "entities": ["alice"], "embedding": [1, 2, 3],
         "valid_from": datetime(1969, 7, 20, 20, 17, 40, 123457, tzinfo=timezone.utc)},
        {"content": "open ended bob bob", "entities": ["bob"], "embedding": [0, 0, 1],
         "valid_from": datetime(2026, 3, 1, 12, 0, 0, 1, tzinfo=timezone.utc),
         "valid_to": datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc)},
        {"content": "offset zone carol", "entities": ["carol"], "embedding": [3, 2, 1],
         "valid_from": datetime(2026, 3, 1, 14, 0, 0, 999999, tzinfo=timezone(timedelta(hours=2)))},
        {"content": "no instants at all", "entities": ["alice"], "embedding": [1, 1, 1]},
    ]
    now = datetime(2026, 6, 1, 8, 30, 15, 654321, tzinfo=timezone.utc)
    loop = Anatid.open(str(tmp_path / "loop.anatid"), embedding_dim=3)
    many = Anatid.open(str(tmp_path / "many.anatid"), embedding_dim=3)
    for item in items:
        loop.remember(item["content"], **{k: v for k, v in item.items() if k != "content"}, now=now)
    ids = many.remember_many(items, now=now)
    got, want = _state(many), _state(loop)
    for q, g, w in zip(_QUERIES, got, want):
        assert g == w, q
    rows = many.connection.execute("SELECT valid_from, valid_to, tx_from FROM anatid_memories ORDER BY memory_id").fetchall()
    assert rows[0][0] == datetime(1969, 7, 20, 20, 17, 40, 123457) and rows[0][1] is None
    assert rows[1][1] == datetime(9999, 12, 31, 23, 59, 59, 999999)
    assert rows[2][0] == datetime(2026, 3, 1, 12, 0, 0, 999999)
    naive_now = now.replace(tzinfo=None)
    assert rows[3][0] == naive_now and rows[3][2] == naive_now
    _check(many, ids)


def test_remember_many_content_errors_are_validate_texts(tmp_path):
    """Batch contents skip validate.text when a cheap check shows it would return them
    unchanged: every other content still raises validate.text's error, naming content."""
    from anatid import validate
    db = Anatid.open(str(tmp_path / "c.anatid"), embedding_dim=3)
    db.remember_many(ITEMS[:2], now=at(1))
    before = _state(db)
    for bad in (7, None, b"bytes", "", "   \n", "nul\x00here", "lone \ud800 surrogate",
                "x" * (validate.MAX_TEXT_CHARS + 1)):
        with pytest.raises(ValidationError) as want:
            validate.text(bad, "content")
        with pytest.raises(ValidationError) as e:
            db.remember_many([{"content": "fine"}, {"content": bad}], now=at(2))
        assert (type(e.value), e.value.argument, str(e.value)) == (type(want.value), "content", str(want.value))
    assert _state(db) == before
    kept = ["  padded stays padded  ", "café ✓ naïve", "tab\tand\nnewline"]
    ids = db.remember_many([{"content": c} for c in kept], now=at(3))
    got = dict(db.connection.execute("SELECT memory_id, content FROM anatid_memories WHERE memory_id IN "
                                      "(SELECT unnest($ids))", {"ids": ids}).fetchall())
    assert [got[i] for i in ids] == kept


# The batch converts every item's embedding to float32 in one pass (verbs.upkeep._vectors_at_once)
# where remember() goes through float64 first (validate.embedding): the two must agree on every
# value, rounding included, or both refuse the batch's vectors.
_coordinates = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(min_value=3.0e38, max_value=3.5e38),        # float32's largest finite and just past it
    st.floats(min_value=-1e-44, max_value=1e-44),          # float32 subnormals and their rounding
    st.integers(-2**70, 2**70), st.just(2**24 + 1), st.booleans())


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.lists(_coordinates, min_size=3, max_size=3), min_size=2, max_size=4))
def test_batch_vector_conversion_agrees_with_validate_embedding(rows):
    import numpy as np
    from types import SimpleNamespace
    from anatid import validate
    from anatid.verbs.upkeep import _vectors_at_once
    items = [{"content": "x", "embedding": r} for r in rows]
    fast = _vectors_at_once(SimpleNamespace(embedding_dim=3), items)
    one_by_one = []
    for r in rows:
        try:
            one_by_one.append(np.asarray(validate.embedding(r, 3), dtype=np.float32))
        except ValidationError:
            one_by_one = None
            break
    if one_by_one is None:
        assert fast is None
    else:
        assert fast is not None
        for i, want in enumerate(one_by_one):
            assert fast[i].tobytes() == want.tobytes()
