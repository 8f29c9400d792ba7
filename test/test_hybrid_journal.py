"""A write is findable by the very next read with nothing rebuilt, on the native path,
whether or not a base generation exists; rebuilding never changes an answer; a hard
forget leaves no generation holding the erased text; the exact scan is refused above
SCAN_CEILING with a reason."""
from __future__ import annotations

import pytest

from anatid import Anatid, engines
from anatid.indexes.text import rebuild_fts_index
from anatid.indexes.vector import rebuild_vector_index
from anatid.native_hybrid import ScanCeilingError

from conftest import at, vec


@pytest.fixture
def db(tmp_path):
    d = Anatid.open(str(tmp_path / "journal.anatid"), embedding_dim=4)
    if not d.native.loaded:
        d.close()
        pytest.skip(d.native.reason)
    yield d
    d.close()


def ids(hits):
    return [h.memory_id for h in hits]


def test_write_is_found_by_the_next_read(db):
    for i in range(20):
        db.remember(f"filler note number {i}", embedding=vec(1, i), now=at(i + 1))
    rebuild_fts_index(db)
    rebuild_vector_index(db)
    m = db.remember("the guest is allergic to peanuts", embedding=vec(0, 0, 1), now=at(100))
    hits = db.recall("peanuts", k=3)
    assert hits.engine == "native" and hits.bm25_stale is False
    assert ids(hits) == [m.memory_id] and hits[0].sources == ("text",)
    assert ids(db.recall("", embedding=vec(0, 0, 1), k=1)) == [m.memory_id]


def test_rebuild_never_changes_an_answer(db):
    for i in range(30):
        db.remember(f"note {i} about {'apples' if i % 3 else 'pears and apples'}", embedding=vec(i, 1, -i),
                    now=at(i + 1))
    db.update(db.recall("pears", k=1)[0].memory_id, "now about plums", expected_version=1, now=at(50))
    before = [(h.memory_id, h.score, h.sources) for h in db.recall("apples pears plums", embedding=vec(1, 1), k=30)]
    rebuild_fts_index(db)
    rebuild_vector_index(db)
    after = [(h.memory_id, h.score, h.sources) for h in db.recall("apples pears plums", embedding=vec(1, 1), k=30)]
    assert after == before


def test_hard_forget_drops_the_generation_holding_the_text(db):
    keep = db.remember("ordinary words", now=at(1))
    gone = db.remember("secretword", now=at(2))
    rebuild_fts_index(db)
    db.forget(gone.memory_id, hard=True, now=at(3))
    cur = db._store.read()
    assert cur.execute("SELECT count(*) FROM anatid_text_gen").fetchone()[0] == 0
    assert db.recall("secretword", k=5) == []
    assert ids(db.recall("ordinary", k=5)) == [keep.memory_id]


def test_exact_scan_is_refused_above_scan_ceiling(db, monkeypatch):
    import anatid.store
    monkeypatch.setattr(anatid.store, "SCAN_CEILING", 3)
    for i in range(5):
        db.remember(f"word {i}", now=at(i + 1))
    with pytest.raises(ScanCeilingError, match="SCAN_CEILING=3"):
        db.recall("word", k=3)
    rebuild_fts_index(db)
    assert len(db.recall("word", k=3)) == 3
