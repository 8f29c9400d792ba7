"""relate_many and remember_many accept whatever a loop of relate() / remember() accepts and
write the same rows; what the loop refuses, the batch refuses with the same error type and
writes nothing.

Before: relate_many([("e", "f"), ("e", "g")]) on new names raised DuckDB's raw
ConstraintException (the new entity "e" was inserted twice), as did any batch naming one
new entity twice in two spellings ("Ada", "ada"); remember_many refused a generator of
items; a valid_to before the write instant (valid_from defaulted to it) was stored as an
interval ending before it starts, by remember and remember_many alike.
"""
from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from anatid import Anatid, AnatidError, ValidationError

NOW = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)   # explicit and in the past: within the clock bound
DIM = 3
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))



def mostly(good, bad):
    """`good` but once in twelve draws: refused values stay rare enough for many batches to be written."""
    return st.sampled_from([False] * 11 + [True]).flatmap(lambda refused: bad if refused else good)


# Names that collide once keyed (case, outer and inner whitespace), plus a few that do not.
NAMES = ["Ada", "ada", " ada ", "ADA", "bob", "Bob", "Zoë", "zoë", "carol  ann", "Carol Ann",
         "e", "f", "g", "h", "i", "j", "k"]
names = mostly(st.sampled_from(NAMES), st.sampled_from(["", "  ", 7, None, "x\x00y"]))
rel_kinds = mostly(st.sampled_from(["related", "knows", "Knows", "works with"]), st.just(""))
weights = mostly(st.sampled_from([0.0, 0.5, 1.0, 2.5]), st.sampled_from([-1.0, float("nan")]))


def _open() -> Anatid:
    return Anatid.open(":memory:", embedding_dim=DIM)


