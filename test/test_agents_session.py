"""AnatidSession: the Session protocol over tables in the anatid file.

The session itself needs no SDK, so most of these run without openai-agents;
the check against the SDK's runtime protocol skips when it is absent.
"""
from __future__ import annotations

import asyncio

import pytest

from anatid import ValidationError
from anatid.integrations.openai_agents import AnatidSession

from conftest import at, open_db

ITEMS = [
    {"role": "user", "content": "Ada moved to New York last spring"},
    {"type": "function_call", "call_id": "c1", "name": "anatid_recall", "arguments": '{"query": "Ada"}'},
    {"type": "function_call_output", "call_id": "c1", "output": '{"ok": true, "hits": []}'},
    {"type": "message", "role": "assistant",
     "content": [{"type": "output_text", "text": "Noted, café and all.", "annotations": []}]},
]


def run(coro):
    return asyncio.run(coro)


def test_items_round_trip_in_order(db):
    s = AnatidSession("conv-1", db)
    run(s.add_items(ITEMS[:2]))
    run(s.add_items(ITEMS[2:]))
    assert run(s.get_items()) == ITEMS
    assert run(s.get_items(limit=2)) == ITEMS[2:]          # newest two, oldest first
    assert run(s.get_items(limit=10)) == ITEMS
    assert run(s.get_items(limit=0)) == []
    with pytest.raises(ValidationError, match="limit"):
        run(s.get_items(limit=-1))


def test_session_settings_limit_is_the_default(db):
    class Settings:
        limit = 1
    s = AnatidSession("conv-1", db, session_settings=Settings())
    run(s.add_items(ITEMS))
    assert run(s.get_items()) == ITEMS[-1:]
    assert run(s.get_items(limit=3)) == ITEMS[1:]


def test_pop_item_returns_the_newest_and_removes_it(db):
    s = AnatidSession("conv-1", db)
    assert run(s.pop_item()) is None
    run(s.add_items(ITEMS))
    assert run(s.pop_item()) == ITEMS[-1]
    assert run(s.pop_item()) == ITEMS[-2]
    assert run(s.get_items()) == ITEMS[:2]
    run(s.add_items([ITEMS[-1]]))                           # a popped slot is never reused out of order
    assert run(s.get_items()) == [ITEMS[0], ITEMS[1], ITEMS[-1]]


def test_clear_session_touches_only_its_own_session_and_tenant(db, db_path):
    a, b = AnatidSession("a", db), AnatidSession("b", db)
    other_tenant = open_db(db_path, tenant=2)
    try:
        a2 = AnatidSession("a", other_tenant)
        run(a.add_items(ITEMS))
        run(b.add_items(ITEMS[:1]))
        run(a2.add_items(ITEMS[:2]))
        run(a.clear_session())
        assert run(a.get_items()) == []
        assert run(b.get_items()) == ITEMS[:1]
        assert run(a2.get_items()) == ITEMS[:2]
    finally:
        other_tenant.close()


def test_items_survive_a_reopen(db_path):
    d = open_db(db_path)
    run(AnatidSession("conv-1", d).add_items(ITEMS))
    d.close()
    d = open_db(db_path)
    try:
        assert run(AnatidSession("conv-1", d).get_items()) == ITEMS
    finally:
        d.close()


def test_unserializable_item_is_rejected_and_nothing_is_written(db):
    s = AnatidSession("conv-1", db)
    with pytest.raises(ValidationError, match=r"items\[1\]"):
        run(s.add_items([ITEMS[0], {"role": "user", "content": object()}]))
    assert run(s.get_items()) == []


def test_entities_mentioned_is_a_join_against_the_graph(db):
    db.relate("Ada", "New York", rel_kind="lives_in", now=at(1))
    db.remember("Kestrel is a project", entities=["Kestrel"], now=at(2))
    db.upsert_entity("Canada", now=at(3))
    s = AnatidSession("conv-1", db)
    run(s.add_items(ITEMS))
    run(s.add_items([{"role": "user", "content": "and what about ADA?"}]))
    names = [e.name for e in run(s.entities_mentioned())]
    # first mention order; whole-token matches only ("Ada" is not found in "Canada"), and
    # tool outputs do not count as mentions
    assert names == ["Ada", "New York"]
    assert run(AnatidSession("elsewhere", db).entities_mentioned()) == []


def test_writer_tag_defaults_to_the_session(db):
    assert AnatidSession("conv-9", db).writer == "session:conv-9"
    assert AnatidSession("conv-9", db, writer="agent-7").writer == "agent-7"
    with pytest.raises(ValidationError, match="session_id"):
        AnatidSession("   ", db)


def test_satisfies_the_sdks_runtime_protocol(db):
    memory = pytest.importorskip("agents.memory", reason='openai-agents not installed: pip install "anatid[agents]"')
    s = AnatidSession("conv-1", db)
    assert isinstance(s, memory.Session)
    assert not isinstance(s, memory.SessionABC)            # the protocol, not the internal ABC


def test_read_only_handle_reads_existing_tables_and_names_the_fix_otherwise(db_path):
    from anatid import Anatid, ReadOnlyError
    open_db(db_path).close()
    ro = Anatid.open(str(db_path), tenant=1, read_only=True)
    with pytest.raises(ReadOnlyError, match="open the file once read-write"):
        AnatidSession("conv-1", ro)
    ro.close()
    d = open_db(db_path)
    run(AnatidSession("conv-1", d).add_items(ITEMS[:1]))
    d.close()
    ro = Anatid.open(str(db_path), tenant=1, read_only=True)
    try:
        assert run(AnatidSession("conv-1", ro).get_items()) == ITEMS[:1]
    finally:
        ro.close()
