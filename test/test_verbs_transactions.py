"""Transactions: transaction(), atomic(), CAS races, and 'one verb = one transaction'.

The last group injects a failure at every statement of every write verb and
checks that the file is unchanged afterwards: no verb leaves partial rows.
"""
from __future__ import annotations

import threading

import pytest

from anatid import ConflictError

from conftest import at, snapshot, vec


def test_transaction_groups_two_verbs(db):
    with db.transaction():
        a = db.remember("one", entities=["A"], now=at(1))
        db.relate("A", "B", now=at(2))
    assert db.get(a.memory_id).content == "one"
    assert db.stats()["open_relations"] == 1


def test_transaction_rolls_back_both_on_exception(db):
    db.remember("before", now=at(0))
    before = snapshot(db)
    with pytest.raises(RuntimeError):
        with db.transaction():
            db.remember("one", entities=["A"], now=at(1))
            db.relate("A", "B", now=at(2))
            raise RuntimeError("boom")
    assert snapshot(db) == before


def test_atomic_retries_a_retryable_conflict(db):
    m = db.remember("v1", now=at(1))
    calls = []

    def fn(d):
        calls.append(1)
        current = d.get(m.memory_id)
        if len(calls) == 1:       # the first attempt loses a race (stale version)
            d.update(m.memory_id, "lost", expected_version=current.version + 1, now=at(2))
        return d.update(m.memory_id, "won", expected_version=current.version, now=at(3))

    out = db.atomic(fn, base_delay=0)
    assert len(calls) == 2 and out.content == "won" and out.version == 2
    assert db.connection.execute("SELECT count(*) FROM anatid_memories").fetchone() == (2,)


def test_atomic_does_not_retry_a_non_retryable_conflict(db):
    m = db.remember("v1", now=at(1))
    db.forget(m.memory_id, now=at(2))
    calls = []

    def fn(d):
        calls.append(1)
        d.supersede(m.memory_id, "x", now=at(3))

    with pytest.raises(ConflictError) as e:
        db.atomic(fn, base_delay=0)
    assert e.value.retryable is False and len(calls) == 1


def test_concurrent_update_is_a_retryable_conflict(db):
    """Two writers read version 1; the slower one's CAS must fail, retryably."""
    m = db.remember("v1", now=at(1))

    def other():
        db.update(m.memory_id, "other", expected_version=1, now=at(2))

    with pytest.raises(ConflictError) as e:
        with db.transaction():
            assert db.get(m.memory_id).version == 1         # our snapshot
            t = threading.Thread(target=other)
            t.start()
            t.join()
            db.update(m.memory_id, "mine", expected_version=1, now=at(3))
    assert e.value.retryable is True
    assert db.get(m.memory_id).content == "other"


# -- failure injection: every statement of every write verb -----------------------------------------
class FailingCursor:
    """Wraps this thread's cursor; the `fail_at`-th execute raises."""

    def __init__(self, real):
        self.real = real
        self.count = 0
        self.fail_at: int | None = None

    def execute(self, *a, **k):
        self.count += 1
        if self.fail_at is not None and self.count == self.fail_at:
            raise RuntimeError(f"injected failure at statement {self.count}")
        return self.real.execute(*a, **k)

    def __getattr__(self, name):
        return getattr(self.real, name)


def _setup(db):
    db.relate("A", "B", now=at(1))
    ep = db.episode("evidence", now=at(2))
    m = db.remember("base fact", entities=["A"], embedding=vec(1), episode=ep.episode_id, now=at(3))
    db.remember("other fact", entities=["B"], now=at(4))
    return {"m": m.memory_id, "ep": ep.episode_id}


WRITES = {
    "remember": lambda db, s, t: db.remember("new", entities=["A", "Z"], embedding=vec(0, 1), episode="ev",
                                             now=t),
    "remember_many": lambda db, s, t: db.remember_many([{"content": "n1", "entities": ["Q"], "embedding": vec(1),
                                                         "episode": "e1"}, {"content": "n2"}], now=t),
    "supersede": lambda db, s, t: db.supersede(s["m"], "replaced", embedding=vec(0, 0, 1), episode="e2", now=t),
    "update": lambda db, s, t: db.update(s["m"], "corrected", expected_version=1, now=t),
    "forget": lambda db, s, t: db.forget(s["m"], now=t),
    "forget_hard": lambda db, s, t: db.forget(s["m"], hard=True, now=t),
    "reinforce": lambda db, s, t: db.reinforce(s["m"], 2.0, now=t),
    "relate": lambda db, s, t: db.relate("B", "Z", now=t),
    "unrelate": lambda db, s, t: db.unrelate("A", "B", now=t),
    "upsert_entity": lambda db, s, t: db.upsert_entity("A", kind="person", now=t),
    "episode": lambda db, s, t: db.episode("raw", now=t),
}


@pytest.mark.parametrize("verb", sorted(WRITES))
def test_write_verb_failing_anywhere_leaves_no_partial_rows(db, verb):
    setup = _setup(db)
    store = db._store
    real = db.connection
    wrapper = FailingCursor(real)
    store._state().cursor = wrapper
    try:
        before = snapshot(db)
        wrapper.count = 0
        # dry count on a copy of the state: run for real inside a transaction we roll back
        with pytest.raises(RuntimeError, match="count only"):
            with db.transaction():
                WRITES[verb](db, setup, at(10))
                n = wrapper.count
                raise RuntimeError("count only")
        assert snapshot(db) == before and n >= 1
        for k in range(1, n + 1):
            wrapper.count = 0
            wrapper.fail_at = k
            with pytest.raises(RuntimeError, match="injected"):
                WRITES[verb](db, setup, at(10 + k))
            wrapper.fail_at = None
            assert snapshot(db) == before, f"{verb}: partial rows after a failure at statement {k}"
        assert db._store.embedding_dim == 4
        WRITES[verb](db, setup, at(100))          # and it still works
    finally:
        store._state().cursor = real