_tenants = itertools.count(1)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two files, the loop's and the batch's; each example writes a tenant of its own in both
    (a handle on an open file costs ~20 ms, a fresh database ~100)."""
    root = tmp_path_factory.mktemp("bulk")
    keep = [Anatid.open(str(root / name), embedding_dim=DIM) for name in ("loop.anatid", "bulk.anatid")]
    yield [str(root / name) for name in ("loop.anatid", "bulk.anatid")]
    for db in keep:
        db.close()


def _pair_of_handles(files) -> tuple[Anatid, Anatid]:
    tenant = next(_tenants)
    return Anatid.open(files[0], tenant=tenant), Anatid.open(files[1], tenant=tenant)


def _rows(db, sql: str) -> list[tuple]:
    return sorted(db.connection.execute(sql, {"t": db.tenant} if "$t" in sql else None).fetchall(), key=repr)


_ENTITIES = "SELECT name, name_key, kind, created_at FROM anatid_entities WHERE tenant_id = $t"
_RELATES = """
SELECT s.name_key, d.name_key, e.rel_kind, e.weight, e.valid_from, e.valid_to, e.tx_from, e.tx_to
FROM anatid_edges e JOIN anatid_entities s ON s.entity_id = e.src_id JOIN anatid_entities d ON d.entity_id = e.dst_id
WHERE e.kind = 'relates' AND e.tenant_id = $t
"""


def _keys(db) -> dict[int, str]:
    return dict(_rows(db, "SELECT entity_id, name_key FROM anatid_entities WHERE tenant_id = $t"))


def _edges(db, edges) -> list[tuple]:
    k = _keys(db)
    return [(k[e.src_id], k[e.dst_id], e.rel_kind, e.weight) for e in edges]


def _same_key(a, b) -> bool:
    return isinstance(a, str) and isinstance(b, str) and " ".join(a.split()).lower() == " ".join(b.split()).lower()


# a pair of one entity (in two spellings or one) is refused: kept to one pair in twelve or so
ends = mostly(st.tuples(names, names).filter(lambda p: not _same_key(*p)), st.tuples(names, names))
pair_forms = st.tuples(ends, rel_kinds, weights, st.sampled_from(["2", "3", "4", "dict"])).map(
    lambda t: (*t[0], *t[1:]))


def _pair(a, b, kind, w, form):
    return {"2": (a, b), "3": (a, b, kind), "4": (a, b, kind, w), "dict": {"a": a, "b": b, "rel_kind": kind,
                                                                          "weight": w}}[form]


def _relate_args(a, b, kind, w, form):
    return (a, b, "related" if form == "2" else kind, 1.0 if form in ("2", "3") else w)


@PROPERTY
@given(pairs=st.lists(pair_forms, max_size=6))
def test_relate_many_writes_what_a_relate_loop_writes(files, pairs):
    loop, bulk = _pair_of_handles(files)
    try:
        got_loop, refused = [], None
        try:
            for p in pairs:
                a, b, kind, w = _relate_args(*p)
                got_loop.append(loop.relate(a, b, kind, weight=w, now=NOW))
        except AnatidError as exc:
            refused = exc
        event("written" if refused is None else f"refused: {type(refused).__name__} {getattr(refused, 'argument', '')}")
        if refused is not None:
            with pytest.raises(type(refused)):
                bulk.relate_many([_pair(*p) for p in pairs], now=NOW)
            assert _rows(bulk, _ENTITIES) == [] and _rows(bulk, _RELATES) == []
            return
        got_bulk = bulk.relate_many([_pair(*p) for p in pairs], now=NOW)
        assert _edges(bulk, got_bulk) == _edges(loop, got_loop)
        assert _rows(bulk, _ENTITIES) == _rows(loop, _ENTITIES)
        assert _rows(bulk, _RELATES) == _rows(loop, _RELATES)
    finally:
        loop.close()
        bulk.close()


def test_relate_many_creates_a_new_entity_named_by_two_pairs_once():
    with _open() as db:
        edges = db.relate_many([("e", "f"), ("e", "g"), ("Ada", "e"), ("ada", "f")], now=NOW)
        assert _edges(db, edges) == [("e", "f", "related", 1.0), ("e", "g", "related", 1.0),
                                     ("ada", "e", "related", 1.0), ("ada", "f", "related", 1.0)]
        # one row per entity, in its first spelling
        assert _rows(db, "SELECT name FROM anatid_entities") == [("Ada",), ("e",), ("f",), ("g",)]


# remember(): the keyword arguments an item may carry, each drawn from accepted and refused values.
contents = mostly(st.sampled_from(["alice met bob", "Zoë's café ✓", "...", "  padded  ", "x"]),
                  st.sampled_from(["", "   ", None]))
entities = st.one_of(st.none(), st.sampled_from(NAMES), st.lists(names, max_size=3),
                     st.lists(st.sampled_from(NAMES), max_size=3).map(tuple))
# before, at and after NOW: valid_to before a defaulted valid_from (NOW) is refused, as is vt <= vf
instants = st.one_of(st.none(), st.sampled_from([NOW - timedelta(days=30), NOW - timedelta(seconds=1), NOW,
                                                  NOW + timedelta(days=3), NOW + timedelta(days=1)]))
embeddings = st.one_of(st.none(), mostly(st.lists(st.floats(-1e3, 1e3, width=32), min_size=DIM, max_size=DIM),
                                         st.sampled_from([[0.0] * DIM, [1.0, 2.0]])))
options = st.fixed_dictionaries({}, optional={
    "entities": entities, "kind": mostly(st.sampled_from(["fact", "event"]), st.just("")),
    "confidence": mostly(st.sampled_from([0.0, 0.25, 1.0]), st.just(1.5)), "embedding": embeddings,
    "writer": st.sampled_from(["w1", "w2", None]), "episode": st.sampled_from(["a chat", "another chat"]),
    "valid_from": instants, "valid_to": instants})
items_strategy = st.lists(st.tuples(contents, options).map(lambda t: {"content": t[0], **t[1]}), max_size=6)

_MEMORY_ROWS = [
    "SELECT content, version, kind, confidence, strength, writer, valid_from, valid_to, tx_from, tx_to "
    "FROM anatid_memories WHERE tenant_id = $t",
    "SELECT m.content, e.name_key, a.valid_from, a.tx_from FROM anatid_edges a "
    "JOIN anatid_memories m ON m.memory_id = a.src_id JOIN anatid_entities e ON e.entity_id = a.dst_id "
    "WHERE a.kind = 'about' AND a.tenant_id = $t",
    _ENTITIES,
    "SELECT m.content, p.term, p.tf FROM anatid_postings p JOIN anatid_memories m USING (memory_id) "
    "WHERE p.tenant_id = $t",
    "SELECT m.content, e.embedding, e.norm FROM anatid_embeddings e JOIN anatid_memories m USING (memory_id) "
    "WHERE e.tenant_id = $t",
    "SELECT m.content, p.content, p.writer, p.recorded_at FROM anatid_evidence v "
    "JOIN anatid_memories m USING (memory_id) JOIN anatid_episodes p USING (episode_id) WHERE v.tenant_id = $t",
]


def _memory_state(db) -> list[list[tuple]]:
    return [_rows(db, q) for q in _MEMORY_ROWS]


@PROPERTY
@given(items=items_strategy, as_generator=st.booleans())
def test_remember_many_writes_what_a_remember_loop_writes(files, items, as_generator):
    loop, bulk = _pair_of_handles(files)
    try:
        got_loop, refused = [], None
        try:
            for item in items:
                got_loop.append(loop.remember(item["content"], **{k: v for k, v in item.items() if k != "content"},
                                              now=NOW).memory_id)
        except AnatidError as exc:
            refused = exc
        batch = (dict(i) for i in items) if as_generator else items
        event("written" if refused is None else f"refused: {type(refused).__name__} {getattr(refused, 'argument', '')}")
        if refused is not None:
            with pytest.raises(type(refused)):
                bulk.remember_many(batch, now=NOW)
            assert all(rows == [] for rows in _memory_state(bulk))
            return
        got_bulk = bulk.remember_many(batch, now=NOW)
        assert len(got_bulk) == len(got_loop) == len(items)
        assert [bulk.get(m).content for m in got_bulk] == [loop.get(m).content for m in got_loop]
        assert [sorted(bulk.get(m).entities) for m in got_bulk] == [sorted(loop.get(m).entities) for m in got_loop]
        assert _memory_state(bulk) == _memory_state(loop)
    finally:
        loop.close()
        bulk.close()


@pytest.mark.parametrize("write", [
    lambda db: db.remember("ended long ago", valid_to=NOW - timedelta(days=1), now=NOW),
    lambda db: db.remember("ends as it starts", valid_to=NOW, now=NOW),
    lambda db: db.remember_many([{"content": "fine"}, {"content": "ended", "valid_to": NOW - timedelta(days=1)}],
                                now=NOW),
], ids=["remember", "remember-at-now", "remember_many"])
def test_a_valid_to_before_the_defaulted_valid_from_is_refused(write):
    """valid_from defaults to the write instant: a valid_to at or before it was stored as an
    interval that ends before it starts (doctor: memory_interval_order)."""
    with _open() as db:
        db.remember("kept", now=NOW - timedelta(days=2))
        before = _memory_state(db)
        with pytest.raises(ValidationError) as err:
            write(db)
        assert err.value.argument == "valid_to" and "valid_from" in str(err.value)
        assert _memory_state(db) == before
        assert db.doctor().finding("memory_interval_order") is None


def test_remember_many_takes_any_iterable_a_loop_takes():
    with _open() as db:
        ids = db.remember_many(({"content": f"item {i}"} for i in range(3)), now=NOW)
        assert [db.get(m).content for m in ids] == ["item 0", "item 1", "item 2"]
        for refused in ("text", b"bytes", {"content": "one dict"}, 5):
            with pytest.raises(ValidationError) as err:
                db.remember_many(refused, now=NOW)
            assert err.value.argument == "items"
