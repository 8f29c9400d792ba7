"""A text build whose validation finds postings missing re-derives them set-wise from the
believed content: the rows it writes are exactly the ones the write verbs wrote."""
from __future__ import annotations

from anatid import Anatid

ROWS = [("Ada wrote the first program", ["Ada"]), ("Café au lait, déjà vu: ÉCOLE 42", ["Paris"]),
        ("東京 タワー and 42 towers", []), ("!!! ---", []), ("the the THE tHe", ["Ada"])]


def snapshot(con):
    return (sorted(con.execute("SELECT tenant_id, memory_id, term, tf FROM anatid_postings").fetchall()),
            sorted(con.execute("SELECT tenant_id, memory_id, doc_len FROM anatid_text_docs").fetchall()))


def test_lost_postings_of_every_memory_are_rederived_as_written(tmp_path):
    with Anatid.open(str(tmp_path / "m.anatid"), tenant=3) as db:
        for content, ents in ROWS * 3:
            db.remember(content, ents)
        gone = db.remember("soon superseded text", ["Ada"])
        db.supersede(gone.memory_id, "its replacement text")
        db.forget(db.remember("forgotten words").memory_id)
        con = db.connection
        # A healthy file repairs nothing (a superseded memory rightly has no postings).
        assert "repaired" not in db.maintain_indexes(force=True)["text"]["tenants"][0]
        before = snapshot(con)
        assert before[0], "the verbs wrote postings"
        # As a bulk load that skipped the derived rows leaves a file: no postings at all.
        con.execute("DELETE FROM anatid_postings")
        report = db.maintain_indexes(force=True)
        # every document with terms lost them; token-less ones ("!!! ---") still add up
        assert sorted(report["text"]["tenants"][0]["repaired"]) == sorted(str(m) for _, m, n in before[1] if n > 0)
        assert snapshot(con) == before
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'anatid_rederive'").fetchone()[0] == 0
