"""Ids survive JSON only as strings: they exceed 2**53, and every verb takes one as a decimal string."""
from __future__ import annotations

import json

import pytest

from anatid.verbs import forget, get, provenance, reinforce, supersede, update

from conftest import at


def test_every_id_is_above_2_to_the_53(db):
    db.relate("A", "B", now=at(1))
    ep = db.episode("evidence", now=at(2))
    m = db.remember("fact", entities=["A"], episode=ep.episode_id, now=at(3))
    ent = db.upsert_entity("C", now=at(4))
    all_ids = db.connection.execute("""
        SELECT memory_id FROM anatid_memories UNION ALL SELECT entity_id FROM anatid_entities
        UNION ALL SELECT edge_id FROM anatid_edges UNION ALL SELECT episode_id FROM anatid_episodes""").fetchall()
    assert len(all_ids) == 1 + 3 + 2 + 1
    for (i,) in all_ids + [(m.memory_id,), (ep.episode_id,), (ent.entity_id,)]:
        assert i > 2**53
        # a JSON client that reads numbers as doubles would merge neighbouring ids
        assert len({float(i), float(i + 1), float(i + 2)}) < 3


def test_ids_are_unique_across_tables_and_tenants(db, db_path):
    from conftest import open_db
    other = open_db(db_path, tenant=2)
    try:
        ids = [db.remember(f"t1 {i}", entities=[f"e{i}"], now=at(i)).memory_id for i in range(5)]
        ids += [other.remember(f"t2 {i}", entities=[f"e{i}"], now=at(10 + i)).memory_id for i in range(5)]
        rows = db.connection.execute("""
            SELECT memory_id FROM anatid_memories UNION ALL SELECT entity_id FROM anatid_entities
            UNION ALL SELECT edge_id FROM anatid_edges""").fetchall()
        assert len(rows) == len(set(rows)) == 10 + 10 + 10
        assert ids == sorted(ids)                                 # grow with time
    finally:
        other.close()


def test_every_verb_accepts_a_decimal_string_id(db):
    m = db.remember("v1", entities=["A"], now=at(1))
    s = str(m.memory_id)
    assert db.get(s).memory_id == m.memory_id
    assert get(db, s).memory_id == m.memory_id
    assert db.reinforce(s, 1.0, now=at(2)).memory_id == m.memory_id
    assert reinforce(db, f" {s} ", 1.0, now=at(3)).strength == pytest.approx(3.0)
    u = db.update(s, "v2", expected_version=1, now=at(4))
    u = update(db, s, "v3", expected_version=u.version, now=at(5))
    assert u.version == 3
    assert db.provenance(s).memory_id == m.memory_id
    assert provenance(db, s).memory_id == m.memory_id
    new = db.supersede(s, "next", now=at(6))
    newer = supersede(db, str(new.memory_id), "after", now=at(7))
    assert db.get(str(newer.memory_id)).supersedes == new.memory_id
    assert db.forget(str(newer.memory_id), now=at(8)) == {"memory_id": newer.memory_id, "hard": False}
    assert forget(db, str(new.memory_id), hard=True, now=at(9))["hard"] is True
    ep = db.episode("raw", now=at(10))
    assert db.remember("with ep", episode=ep.episode_id, now=at(11)).memory_id > 2**53
    ids = db.remember_many([{"content": "bulk", "episode": ep.episode_id}], now=at(12))
    assert all(isinstance(i, int) and i > 2**53 for i in ids)
    assert db.get(str(ids[0])).content == "bulk"


def test_results_serialize_ids_exactly_as_strings(db):
    m = db.remember("x", now=at(1))
    p = db.provenance(m.memory_id)
    db.forget(m.memory_id, now=at(2))
    audit = db.provenance(m.memory_id).audit
    assert audit[0]["subject_id"] == str(m.memory_id)                     # audit rows carry strings
    assert json.loads(json.dumps({"id": str(p.memory_id)}))["id"] == str(m.memory_id)
