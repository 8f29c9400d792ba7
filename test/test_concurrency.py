"""Threads on one handle: appenders never fail, readers keep reading, and
concurrent updates of one row give retryable ConflictErrors that atomic() resolves.

ANATID_CONCURRENCY_SECONDS bounds the append phase (default 3).
"""
from __future__ import annotations

import os
import threading
import time

from anatid import ConflictError

from conftest import open_db

SECONDS = float(os.environ.get("ANATID_CONCURRENCY_SECONDS", "3"))
SHARED = ["ada", "bob", "cyd", "dee"]


def test_six_appenders_two_readers_no_errors_and_counts_match(db):
    for name in SHARED:  # creating one new entity from two threads is a real race, tested below
        db.upsert_entity(name)
    stop = time.monotonic() + SECONDS
    acked = {"remember": [], "relate": []}
    errors: list[BaseException] = []
    reads = [0, 0]
    lock = threading.Lock()

    def appender(i: int) -> None:
        n = 0
        try:
            while time.monotonic() < stop:
                n += 1
                m = db.remember(f"thread {i} fact {n}", entities=[SHARED[n % 4], f"own{i}"],
                                embedding=[1.0, i, n % 7, 0.5])
                with lock:
                    acked["remember"].append(m.memory_id)
                if n % 3 == 0:
                    e = db.relate(f"own{i}", f"peer{i}x{n}", "knows")
                    with lock:
                        acked["relate"].append(e.edge_id)
        except BaseException as exc:  # noqa: BLE001 - any error fails the test
            errors.append(exc)

    def reader(j: int) -> None:
        try:
            while time.monotonic() < stop:
                if j == 0:
                    db.recall("fact thread", k=10, embedding=[1.0, 2.0, 3.0, 0.5])
                else:
                    db.recall_2hop(SHARED, limit=20)
                reads[j] += 1
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=appender, args=(i,)) for i in range(6)]
    threads += [threading.Thread(target=reader, args=(j,)) for j in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=SECONDS + 60)
    assert errors == []
    assert acked["remember"] and all(reads), (len(acked["remember"]), reads)
    con = db.connection
    ids = {r[0] for r in con.execute("SELECT memory_id FROM anatid_memories WHERE tenant_id = 1").fetchall()}
    assert ids == set(acked["remember"])
    edges = {r[0] for r in con.execute("SELECT edge_id FROM anatid_edges WHERE tenant_id = 1 "
                                       "AND kind = 'relates'").fetchall()}
    assert edges == set(acked["relate"])
    assert len(db.recall_2hop("ada", limit=100_000)) > 0


def test_concurrent_updates_of_one_row_conflict_retryably_and_atomic_resolves(db):
    mid = db.remember("counter 0").memory_id
    barrier = threading.Barrier(4)
    outcomes: list[object] = []

    def racer(i: int) -> None:
        barrier.wait()
        try:
            db.update(mid, f"racer {i}", expected_version=1)
            outcomes.append("ok")
        except ConflictError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wins = outcomes.count("ok")
    losses = [o for o in outcomes if o != "ok"]
    assert wins == 1 and len(losses) == 3
    assert all(isinstance(e, ConflictError) and e.retryable for e in losses)

    done: list[int] = []

    def bump(i: int) -> None:
        def fn(d):
            cur = d.get(mid)
            return d.update(mid, f"bump {i}", expected_version=cur.version).version
        done.append(db.atomic(fn, retries=50, base_delay=0.001))

    threads = [threading.Thread(target=bump, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(done) == list(range(3, 9))
    assert db.get(mid).version == 8


def test_racing_creation_of_one_entity_is_retryable_and_atomic_resolves(db_path):
    db = open_db(db_path)
    try:
        barrier = threading.Barrier(4)
        results: list[int] = []
        errors: list[BaseException] = []

        def worker(i: int) -> None:
            barrier.wait()
            try:
                results.append(db.atomic(lambda d: d.remember(f"about zed {i}", entities=["zed"]).memory_id,
                                         retries=50, base_delay=0.001))
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and len(results) == 4
        assert db.connection.execute("SELECT count(*) FROM anatid_entities WHERE name_key = 'zed'").fetchone()[0] == 1
        assert len(db.context("zed")) == 4
    finally:
        db.close()
