"""The process-wide cache of folded graph journals (src/graph_cache.hpp, JournalCache).

A read reuses a fold only when its journal's bytes equal the cached ones; rows that
come and go with a transaction (uncommitted writes, a rollback) must never be served
from the cache. Every read is checked against the SQL oracle.
"""
from __future__ import annotations

import pytest

import anatid
from anatid import validate
from anatid.native_graph import recall_ids
from anatid.verbs.graph_sql import graph_recall_oracle


def _journal_stats(db):
    return db.stats()["graph"]["cache"]["journal"]


def _native_ids(db, seed):
    # the ids straight from anatid_graph_recall: the verb's hydration would hide a stale
    # fold's rolled-back memories (they have no row to join)
    store = db._store
    cur = store.read()
    key = [validate.name_key(seed)]
    got = [m for m, _ in recall_ids(cur, store.tenant, key, 2, 50, None, None)]
    oracle = graph_recall_oracle(store, cur, store.view(None), key, 2, None, 50)
    assert got == [h.memory_id for h in oracle]
    return got


def test_reads_reuse_the_fold_and_a_rollback_is_not_served_from_it(tmp_path):
    with anatid.Anatid.open(str(tmp_path / "j.anatid")) as db:
        if not db.native.loaded:
            pytest.skip(f"native extension not loaded: {db.native.reason}")
        db.remember("Ada in the base", ["Ada"])
        db.maintain_indexes()
        kept = db.remember("Ada after the build", ["Ada"])          # reaches reads through the journal
        s0 = _journal_stats(db)
        before = _native_ids(db, "Ada")
        assert kept.memory_id in before
        assert _native_ids(db, "Ada") == before
        s1 = _journal_stats(db)
        assert s1["hits"] >= s0["hits"] + 1                          # the second read reused the fold

        with pytest.raises(RuntimeError, match="roll back"):
            with db.transaction():
                m = db.remember("uncommitted", ["Ada"])
                db.relate("Ada", "Babbage")
                far = db.remember("via Babbage", ["Babbage"])
                inside = _native_ids(db, "Ada")                      # the journal grew: extended
                assert m.memory_id in inside and far.memory_id in inside
                raise RuntimeError("roll back")
        assert _journal_stats(db)["extends"] >= s1["extends"] + 1
        assert _native_ids(db, "Ada") == before                      # not the cached uncommitted fold

        db.relate("Ada", "Babbage")                                  # committed writes after it
        db.remember("Babbage, committed", ["Babbage"])
        after = _native_ids(db, "Ada")
        assert len(after) == len(before) + 1
