"""The text journal's postings column ("term:tf ..." strings, src/text_journal.hpp): a file
written with the old layout (terms VARCHAR[] + tfs INTEGER[]) answers correctly when opened
read-only (the SQL oracle, with a note) and is migrated in one transaction by a read-write
open; the process-wide fold cache never serves rows a transaction rolled back."""
from __future__ import annotations

from datetime import timedelta

import duckdb
import pytest

from anatid import Anatid
from anatid.indexes.text import rebuild_fts_index

from conftest import at

_OLD_LAYOUT = """
CREATE TABLE anatid_text_journal_new AS SELECT * FROM anatid_text_journal;
DROP TABLE anatid_text_journal;
CREATE TABLE anatid_text_journal (tenant_id BIGINT NOT NULL, memory_id BIGINT NOT NULL, seq BIGINT NOT NULL,
    doc_len INTEGER, vf BIGINT, vt BIGINT, terms VARCHAR[], tfs INTEGER[]);
INSERT INTO anatid_text_journal
SELECT tenant_id, memory_id, seq, doc_len, vf, vt,
       CASE WHEN postings IS NOT NULL THEN list_transform(string_split(postings, ' '), lambda x: split_part(x, ':', 1)) END,
       CASE WHEN postings IS NOT NULL THEN
           list_transform(string_split(postings, ' '), lambda x: CAST(split_part(x, ':', 2) AS INTEGER)) END
FROM anatid_text_journal_new;
DROP TABLE anatid_text_journal_new;
"""


def _answer(db, query):
    hits = db.recall(query, k=10)
    return [(h.memory_id, round(h.score, 12), h.sources) for h in hits], hits


def _fill(db):
    for i in range(12):
        db.remember(f"note {i} about {'apples' if i % 2 else 'pears'} and café", now=at(i + 1))
    rebuild_fts_index(db)
    # journalled since the build: new text, an update, a closed memory, a document without tokens
    db.remember("fresh apples from the café, apples again", now=at(20))
    first = db.recall("pears", k=1)[0].memory_id
    db.update(first, "now about plums and apples", expected_version=1, now=at(21))
    db.forget(db.recall("apples", k=1)[0].memory_id, now=at(22))
    db.remember("!!!", now=at(23))


def test_an_old_layout_file_answers_read_only_and_migrates_read_write(tmp_path):
    path = str(tmp_path / "old.anatid")
    db = Anatid.open(path)
    _fill(db)
    queries = ["apples", "pears plums", "café", "apples café pears"]
    want = {q: _answer(db, q)[0] for q in queries}
    db.close()
    con = duckdb.connect(path)
    for statement in _OLD_LAYOUT.split(";"):
        if statement.strip():
            con.execute(statement)
    old_rows = sorted(con.execute("SELECT memory_id, seq, doc_len, terms, tfs FROM anatid_text_journal").fetchall())
    con.close()
    assert any(r[3] for r in old_rows) and any(r[2] is None or not r[3] for r in old_rows)

    ro = Anatid.open(path, read_only=True)
    for q in queries:
        got, hits = _answer(ro, q)
        assert got == want[q], q
        if ro.native.loaded:
            assert any("old layout" in n for n in hits.notes), hits.notes
    ro.close()

    rw = Anatid.open(path)
    cur = rw.connection
    cols = [r[0] for r in cur.execute("SELECT column_name FROM duckdb_columns() "
                                      "WHERE table_name = 'anatid_text_journal' ORDER BY column_index").fetchall()]
    assert cols == ["tenant_id", "memory_id", "seq", "doc_len", "vf", "vt", "postings"]
    migrated = sorted(cur.execute("SELECT memory_id, seq, doc_len, postings FROM anatid_text_journal").fetchall())
    assert [(m, s, n, p.split(" ") if p else None) for m, s, n, p in migrated] == \
        [(m, s, n, [f"{t}:{f}" for t, f in zip(terms, tfs)] if terms else None) for m, s, n, terms, tfs in old_rows]
    for q in queries:
        got, hits = _answer(rw, q)
        assert got == want[q], q
        assert not any("old layout" in n for n in hits.notes)
    rw.close()


def test_the_fold_cache_never_serves_rolled_back_rows(tmp_path):
    from anatid import native_hybrid as nh
    db = Anatid.open(str(tmp_path / "cache.anatid"))
    if not db.native.loaded:
        db.close()
        pytest.skip(db.native.reason)
    m = [db.remember(f"plain note {i}", now=at(i + 1)).memory_id for i in range(5)]
    rebuild_fts_index(db)
    db.remember("another plain note", now=at(10))
    db.recall("plain", k=1)           # parses the generation in this process
    con = db.connection
    at_us = (db._store.view().valid_at - nh._EPOCH) // timedelta(microseconds=1)
    request = nh.encode_request(at_us=at_us, depth=10, k=10, wv=1.0, wt=1.0, wg=1.0, vector_ceiling=None,
                                terms=["zebra"], qvec=None, qnorm=None, gids=[], ghops=[])
    sql = nh._rank_sql(True, False)

    def ranked():
        return [h["memory_id"] for h in con.execute(sql, {"tenant": 0, "request": request}).fetchone()[0]]

    assert ranked() == []
    con.execute("BEGIN")
    con.execute("INSERT INTO anatid_text_journal SELECT tenant_id, memory_id, seq + 1000000, doc_len, vf, vt, "
                "'zebra:2' FROM anatid_text_journal WHERE memory_id = (SELECT max(memory_id) FROM anatid_text_journal)")
    assert len(ranked()) == 1         # the transaction's own row (folded by extending the cached state)
    con.execute("ROLLBACK")
    assert ranked() == []             # the cached state with the row is not the scanned bytes any more
    con.execute("BEGIN")
    con.execute("INSERT INTO anatid_text_journal VALUES (0, $m, 99999999999, 3, 0, 9223372036854775807, "
                "'zebra:1 zoo:2')", {"m": m[2]})
    assert ranked() == [m[2]]
    con.execute("ROLLBACK")
    assert ranked() == []
    db.close()
