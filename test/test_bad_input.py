"""Bad input: a typed AnatidError naming the argument, and the file unchanged.

Every rejected call below runs against a populated file; its tables (every
anatid_% table, SELECT * ORDER BY ALL) must be identical before and after.
"""
from __future__ import annotations

import math
from datetime import datetime, timedelta

import duckdb
import numpy as np
import pytest

from anatid import (Anatid, AnatidError, ConflictError, EmbeddingDimensionError, NotFoundError,
                    ValidationError)

from conftest import at, open_db, snapshot, vec

NAIVE = datetime(2090, 1, 1)


@pytest.fixture
def world(db, db_path):
    """A populated file, plus a handle of another tenant with its own memory and episode."""
    db.relate("Ada", "Kestrel", now=at(1))
    m = db.remember("Ada likes tea", entities=["Ada"], embedding=vec(1), episode="ev", now=at(2))
    other = open_db(db_path, tenant=2)
    om = other.remember("tenant two's fact", entities=["Bo"], now=at(3))
    oep = other.episode("tenant two's evidence", now=at(4))
    yield db, {"m": m.memory_id, "other_m": om.memory_id, "other_ep": oep.episode_id}
    other.close()


V = ValidationError
E = EmbeddingDimensionError
N = NotFoundError
C = ConflictError

