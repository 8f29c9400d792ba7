"""Unit tests of the write verbs: what each one does to the rows."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest

from anatid import ConflictError, NotFoundError, ValidationError
from anatid.verbs import remember as remember_fn

from conftest import all_text, at, snapshot, vec


def rows(db, sql, *params):
    return db.connection.execute(sql, list(params)).fetchall()


# -- remember ---------------------------------------------------------------------------------------
def test_remember_writes_version_one_with_entities_and_about_edges(db):
    m = db.remember("Ada likes tea", entities=["Ada", "tea", "ADA "], kind="preference",
                    writer="w1", now=at(1))
    assert (m.version, m.content, m.kind, m.writer, m.tenant_id) == (1, "Ada likes tea", "preference", "w1", 1)
    assert m.valid_from == at(1) and m.tx_from == at(1)
    assert m.valid_to is None and m.tx_to is None and m.is_current
    assert m.entities == ("Ada", "tea")      # name keys dedupe "ADA "
    about = rows(db, "SELECT e.name FROM anatid_edges a JOIN anatid_entities e ON e.entity_id = a.dst_id "
                     "WHERE a.kind = 'about' AND a.src_id = ? ORDER BY e.name", m.memory_id)
    assert about == [("Ada",), ("tea",)]
    assert db.get(m.memory_id) == m


def test_remember_stores_embedding_with_norm(db):
    m = db.remember("vector fact", embedding=vec(3, 4), now=at(1))
    (emb, norm), = rows(db, "SELECT embedding, norm FROM anatid_embeddings WHERE memory_id = ?", m.memory_id)
    assert emb == [3.0, 4.0, 0.0, 0.0] and norm == pytest.approx(5.0)


def test_remember_with_episode_text_stores_evidence_first(db):
    m = db.remember("Ada takes it dark", entities=["Ada"], episode="Standup: Ada, dark roast", writer="w",
                    now=at(1))
    (eid, content, writer), = rows(db, "SELECT episode_id, content, writer FROM anatid_episodes")
    assert (content, writer) == ("Standup: Ada, dark roast", "w")
    assert rows(db, "SELECT memory_id, episode_id FROM anatid_evidence") == [(m.memory_id, eid)]


def test_remember_with_episode_id_links_existing_episode(db):
    ep = db.episode("raw transcript", source="chat", writer="w", now=at(1))
    assert (ep.content, ep.source, ep.writer, ep.recorded_at) == ("raw transcript", "chat", "w", at(1))
    a = db.remember("fact a", episode=ep.episode_id, now=at(2))
    b = db.remember("fact b", episode=ep.episode_id, now=at(3))
    assert rows(db, "SELECT count(*) FROM anatid_episodes") == [(1,)]
    assert sorted(rows(db, "SELECT memory_id FROM anatid_evidence")) == sorted([(a.memory_id,), (b.memory_id,)])


def test_remember_valid_interval_given(db):
    m = db.remember("was true in 2089", valid_from=at(-100), valid_to=at(-50), now=at(1))
    assert (m.valid_from, m.valid_to, m.tx_from) == (at(-100), at(-50), at(1))
    assert not m.is_current


def test_remember_kind_filters_context(db):
    db.remember("a fact", entities=["X"], now=at(1))
    p = db.remember("a preference", entities=["X"], kind="pref", now=at(2))
    assert [h.memory_id for h in db.context("X", kinds=["pref"])] == [p.memory_id]


def test_function_form_matches_method(db):
    m = remember_fn(db, "via function", entities=["F"], now=at(1))
    assert db.get(str(m.memory_id)).content == "via function"


# -- remember_many ----------------------------------------------------------------------------------
def test_remember_many_writes_all_in_one_go(db):
    ep = db.episode("shared evidence", now=at(0))
    ids = db.remember_many([
        {"content": "one", "entities": ["A", "B"], "embedding": vec(1)},
        {"content": "two", "entities": ["b"], "kind": "pref", "episode": "own evidence"},
        {"content": "three", "episode": ep.episode_id, "valid_from": at(-5)},
    ], writer="bulk", now=at(1))
    assert len(ids) == 3 and ids == sorted(ids)
    got = [db.get(i) for i in ids]
    assert [g.content for g in got] == ["one", "two", "three"]
    assert [g.entities for g in got] == [("A", "B"), ("B",), ()]
    assert [g.kind for g in got] == ["fact", "pref", "fact"]
    assert {g.writer for g in got} == {"bulk"}
    assert got[2].valid_from == at(-5) and got[0].tx_from == at(1)
    assert rows(db, "SELECT count(*) FROM anatid_entities") == [(2,)]
    assert rows(db, "SELECT count(*) FROM anatid_evidence") == [(2,)]
    assert [h.memory_id for h in db.context("b")] == [ids[1], ids[0]]


def test_remember_many_is_all_or_nothing(db):
    db.remember("before", now=at(0))
    before = snapshot(db)
    with pytest.raises(ValidationError) as e:
        db.remember_many([{"content": "good"}, {"content": "   "}], now=at(1))
    assert e.value.argument == "content"
    with pytest.raises(NotFoundError):
        db.remember_many([{"content": "good"}, {"content": "bad ep", "episode": 12345}], now=at(2))
    assert snapshot(db) == before


# -- relate / unrelate / upsert_entity --------------------------------------------------------------
def test_relate_opens_edge_once(db):
    e1 = db.relate("Ada", "Kestrel", rel_kind="leads", now=at(1))
    e2 = db.relate("ada", "KESTREL", rel_kind="leads", now=at(2))
    assert e1 == e2 and e1.valid_from == at(1) and e1.valid_to is None and e1.rel_kind == "leads"
    other = db.relate("Ada", "Kestrel", rel_kind="funds", now=at(3))
    assert other.edge_id != e1.edge_id


def test_unrelate_closes_both_directions(db):
    db.relate("A", "B", rel_kind="x", now=at(1))
    db.relate("B", "A", rel_kind="y", now=at(2))
    db.relate("A", "C", now=at(3))
    assert db.unrelate("a", "b", now=at(4)) == 2
    closed = rows(db, "SELECT rel_kind, valid_to FROM anatid_edges WHERE kind = 'relates' ORDER BY edge_id")
    assert closed == [("x", at(4).replace(tzinfo=None)), ("y", at(4).replace(tzinfo=None)), ("related", None)]
    with pytest.raises(NotFoundError):
        db.unrelate("A", "B", now=at(5))
    # a new edge after the close is a new interval
    e = db.relate("A", "B", rel_kind="x", now=at(6))
    assert e.valid_from == at(6)


def test_unrelate_by_kind(db):
    db.relate("A", "B", rel_kind="x", now=at(1))
    db.relate("A", "B", rel_kind="y", now=at(2))
    assert db.unrelate("A", "B", rel_kind="y", now=at(3)) == 1
    assert rows(db, "SELECT rel_kind FROM anatid_edges WHERE valid_to IS NULL") == [("x",)]


def test_upsert_entity(db):
    e = db.upsert_entity("Ada Lovelace", now=at(1))
    assert (e.name, e.kind, e.created_at) == ("Ada Lovelace", None, at(1))
    e2 = db.upsert_entity("  ada   LOVELACE ", kind="person", now=at(2))
    assert (e2.entity_id, e2.name, e2.kind) == (e.entity_id, "Ada Lovelace", "person")
    assert rows(db, "SELECT count(*) FROM anatid_entities") == [(1,)]


# -- supersede --------------------------------------------------------------------------------------
def test_supersede_closes_links_and_inherits(db):
    old = db.remember("Ada drinks dark roast", entities=["Ada", "coffee"], kind="pref",
                      episode="standup", writer="w1", now=at(1))
    new = db.supersede(old.memory_id, "Ada switched to decaf", writer="w2", now=at(5))
    o = db.get(old.memory_id)
    assert (o.valid_to, o.superseded_by, o.tx_to, o.is_current) == (at(5), new.memory_id, None, False)
    assert (new.supersedes, new.valid_from, new.kind, new.entities) == (old.memory_id, at(5), "pref",
                                                                           ("Ada", "coffee"))
    assert rows(db, "SELECT src_id, dst_id FROM anatid_edges WHERE kind = 'supersedes'") == \
        [(new.memory_id, old.memory_id)]
    assert [h.memory_id for h in db.context("coffee")] == [new.memory_id]
    with pytest.raises(ConflictError) as e:
        db.supersede(old.memory_id, "again", now=at(6))
    assert e.value.retryable is False


def test_supersede_with_new_entities_and_of_forgotten(db):
    old = db.remember("x", entities=["A"], now=at(1))
    new = db.supersede(old.memory_id, "y", entities=["B"], now=at(2))
    assert new.entities == ("B",)
    gone = db.remember("z", now=at(3))
    db.forget(gone.memory_id, now=at(4))
    with pytest.raises(ConflictError) as e:
        db.supersede(gone.memory_id, "w", now=at(5))
    assert e.value.retryable is False


# -- forget -----------------------------------------------------------------------------------------
def test_forget_soft_keeps_row_and_audits(db):
    m = db.remember("secret-ish", entities=["A"], now=at(1))
    assert db.forget(m.memory_id, writer="ops", reason="asked", now=at(2)) == {"memory_id": m.memory_id,
                                                                               "hard": False}
    g = db.get(m.memory_id)
    assert g.tx_to == at(2) and not g.is_current and g.content == "secret-ish"
    assert db.context("A") == []
    assert [h.memory_id for h in db.as_of(at(1.5)).context("A")] == [m.memory_id]
    (verb, writer, subject, detail), = rows(db, "SELECT verb, writer, subject_id, detail FROM anatid_audit")
    assert (verb, writer, subject, json.loads(detail)) == ("forget", "ops", m.memory_id, {"reason": "asked"})
    with pytest.raises(ConflictError):
        db.forget(m.memory_id, now=at(3))


def test_forget_hard_leaves_no_trace_of_the_text(db):
    # the code is long enough that no 18-digit id (journal entries hold ids as text) contains it by chance
    secret = "Zanzibarquux code 481295307 belongs to Ada"
    ep = "Transcript: Zanzibarquux code 481295307"
    m = db.remember(secret, entities=["Ada"], embedding=vec(1, 2), episode=ep, now=at(1))
    v2 = db.update(m.memory_id, secret + " (corrected)", expected_version=1, now=at(2))
    new = db.supersede(m.memory_id, "Ada has a code", now=at(3))
    keep = db.remember("unrelated fact", entities=["Ada"], now=at(4))
    assert v2.version == 2
    db.forget(m.memory_id, hard=True, writer="gdpr", now=at(5))
    for table, column, value in all_text(db):
        low = value.lower()
        assert "zanzibarquux" not in low and "481295307" not in low, (table, column, value)
    assert rows(db, "SELECT count(*) FROM anatid_memories WHERE memory_id = ?", m.memory_id) == [(0,)]
    assert rows(db, "SELECT count(*) FROM anatid_embeddings") == [(0,)]
    assert rows(db, "SELECT count(*) FROM anatid_episodes") == [(0,)]
    assert rows(db, "SELECT count(*) FROM anatid_edges WHERE src_id = ? OR dst_id = ?",
                m.memory_id, m.memory_id) == [(0,)]
    assert db.get(new.memory_id).supersedes is None
    assert rows(db, "SELECT verb, subject_id FROM anatid_audit WHERE verb = 'forget_hard'") == \
        [("forget_hard", m.memory_id)]
    with pytest.raises(NotFoundError):
        db.get(m.memory_id)
    assert {h.memory_id for h in db.context("Ada")} == {new.memory_id, keep.memory_id}


def test_forget_hard_keeps_episodes_others_use(db):
    ep = db.episode("shared evidence", now=at(0))
    a = db.remember("a", episode=ep.episode_id, now=at(1))
    b = db.remember("b", episode=ep.episode_id, now=at(2))
    db.forget(a.memory_id, hard=True, now=at(3))
    assert rows(db, "SELECT episode_id FROM anatid_episodes") == [(ep.episode_id,)]
    assert db.provenance(b.memory_id).source_text == "shared evidence"


# -- reinforce / prune ------------------------------------------------------------------------------
def test_reinforce_raises_strength_and_touches(db):
    m = db.remember("used often", now=at(1))
    r = db.reinforce(m.memory_id, 0.5, now=at(2))
    assert r.strength == pytest.approx(1.5) and r.version == 1
    assert rows(db, "SELECT last_used_at FROM anatid_memories") == [(at(2).replace(tzinfo=None),)]
    assert db.reinforce(m.memory_id, -10, now=at(3)).strength == 0.0


def test_prune_dry_run_then_one_transaction_each(db):
    weak = [db.remember(f"weak {i}", kind="note", now=at(i)) for i in range(3)]
    for w in weak:
        db.reinforce(w.memory_id, -0.9, now=at(3))
    strong = db.remember("strong", now=at(4))
    old_other_kind = db.remember("other kind", kind="fact", now=at(5))
    db.reinforce(old_other_kind.memory_id, -0.9, now=at(6))
    later = at(6) + timedelta(days=31)
    report = db.prune(min_strength=0.5, older_than=timedelta(days=30), kinds=["note"], now=later)
    assert report.dry_run and report.candidates == tuple(w.memory_id for w in weak) and report.forgotten == ()
    assert all(db.get(w.memory_id).is_current for w in weak)

    from anatid.verbs import memories
    real_forget, calls = memories.forget, []
    # prune forgets through forget(), each call its own transaction: count them
    import anatid.verbs.upkeep as upkeep

    def counting(*a, **k):
        calls.append(a[1])
        return real_forget(*a, **k)
    upkeep.forget = counting
    try:
        done = db.prune(min_strength=0.5, older_than=timedelta(days=30), kinds=["note"], dry_run=False,
                        now=later)
    finally:
        upkeep.forget = real_forget
    assert done.forgotten == report.candidates and calls == list(report.candidates)
    assert all(db.get(w.memory_id).tx_to is not None for w in weak)
    assert db.get(strong.memory_id).is_current and db.get(old_other_kind.memory_id).is_current
    assert rows(db, "SELECT count(*) FROM anatid_audit WHERE verb = 'forget'") == [(3,)]


# -- update -----------------------------------------------------------------------------------------
def test_update_is_compare_and_swap(db):
    m = db.remember("first", entities=["A"], now=at(1))
    u = db.update(m.memory_id, "second", expected_version=1, writer="w2", now=at(2))
    assert (u.memory_id, u.version, u.content, u.tx_from, u.valid_from, u.entities) == \
        (m.memory_id, 2, "second", at(2), at(1), ("A",))
    v1 = rows(db, "SELECT tx_to FROM anatid_memories WHERE version = 1")
    assert v1 == [(at(2).replace(tzinfo=None),)]
    with pytest.raises(ConflictError) as e:
        db.update(m.memory_id, "stale", expected_version=1, now=at(3))
    assert e.value.retryable is True
    assert [h.content for h in db.context("A")] == ["second"]
    assert [h.content for h in db.as_of(at(1.5)).context("A")] == ["first"]
    # the text index follows the correction
    assert [h.memory_id for h in db.recall("second")] == [m.memory_id]
    assert db.recall("first") == []


def test_returned_entities_use_the_stored_spelling(db):
    """remember/supersede return what get() shows: an existing entity keeps its first spelling."""
    db.upsert_entity("Ada", now=at(0))
    m = db.remember("x", entities=[" ADA ", "new One"], now=at(1))
    assert m.entities == ("Ada", "new One") == db.get(m.memory_id).entities
    s = db.supersede(m.memory_id, "y", entities=["ada", "NEW one"], now=at(2))
    assert s.entities == ("Ada", "new One") == db.get(s.memory_id).entities
