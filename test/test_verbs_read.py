"""Unit tests of the read verbs: get, context, recall_2hop, as_of, provenance, stats."""
from __future__ import annotations

import pytest

from anatid import NotFoundError

from conftest import at, vec


@pytest.fixture
def graph(db):
    """A -rel- B -rel- C -rel- D, one memory about each, plus one about two entities."""
    db.relate("A", "B", now=at(1))
    db.relate("C", "B", now=at(2))      # walked in both directions
    db.relate("C", "D", now=at(3))
    m = {n: db.remember(f"about {n}", entities=[n], kind="fact" if n in "AC" else "pref", now=at(4 + i))
         for i, n in enumerate("ABCD")}
    m["AD"] = db.remember("about A and D", entities=["D", "A"], now=at(9))
    return db, {k: v.memory_id for k, v in m.items()}


def ids(hits):
    return [h.memory_id for h in hits]


def test_context_hops(graph):
    db, m = graph
    assert ids(db.context("A")) == [m["AD"], m["A"]]                       # hop 0, newest first
    assert ids(db.context("A", hops=1)) == [m["AD"], m["A"], m["B"]]
    assert ids(db.context("A", hops=2)) == [m["AD"], m["A"], m["B"], m["C"]]
    hits = db.context("A", hops=3)
    assert ids(hits) == [m["AD"], m["A"], m["B"], m["C"], m["D"]]     # AD at the smaller of its hops
    assert [h.hop for h in hits] == [0, 0, 1, 2, 3]
    assert [h.score for h in hits] == [1.0, 1.0, 0.5, pytest.approx(1 / 3), 0.25]
    assert all(h.sources == ("graph",) for h in hits)


def test_context_kinds_and_limit(graph):
    db, m = graph
    assert ids(db.context("A", hops=2, kinds=["pref"])) == [m["B"]]
    assert ids(db.context("A", hops=2, kinds="fact")) == [m["AD"], m["A"], m["C"]]
    assert ids(db.context("A", hops=2, limit=2)) == [m["AD"], m["A"]]


def test_recall_2hop_is_context_hops_2(graph):
    db, m = graph
    assert ids(db.recall_2hop("A")) == ids(db.context("A", hops=2))
    assert ids(db.recall_2hop(["B", "D"])) == [m["AD"], m["D"], m["B"], m["C"], m["A"]]


def test_unrelate_cuts_the_walk_now_but_not_in_the_past(graph):
    db, m = graph
    db.unrelate("B", "C", now=at(20))
    assert ids(db.recall_2hop("A")) == [m["AD"], m["A"], m["B"]]
    assert ids(db.as_of(at(19)).recall_2hop("A")) == [m["AD"], m["A"], m["B"], m["C"]]
    assert ids(db.as_of(at(20)).recall_2hop("A")) == [m["AD"], m["A"], m["B"]]   # half-open


def test_as_of_sees_the_world_of_then(graph):
    db, m = graph
    assert ids(db.as_of(at(4.5)).context("A", hops=2)) == [m["A"]]
    assert db.as_of(at(0)).context("A") == []
    new = db.supersede(m["A"], "A changed", now=at(30))
    assert ids(db.as_of(at(29)).context("A")) == [m["AD"], m["A"]]
    assert ids(db.as_of(at(30)).context("A")) == [new.memory_id, m["AD"]]
    assert ids(db.as_of(at(30).isoformat()).context("A")) == [new.memory_id, m["AD"]]


def test_get_unknown_and_entity_unknown(db):
    with pytest.raises(NotFoundError):
        db.get(123456789)
    with pytest.raises(NotFoundError):
        db.context("nobody")
    with pytest.raises(NotFoundError):
        db.recall_2hop("nobody")


def test_provenance_chain_episodes_writers(db):
    a = db.remember("v1", entities=["X"], writer="alice", episode="evidence one", now=at(1))
    b = db.supersede(a.memory_id, "v2", writer="bob", episode="evidence two", now=at(2))
    c = db.supersede(b.memory_id, "v3", writer="carol", now=at(3))
    db.update(c.memory_id, "v3b", expected_version=1, writer="dave", now=at(4))
    p = db.provenance(str(c.memory_id))
    assert p.memory_id == c.memory_id
    assert [(x.memory_id, x.version, x.content) for x in p.chain] == [
        (a.memory_id, 1, "v1"), (b.memory_id, 1, "v2"), (c.memory_id, 1, "v3"), (c.memory_id, 2, "v3b")]
    assert [e.content for e in p.episodes] == ["evidence one", "evidence two"]
    assert p.source_text == "evidence one\n\nevidence two"
    assert set(p.writers) == {"alice", "bob", "carol", "dave"}
    assert [x["verb"] for x in p.audit] == ["supersede", "supersede", "update"]
    assert db.provenance(a.memory_id).chain[-1].memory_id == a.memory_id
    assert db.provenance(a.memory_id).source_text == "evidence one"


def test_recall_hybrid_names_its_arms(db):
    m = db.remember("Ada prefers dark roast coffee", entities=["Ada", "coffee"], embedding=vec(0, 0, 0, 1),
                    now=at(1))
    db.remember("tea is fine", entities=["tea"], embedding=vec(1), now=at(2))
    hits = db.recall("coffee", embedding=vec(0, 0, 0, 1), seed_entity="Ada", k=3)
    assert hits[0].memory_id == m.memory_id and hits[0].sources == ("vector", "text", "graph")
    assert hits.bm25_stale is False


def test_stats_shows_counts_and_native_status(db):
    db.relate("A", "B", now=at(1))
    m = db.remember("one", entities=["A"], embedding=vec(1), episode="ep", now=at(2))
    db.supersede(m.memory_id, "two", now=at(3))
    s = db.stats()
    assert (s["tenant"], s["schema_version"], s["embedding_dim"]) == (1, 1, 4)
    assert (s["entities"], s["memories"], s["current_memories"], s["open_relations"], s["episodes"],
            s["embeddings"]) == (2, 2, 1, 1, 1, 1)
    native = s["native"]
    assert set(native) >= {"loaded", "reason", "path", "version"}
    assert native["loaded"] == db.native.loaded
    assert (native["reason"] is None) == native["loaded"]
    import os
    if os.environ.get("ANATID_NATIVE") == "0":
        assert native["loaded"] is False and "ANATID_NATIVE" in native["reason"]


def test_connection_is_raw_duckdb(db):
    db.remember("x", now=at(1))
    assert db.connection.execute("SELECT count(*) FROM anatid_memories").fetchone() == (1,)