# (argument named by the error, or None for NotFoundError, exception type, call)
BAD = [
    ("content", V, lambda db, s: db.remember("")),
    ("content", V, lambda db, s: db.remember(" \t\n")),
    ("content", V, lambda db, s: db.remember("a\x00b")),
    ("content", V, lambda db, s: db.remember(None)),
    ("content", V, lambda db, s: db.remember(b"bytes")),
    ("content", V, lambda db, s: db.remember("a\ud800")),
    ("entities", V, lambda db, s: db.remember("ok", entities=[""])),
    ("entities", V, lambda db, s: db.remember("ok", entities=["Ada", "  "])),
    ("entities", V, lambda db, s: db.remember("ok", entities=["x\x00"])),
    ("entities", V, lambda db, s: db.remember("ok", entities=[None])),
    ("entities", V, lambda db, s: db.remember("ok", entities=7)),
    ("kind", V, lambda db, s: db.remember("ok", kind="")),
    ("confidence", V, lambda db, s: db.remember("ok", confidence=math.nan)),
    ("confidence", V, lambda db, s: db.remember("ok", confidence=1.5)),
    ("embedding", E, lambda db, s: db.remember("ok", embedding=[1.0, 2.0])),
    ("embedding", E, lambda db, s: db.remember("ok", embedding=[1.0] * 5)),
    ("embedding", V, lambda db, s: db.remember("ok", embedding=[1.0, math.nan, 0, 0])),
    ("embedding", V, lambda db, s: db.remember("ok", embedding=[1.0, math.inf, 0, 0])),
    ("embedding", V, lambda db, s: db.remember("ok", embedding=np.array([0.0, -math.inf, 0, 0]))),
    ("embedding", V, lambda db, s: db.remember("ok", embedding=[0.0, 0.0, 0.0, 0.0])),
    ("embedding", V, lambda db, s: db.remember("ok", embedding=[1e39, 1, 1, 1])),
    ("embedding", V, lambda db, s: db.remember("ok", embedding="abcd")),
    ("embedding", V, lambda db, s: db.remember("ok", embedding=[[1, 2], [3, 4]])),
    ("embedding", V, lambda db, s: db.remember("ok", embedding=[])),
    ("episode", V, lambda db, s: db.remember("ok", episode="  ")),
    ("episode", V, lambda db, s: db.remember("ok", episode=-1)),
    (None, N, lambda db, s: db.remember("ok", episode=123456789)),
    (None, N, lambda db, s: db.remember("ok", episode=s["other_ep"])),
    ("now", V, lambda db, s: db.remember("ok", now=NAIVE)),
    ("now", V, lambda db, s: db.remember("ok", now="2090-01-01T00:00:00")),
    ("now", V, lambda db, s: db.remember("ok", now="yesterday")),
    ("now", V, lambda db, s: db.remember("ok", now=12345)),
    ("valid_from", V, lambda db, s: db.remember("ok", valid_from=NAIVE)),
    ("valid_to", V, lambda db, s: db.remember("ok", valid_from=at(5), valid_to=at(5))),
    ("writer", V, lambda db, s: db.remember("ok", writer=" ")),
    ("items", V, lambda db, s: db.remember_many("not a list")),
    ("items[1]", V, lambda db, s: db.remember_many([{"content": "a"}, {"text": "b"}])),
    ("content", V, lambda db, s: db.remember_many([{"content": "a"}, {"content": ""}])),
    ("embedding", E, lambda db, s: db.remember_many([{"content": "a", "embedding": [1.0, 1.0]}])),
    (None, N, lambda db, s: db.remember_many([{"content": "a"}, {"content": "b", "episode": s["other_ep"]}])),
    ("old_id", V, lambda db, s: db.supersede(0, "new")),
    ("old_id", V, lambda db, s: db.supersede("12x", "new")),
    ("content", V, lambda db, s: db.supersede(s["m"], " ")),
    (None, N, lambda db, s: db.supersede(987654321, "new")),
    (None, N, lambda db, s: db.supersede(s["other_m"], "new")),
    ("now", V, lambda db, s: db.supersede(s["m"], "new", now=NAIVE)),
    ("now", V, lambda db, s: db.supersede(s["m"], "new", now=at(1))),      # before it became valid
    ("memory_id", V, lambda db, s: db.update(True, "x", expected_version=1)),
    ("expected_version", V, lambda db, s: db.update(s["m"], "x", expected_version=0)),
    ("expected_version", V, lambda db, s: db.update(s["m"], "x", expected_version="1")),
    (None, N, lambda db, s: db.update(s["other_m"], "x", expected_version=1)),
    (None, C, lambda db, s: db.update(s["m"], "x", expected_version=2)),
    ("now", V, lambda db, s: db.update(s["m"], "x", expected_version=1, now=at(1))),  # before version 1
    ("memory_id", V, lambda db, s: db.forget(-3)),
    ("hard", V, lambda db, s: db.forget(s["m"], hard="yes")),
    (None, N, lambda db, s: db.forget(123456789)),
    (None, N, lambda db, s: db.forget(s["other_m"])),
    (None, N, lambda db, s: db.forget(s["other_m"], hard=True)),
    ("now", V, lambda db, s: db.forget(s["m"], now=NAIVE)),
    ("now", V, lambda db, s: db.forget(s["m"], now=at(1))),              # before the row was believed
    ("amount", V, lambda db, s: db.reinforce(s["m"], math.inf)),
    (None, N, lambda db, s: db.reinforce(s["other_m"])),
    ("a", V, lambda db, s: db.relate("", "B")),
    ("b", V, lambda db, s: db.relate("A", "b\x00")),
    ("b", V, lambda db, s: db.relate("Ada", " ada ")),
    ("weight", V, lambda db, s: db.relate("A", "B", weight=math.nan)),
    ("rel_kind", V, lambda db, s: db.relate("A", "B", rel_kind=" ")),
    (None, N, lambda db, s: db.unrelate("Ada", "Nobody")),
    (None, N, lambda db, s: db.unrelate("Ada", "Bo")),                   # Bo is tenant 2's
    ("now", V, lambda db, s: db.unrelate("Ada", "Kestrel", now=at(0))),  # before the edge opened
    ("name", V, lambda db, s: db.upsert_entity("   ")),
    ("content", V, lambda db, s: db.episode("")),
    ("min_strength", V, lambda db, s: db.prune(min_strength=math.nan, dry_run=False)),
    ("older_than", V, lambda db, s: db.prune(older_than=-1, dry_run=False)),
]


@pytest.mark.parametrize("argument,exc,call", BAD)
def test_rejected_write_names_argument_and_changes_nothing(world, argument, exc, call):
    db, s = world
    before = snapshot(db)
    with pytest.raises(exc) as info:
        call(db, s)
    assert isinstance(info.value, AnatidError)
    if argument is not None:
        assert info.value.argument == argument
        assert str(info.value).startswith(f"{argument}:")
    assert snapshot(db) == before
    assert db._store.embedding_dim == 4


