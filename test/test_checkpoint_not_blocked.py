"""No verb leaves a transaction open behind it, so DuckDB can always checkpoint.

DuckDB keeps a connection's transaction open while its last result is half read (a
fetchone()), and an open transaction holds back the cleanup of every UPDATE and DELETE
committed after it began: no checkpoint can run, automatic or manual, and the WAL grows
without bound (a writer of supersedes and updates reached 900 MB). Found when the base
connection kept the open's last fetchone() for the life of the handle.
"""
from __future__ import annotations

import os
import threading

import pytest

from anatid import Anatid

from conftest import DIM


def _wal_bytes(path: str) -> int:
    return os.path.getsize(path + ".wal") if os.path.exists(path + ".wal") else 0


def _every_verb(db) -> None:
    vec = [1.0] + [0.0] * (DIM - 1)
    m = db.remember("Ada wrote notes on the engine", entities=["Ada", "Engine"], embedding=vec)
    db.remember_many([{"content": f"bulk {i}", "entities": ["Ada"]} for i in range(3)])
    db.relate("Ada", "Babbage")
    db.get(m.memory_id)
    db.recall("notes", embedding=vec, seed_entity="Ada")
    db.recall_2hop("Ada")
    db.context("Ada", hops=1)
    db.provenance(m.memory_id)
    db.update(m.memory_id, "Ada wrote long notes", expected_version=1)
    db.reinforce(m.memory_id)
    new = db.supersede(m.memory_id, "Ada wrote the first program")
    db.unrelate("Ada", "Babbage")
    db.forget(new.memory_id)
    db.as_of(new.valid_from).get(new.memory_id)
    db.stats()
    db.index_health()
    db.doctor()


@pytest.mark.parametrize("native", ["1", "0"])
def test_a_checkpoint_can_run_after_every_verb(tmp_path, monkeypatch, native):
    monkeypatch.setenv("ANATID_NATIVE", native)
    path = str(tmp_path / "c.anatid")
    with Anatid.open(path, embedding_dim=DIM) as db:
        _every_verb(db)
        db.connection.execute("CHECKPOINT")     # raises if any transaction is still open
        # and the automatic one: with a tiny threshold, the next update's commit checkpoints
        db.connection.execute("SET checkpoint_threshold = '1KB'")
        m = db.remember("one more", entities=["Ada"])
        db.get(m.memory_id)
        db.update(m.memory_id, "one more, corrected", expected_version=1)
        assert _wal_bytes(path) < 1024


def test_a_read_on_a_thread_that_went_idle_does_not_block_checkpoints(tmp_path):
    path = str(tmp_path / "t.anatid")
    with Anatid.open(path, embedding_dim=DIM) as db:
        m = db.remember("Ada wrote notes", entities=["Ada"])
        # stats() ended on a half-read result before reads settled their connection
        reader = threading.Thread(target=lambda: (db.get(m.memory_id), db.recall("notes"),
                                                  db.recall_2hop("Ada"), db.stats()))
        reader.start()
        reader.join()                           # its connection stays, idle, in the handle
        db.update(m.memory_id, "Ada wrote more notes", expected_version=1)
        db.connection.execute("CHECKPOINT")
