"""The opt-in ANN vector index (anatid.indexes.ann): recall against the exact scan, the
journal merge (writes, corrections, forgets since the build), when it is used, and what
happens when it is stale, damaged or erased. The exact scan (allow_slow=True) is the oracle.
"""
from __future__ import annotations

import numpy as np
import pytest

import anatid.store
from anatid import Anatid, BruteForceCeilingError
from anatid.errors import ValidationError
from anatid.indexes import ann

from conftest import at

DIM = 24


def _data(n: int, seed: int = 3) -> np.ndarray:
    """Seeded clustered vectors: 40 centres plus noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, DIM))
    return (centres[rng.integers(0, 40, n)] + 0.7 * rng.normal(size=(n, DIM))).astype(np.float32)


def _queries(x: np.ndarray, count: int, seed: int = 9) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(x), count)
    return [(x[i] + 0.4 * rng.normal(size=DIM)).tolist() for i in picks]


def _open(tmp_path, name="ann.anatid"):
    db = Anatid.open(str(tmp_path / name), tenant=1, embedding_dim=DIM)
    if not db.native.loaded:
        db.close()
        pytest.skip(f"the ANN index needs the native extension: {db.native.reason}")
    return db


def _fill(db, x: np.ndarray, start: float = 0.0) -> list[int]:
    mems = db.remember_many([{"content": f"fact {i}", "embedding": x[i].tolist()} for i in range(len(x))],
                            now=at(start))
    return [int(m) for m in mems]


def _ids(hits) -> list[int]:
    return [h.memory_id for h in hits]


def _is_ann(hits) -> bool:
    return any(n.startswith("vector arm: approximate") for n in hits.notes)


def test_recall_at_10_and_50_against_exact_at_5k(tmp_path):
    x = _data(5000)
    with _open(tmp_path) as db:
        _fill(db, x)
        report = db.build_ann_index(use_when="always")
        assert report["tenants"][0]["ann"]["rows"] == 5000
        found10 = found50 = 0
        queries = _queries(x, 40)
        for q in queries:
            approx = db.recall("", embedding=q, k=50)
            exact = db.recall("", embedding=q, k=50, allow_slow=True)
            assert _is_ann(approx) and not _is_ann(exact)
            found10 += len(set(_ids(approx)[:10]) & set(_ids(exact)[:10]))
            found50 += len(set(_ids(approx)) & set(_ids(exact)))
            # the scores are exact: every id both found sits in the same relative order
            common = [i for i in _ids(exact) if i in set(_ids(approx))]
            assert [i for i in _ids(approx) if i in set(common)] == common
        assert found10 / (10 * len(queries)) >= 0.99
        assert found50 / (50 * len(queries)) >= 0.99


def test_the_calibrated_width_keeps_recall_on_iid_vectors_where_the_candidates_alone_do_not(tmp_path, monkeypatch):
    # i.i.d. normal 64-d vectors have no structure for the graph to exploit: a search only as
    # wide as the candidates it returns misses neighbours; the width the build calibrated on
    # held-out rows must not. Fresh queries, not rows: the calibration never saw them.
    rng = np.random.default_rng(17)
    dim = 64
    x = rng.normal(size=(5000, dim)).astype(np.float32)
    queries = rng.normal(size=(100, dim)).tolist()
    with Anatid.open(str(tmp_path / "iid.anatid"), tenant=1, embedding_dim=dim) as db:
        if not db.native.loaded:
            pytest.skip(db.native.reason)
        db.remember_many([{"content": f"v {i}", "embedding": x[i].tolist()} for i in range(len(x))], now=at(0))
        report = db.build_ann_index(use_when="always")
        cal = report["tenants"][0]["ann"]["calibration"]
        assert [(c["depth"], c["candidates"], c["queries"]) for c in cal] == [
            (d, ann.candidates(d), 200) for d in ann.CALIBRATED_DEPTHS]     # the C++ rule is the plan's
        assert all(c["ef_search"] > c["candidates"] and c["recall_at_depth"] >= 0.995 for c in cal)
        assert all(0 < c["visited"] <= 1 for c in cal)
        exact = [_ids(db.recall("", embedding=q, k=50, allow_slow=True)) for q in queries]

        def recall_at(k):
            found = 0
            for q, e in zip(queries, exact):
                hits = db.recall("", embedding=q, k=50)
                assert _is_ann(hits)
                found += len(set(_ids(hits)[:k]) & set(e[:k]))
            return found / (k * len(queries))
        assert recall_at(10) >= 0.99 and recall_at(50) >= 0.99
        assert any(f"ef_search={cal[1]['ef_search']} (calibrated at depth 50)" in n
                   for n in db.recall("", embedding=queries[0], k=50).notes)
        # without the calibrated width (the guard) the same generation falls short
        monkeypatch.setattr(ann, "search_width", lambda known, depth: (0, "(no guard)"))
        ann.forget_plans(db._store)
        assert recall_at(50) < 0.99


def test_an_explicit_ef_search_fixes_the_width_and_small_tenants_search_every_row(tmp_path):
    x = _data(300)
    with _open(tmp_path) as db:
        _fill(db, x)
        report = db.build_ann_index(use_when="always")
        # below 1,000 rows nothing is held out: the width covers every row (exhaustive)
        assert [(c["ef_search"], c["queries"], c["recall_at_10"], c["visited"])
                for c in report["tenants"][0]["ann"]["calibration"]] == [(300, 0, None, None), (300, 0, None, None)]
        assert ann.status(db._store, db.connection, 1)["ef_search"] == "calibrated"
        db.build_ann_index(use_when="always", ef_search=64)
        q = _queries(x, 1)[0]
        assert any("ef_search=100 (set by build_ann_index)" in n for n in db.recall("", embedding=q, k=10).notes)
        assert any("ef_search=64 (set by build_ann_index)" in n for n in db.recall("", embedding=q, k=5, depth=5).notes)


def test_a_generation_without_calibration_is_answered_exactly_with_a_note(tmp_path):
    x = _data(300)
    with _open(tmp_path) as db:
        _fill(db, x)
        db.build_ann_index(use_when="always")
        db.connection.execute("DELETE FROM anatid_ann_calibration")     # as if built before it existed
        ann.forget_plans(db._store)
        q = _queries(x, 1)[0]
        hits = db.recall("", embedding=q, k=5)
        assert not _is_ann(hits) and any("has no calibration" in n for n in hits.notes)
        assert _ids(hits) == _ids(db.recall("", embedding=q, k=5, allow_slow=True))


def test_the_width_follows_the_depth():
    known = {"ef_search": 0, "ef_10": 120, "ef_50": 300}
    assert ann.search_width(known, 5) == (120, "(calibrated at depth 10)")
    assert ann.search_width(known, 10)[0] == 120
    assert ann.search_width(known, 11)[0] == 300 and ann.search_width(known, 50)[0] == 300
    assert ann.search_width({**known, "ef_10": 400}, 50)[0] == 400      # never below depth 10's
    assert ann.search_width(known, 125) == (750, "(calibrated at depth 50, scaled to depth 125)")
    assert ann.search_width(known, 51)[0] == 306                          # rounded up
    assert ann.search_width({**known, "ef_search": 64}, 500) == (64, "(set by build_ann_index)")
    assert [ann.candidates(d) for d in (1, 10, 50, 51, 100_000)] == [51, 60, 100, 102, 100_000]


def test_ann_info_reads_the_header(tmp_path):
    with _open(tmp_path) as db:
        _fill(db, _data(1200))
        db.build_ann_index(use_when="always")
        con = db.connection
        info = con.execute("SELECT anatid_ann_info(payload) FROM anatid_ann_gen_parts").fetchone()[0]
        assert (info["format_version"], info["dim"], info["rows"], info["m"], info["calibration_queries"]) == \
            (2, DIM, 1200, 16, 120)
        assert info["depth"] == [10, 50] and info["candidates"] == [60, 100]
        assert all(0 < v < 1 for v in info["visited"])
        stored = con.execute("SELECT list(ef ORDER BY depth) FROM anatid_ann_calibration").fetchone()[0]
        assert info["ef"] == stored
        assert con.execute("SELECT anatid_ann_info(NULL::BLOB)").fetchone()[0] is None
        with pytest.raises(Exception, match="bad magic"):
            con.execute("SELECT anatid_ann_info('not an index'::BLOB)").fetchone()


def test_an_exhaustive_search_equals_the_exact_scan_through_random_writes(tmp_path):
    # ef_search >= rows makes the HNSW search visit the whole (connected) graph, so any
    # difference from the exact scan would be the journal merge's fault.
    rng = np.random.default_rng(5)
    x = _data(600, seed=11)
    with _open(tmp_path) as db:
        ids = _fill(db, x)
        db.build_ann_index(use_when="always", ef_search=2000)
        clock = 10.0
        for step in range(60):
            clock += 1
            op = rng.integers(0, 4)
            if op == 0:
                m = db.remember(f"new {step}", embedding=rng.normal(size=DIM).tolist(), now=at(clock))
                ids.append(m.memory_id)
            elif op == 1:
                victim = ids.pop(int(rng.integers(0, len(ids))))
                db.forget(victim, now=at(clock))
            elif op == 2:
                old = ids.pop(int(rng.integers(0, len(ids))))
                ids.append(db.supersede(old, f"corrected {step}", now=at(clock)).memory_id)
            else:
                m = db.remember(f"valid later {step}", embedding=rng.normal(size=DIM).tolist(),
                                valid_from=at(clock + 10_000), now=at(clock))
            if step % 6 == 5:
                for q in _queries(x, 3, seed=step):
                    approx = db.recall("", embedding=q, k=30)
                    exact = db.recall("", embedding=q, k=30, allow_slow=True)
                    assert _is_ann(approx)
                    assert _ids(approx) == _ids(exact)
                    assert [h.score for h in approx] == [h.score for h in exact]


def test_hybrid_with_text_and_ann_equals_exact_when_exhaustive(tmp_path):
    x = _data(400, seed=2)
    with _open(tmp_path) as db:
        db.remember_many([{"content": f"note {i} about {'coffee' if i % 7 == 0 else 'tea'}",
                           "embedding": x[i].tolist(), "entities": ["Ada"] if i % 11 == 0 else []}
                          for i in range(400)], now=at(0))
        db.maintain_indexes()
        db.build_ann_index(use_when="always", ef_search=1000)
        q = _queries(x, 1)[0]
        for _ in range(2):   # the first call may parse the text generation through the macro
            approx = db.recall("coffee Ada", embedding=q, k=10)
        exact = db.recall("coffee Ada", embedding=q, k=10, allow_slow=True)
        assert _is_ann(approx)
        assert _ids(approx) == _ids(exact) and [h.sources for h in approx] == [h.sources for h in exact]


def test_above_ceiling_only_by_default(tmp_path, monkeypatch):
    x = _data(1200)
    with _open(tmp_path) as db:
        _fill(db, x)
        db.maintain_indexes()
        monkeypatch.setattr(anatid.store, "BRUTE_FORCE_CEILING", 1000)
        q = _queries(x, 1)[0]
        with pytest.raises(BruteForceCeilingError):
            db.recall("", embedding=q, k=10)
        db.build_ann_index()                        # use_when='above_ceiling'
        hits = db.recall("", embedding=q, k=10)
        assert _is_ann(hits) and len(hits) == 10
        assert not _is_ann(db.recall("", embedding=q, k=10, allow_slow=True))
        monkeypatch.setattr(anatid.store, "BRUTE_FORCE_CEILING", 100_000)
        assert not _is_ann(db.recall("", embedding=q, k=10))   # below the ceiling: exact


def test_maintain_keeps_it_fresh_and_a_bypassed_rebuild_makes_it_stale(tmp_path):
    x = _data(300)
    with _open(tmp_path) as db:
        _fill(db, x)
        db.build_ann_index(use_when="always")
        db.remember("later", embedding=x[0].tolist(), now=at(100))
        report = db.maintain_indexes()
        assert "ann" in report["vector"]["tenants"][0]
        q = _queries(x, 1)[0]
        assert _is_ann(db.recall("", embedding=q, k=5))
        from anatid.indexes import vector
        vector.rebuild_vector_index(db)            # bypasses maintain_indexes: the ANN no longer covers it
        hits = db.recall("", embedding=q, k=5)
        assert not _is_ann(hits)
        assert any("ANN generation is stale" in n for n in hits.notes)
        assert _ids(hits) == _ids(db.recall("", embedding=q, k=5, allow_slow=True))
        entry = [e for e in db.index_health() if e["index"] == "ann"]
        assert [(e["reason"], e["due"]) for e in entry] == [("stale_generation", True)]
        assert any(f.check == "index_stale_generation" and "ann@1" in f.sample_ids for f in db.doctor().findings)
        db.maintain_indexes()                      # a due ANN generation is rebuilt with its vector generation
        assert [e["reason"] for e in db.index_health() if e["index"] == "ann"] == ["fresh"]
        assert _is_ann(db.recall("", embedding=q, k=5))


def test_index_health_lists_it_only_when_opted_in(tmp_path):
    with _open(tmp_path) as db:
        _fill(db, _data(50))
        db.maintain_indexes()
        assert "ann" not in {e["index"] for e in db.index_health()}
        db.build_ann_index()
        assert [(e["reason"], e["base_rows"]) for e in db.index_health() if e["index"] == "ann"] == [("fresh", 50)]
        ann.drop_ann_index(db)
        assert "ann" not in {e["index"] for e in db.index_health()}


def test_a_damaged_generation_is_reported_and_the_exact_scan_answers(tmp_path):
    x = _data(300)
    with _open(tmp_path) as db:
        _fill(db, x)
        db.build_ann_index(use_when="always")
        con = db.connection
        # flip a byte in the middle and change the nonce, so this process must parse it again
        blob = bytearray(con.execute("SELECT payload FROM anatid_ann_gen_parts").fetchone()[0])
        blob[len(blob) // 2] ^= 0xFF
        con.execute("UPDATE anatid_ann_gen_parts SET payload = $p", {"p": bytes(blob)})
        con.execute("UPDATE anatid_ann_gen SET nonce = nonce + 1")
        q = _queries(x, 1)[0]
        hits = db.recall("", embedding=q, k=5)
        assert not _is_ann(hits)
        assert any("could not be loaded" in n and "checksum" in n for n in hits.notes)
        assert _ids(hits) == _ids(db.recall("", embedding=q, k=5, allow_slow=True))


def test_a_hard_forget_drops_the_generation_that_holds_the_vector(tmp_path):
    x = _data(200)
    with _open(tmp_path) as db:
        ids = _fill(db, x)
        db.build_ann_index(use_when="always")
        db.forget(ids[0], hard=True, now=at(50))
        con = db.connection
        assert con.execute("SELECT count(*) FROM anatid_ann_gen").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM anatid_ann_gen_parts").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM anatid_ann_calibration").fetchone()[0] == 0
        assert ann.status(db._store, con, 1)["state"] == "absent"     # still opted in
        db.maintain_indexes()
        assert ann.status(db._store, con, 1)["state"] == "fresh"
        q = x[0].tolist()
        assert ids[0] not in _ids(db.recall("", embedding=q, k=10))


def test_bad_settings_are_refused_and_leave_the_file_unchanged(tmp_path):
    with _open(tmp_path) as db:
        _fill(db, _data(50))
        for kw in ({"m": 1}, {"m": "16"}, {"ef_construction": 0}, {"ef_search": True}, {"use_when": "sometimes"}):
            with pytest.raises(ValidationError):
                db.build_ann_index(**kw)
        assert db.connection.execute("SELECT count(*) FROM anatid_ann_config").fetchone()[0] == 0


def test_a_rebuild_of_the_same_rows_gives_the_same_bytes(tmp_path):
    with _open(tmp_path) as db:
        _fill(db, _data(300))
        payload = "SELECT payload FROM anatid_ann_gen_parts"
        db.build_ann_index(use_when="always")
        first = db.connection.execute(payload).fetchone()[0]
        db.build_ann_index(use_when="always")
        assert db.connection.execute(payload).fetchone()[0] == first
        db.build_ann_index(use_when="always", m=8)
        assert db.connection.execute(payload).fetchone()[0] != first


def test_without_the_extension_it_says_what_to_do(tmp_path, monkeypatch):
    with Anatid.open(str(tmp_path / "sql.anatid"), tenant=1, embedding_dim=DIM) as db:
        from anatid._native import NativeStatus
        monkeypatch.setattr(db._store, "native", NativeStatus(False, "disabled by the test"))
        with pytest.raises(ann.AnnUnavailableError, match="native extension"):
            db.build_ann_index()


def test_the_sql_docs_ann_examples_run(tmp_path):
    import re
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[1] / "docs" / "sql.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", doc.split("## ANN vector index", 1)[1].split("\n## ", 1)[0], re.S)
    assert blocks
    db = Anatid.open(str(tmp_path / "doc.anatid"), embedding_dim=2)
    if not db.native.loaded:
        db.close()
        pytest.skip(db.native.reason)
    with db:
        near = db.remember("near", embedding=[0.1, 0.8])
        db.remember("far", embedding=[1.0, -0.2])
        db.build_ann_index(use_when="always")
        cur = db.connection.cursor()
        rows = []
        for block in blocks:
            for statement in block.split(";"):
                if statement.strip():
                    rows = cur.execute(statement).fetchall()
        assert len(rows) == 2 and rows[0][0] == near.memory_id     # best first


def test_doctor_flags_an_ann_generation_older_than_a_hard_forget(tmp_path):
    with _open(tmp_path) as db:
        ids = _fill(db, _data(100))
        db.build_ann_index(use_when="always")
        con = db.connection
        gen = con.execute("SELECT * FROM anatid_ann_gen").fetchall()
        parts = con.execute("SELECT * FROM anatid_ann_gen_parts").fetchall()
        db.forget(ids[0], hard=True, now=at(50))
        check = "generation_before_erase:anatid_ann_gen"
        assert not [f for f in db.doctor().findings if f.check == check]
        # a generation that survived the erase (as if the hook had not run) holds the vector
        con.executemany("INSERT INTO anatid_ann_gen VALUES (?, ?, ?, ?, ?, ?, ?)", gen)
        con.executemany("INSERT INTO anatid_ann_gen_parts VALUES (?, ?, ?)", parts)
        assert [f.severity for f in db.doctor().findings if f.check == check] == ["error"]