BAD_READS = [
    ("memory_id", V, lambda db, s: db.get("")),
    ("memory_id", V, lambda db, s: db.get(1.5)),
    ("memory_id", V, lambda db, s: db.get(2**64)),
    (None, N, lambda db, s: db.get(123456789)),
    (None, N, lambda db, s: db.get(s["other_m"])),
    (None, N, lambda db, s: db.provenance(s["other_m"])),
    (None, N, lambda db, s: db.context("Bo")),
    (None, N, lambda db, s: db.recall_2hop("Nobody")),
    ("seed", V, lambda db, s: db.recall_2hop("")),
    ("hops", V, lambda db, s: db.context("Ada", hops=-1)),
    ("hops", V, lambda db, s: db.context("Ada", hops=5)),
    ("hops", V, lambda db, s: db.context("Ada", hops=True)),
    ("hops", V, lambda db, s: db.context("Ada", hops="1")),
    ("limit", V, lambda db, s: db.context("Ada", limit=0)),
    ("kinds", V, lambda db, s: db.context("Ada", kinds=[])),
    ("k", V, lambda db, s: db.recall("tea", k=0)),
    ("k", V, lambda db, s: db.recall("tea", k=-1)),
    ("k", V, lambda db, s: db.recall("tea", k=True)),
    ("query", V, lambda db, s: db.recall("a\x00")),
    ("query", V, lambda db, s: db.recall("   ")),
    ("embedding", E, lambda db, s: db.recall("tea", embedding=[1.0])),
    ("embedding", V, lambda db, s: db.recall("tea", embedding=[math.nan, 0, 0, 1])),
    ("as_of", V, lambda db, s: db.recall("tea", as_of=NAIVE)),
    ("as_of", V, lambda db, s: db.context("Ada", as_of=NAIVE)),
    ("t", V, lambda db, s: db.as_of(NAIVE)),
    ("t", V, lambda db, s: db.as_of("2090-01-01")),
]


@pytest.mark.parametrize("argument,exc,call", BAD_READS)
def test_rejected_read_names_argument(world, argument, exc, call):
    db, s = world
    before = snapshot(db)
    with pytest.raises(exc) as info:
        call(db, s)
    if argument is not None:
        assert info.value.argument == argument
    assert snapshot(db) == before


@pytest.mark.parametrize("tenant", [True, False, -1, 2**63, "1", 1.0, None])
def test_bad_tenant(db_path, tenant):
    with pytest.raises(ValidationError) as info:
        Anatid.open(str(db_path), tenant=tenant)
    assert info.value.argument == "tenant"
    assert not db_path.exists()          # refused before the file was created


def test_bad_embedding_dim_at_open_leaves_the_file_usable(db, db_path):
    db.remember("x", now=at(1))
    before = snapshot(db)
    db.close()
    for bad in (0, -4, True, "4"):
        with pytest.raises(ValidationError) as info:
            Anatid.open(str(db_path), tenant=1, embedding_dim=bad)
        assert info.value.argument == "embedding_dim"
    with pytest.raises(ValidationError) as info:
        Anatid.open(str(db_path), tenant=1, embedding_dim=8)
    assert "embedding_dim" == info.value.argument and "4" in str(info.value)
    # the refused open let go of the file: a plain DuckDB connection (other config) can open it
    duckdb.connect(str(db_path)).close()
    with open_db(db_path) as again:
        assert snapshot(again) == before


def test_errors_are_typed_under_one_base():
    import anatid
    for name in ("ValidationError", "NotFoundError", "ConflictError", "EmbeddingDimensionError",
                 "SchemaVersionError", "BruteForceCeilingError", "DatabaseLocked", "ReadOnlyError"):
        assert issubclass(getattr(anatid, name), AnatidError), name
    assert issubclass(EmbeddingDimensionError, ValidationError)
    assert "accepted:" in str(ValidationError("k", "is bad", "a positive integer"))


def test_conflict_messages_say_whether_retryable(world):
    db, s = world
    with pytest.raises(ConflictError) as stale:
        db.update(s["m"], "x", expected_version=3, now=at(10))
    assert stale.value.retryable and "retryable" in str(stale.value)
    db.supersede(s["m"], "newer", now=at(11))
    with pytest.raises(ConflictError) as closed:
        db.supersede(s["m"], "again", now=at(12))
    assert not closed.value.retryable and "not retryable" in str(closed.value)


def test_read_only_handle_refuses_writes(db, db_path):
    db.remember("x", now=at(1))
    db.close()
    ro = Anatid.open(str(db_path), tenant=1, read_only=True)
    try:
        from anatid import ReadOnlyError
        with pytest.raises(ReadOnlyError):
            ro.remember("y")
        assert snapshot(ro)["anatid_memories"][0][3] == "x"
    finally:
        ro.close()


def test_now_can_be_iso_string_with_offset(db):
    m = db.remember("x", now="2090-01-01T02:00:00+02:00")
    assert m.tx_from == at(0)
    m2 = db.remember("y", now=(at(0) + timedelta(hours=1)).isoformat().replace("+00:00", "Z"))
    assert m2.tx_from == at(3600)
