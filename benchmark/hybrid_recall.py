"""Hybrid recall (BM25 + exact cosine + graph seeds from the query, fused by RRF), side
by side in one process: native anatid.anatid_hybrid, our pure-SQL oracle, LadybugDB.

    python -m benchmark.hybrid_recall --scale 0.1         # 100k memories, 10k per tenant
    python -m benchmark.hybrid_recall --scale 1           # 1M memories, 100k per tenant (the target shape)
    python -m benchmark.hybrid_recall --dim384            # exact top-50 over 100k x 384-d, one tenant
    python -m benchmark.hybrid_recall --scale 1 --queries 1000 --mismatch-only   # ids vs the oracle only

Data: benchmark.datagen's Phase 0 graph (ten tenants, Zipf entities, 5% superseded), with
synthetic text (8-20 words from a Zipf vocabulary of 20k words) and clustered 64-d
embeddings added here, seeded. Text and vector generations are built per tenant, then
500 journalled writes go to tenant 0 so the journal merge is part of what is timed.
Self-checking: the native ids and order are compared with the SQL oracle's on every
query before any time is reported; LadybugDB's with the oracle's as well (it computes in
float32 and its own BM25 query, so a few mismatches there are reported, not hidden).
LadybugDB 0.22's fts and vector extensions download on INSTALL and fail offline, so it
runs exact scans: cosine over a FLOAT[64] column, BM25 in several formulations (a postings
node table; term nodes with a HAS_TERM relationship). A "DuckDB by hand" peer runs the same
in plain SQL without anatid. Neither peer has a graph arm: both are checked against the
oracle with the graph arm off and compared with our engines at those weights; each peer's
fastest formulation with 0 mismatches is `peers_best` in the results.
Single thread everywhere. Writes benchmark/results/hybrid_recall-<scale>.json.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import duckdb
import numpy as np

from . import datagen

RESULTS = Path(__file__).parent / "results"
VOCAB = 20_000
DEPTH, K = 50, 10


def _pct(samples, q):
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def summary(samples):
    return {"p50_ms": round(_pct(samples, 0.50), 3), "p95_ms": round(_pct(samples, 0.95), 3),
            "mean_ms": round(statistics.fmean(samples), 3), "n": len(samples)}


def clocked(fn, *args):
    """fn(*args), then its wall and its process CPU time in ms (the wall clock innermost)."""
    c = time.process_time()
    w = time.perf_counter()
    out = fn(*args)
    wall = (time.perf_counter() - w) * 1000.0
    return out, wall, (time.process_time() - c) * 1000.0


def timed(fn, queries, warmup=20):
    """fn on queries[:warmup] untimed, then on every query: (outputs, wall ms, CPU ms)."""
    for q in queries[:warmup]:
        fn(q)
    out, wall, cpu = [], [], []
    for q in queries:
        o, w, c = clocked(fn, q)
        out.append(o)
        wall.append(w)
        cpu.append(c)
    return out, wall, cpu


def words():
    return np.array([f"w{i}" for i in range(VOCAB)])


def zipf_words(rng, n):
    p = 1.0 / np.arange(1, VOCAB + 1) ** 1.05
    return rng.choice(VOCAB, size=n, p=p / p.sum())


# ---- data -------------------------------------------------------------------------------

def prepare(path: str, scale: float, dim: int, seed: int) -> None:
    """Load Phase 0, then add text, embeddings, postings and one generation per tenant."""
    import anatid
    from anatid.indexes import text as text_index, vector as vector_index
    from anatid.text import tokens_sql
    t0 = time.perf_counter()
    datagen.load(datagen.ensure_parquet(scale, 20260101), path)
    db = anatid.Anatid.open(path, embedding_dim=dim)
    con = db.connection
    ids = con.execute("SELECT memory_id, tenant_id FROM anatid_memories ORDER BY memory_id").fetchnumpy()
    n = len(ids["memory_id"])
    rng = np.random.default_rng(seed)
    vocab = words()
    lens = rng.integers(8, 21, n)
    flat = vocab[zipf_words(rng, int(lens.sum()))]
    bounds = np.concatenate([[0], np.cumsum(lens)])
    content = [" ".join(flat[bounds[i]:bounds[i + 1]]) for i in range(n)]
    centers = rng.normal(size=(256, dim)).astype(np.float32)
    emb = (centers[rng.integers(0, 256, n)] + 0.5 * rng.normal(size=(n, dim))).astype(np.float32)
    import pyarrow as pa
    table = pa.table({"memory_id": ids["memory_id"], "tenant_id": ids["tenant_id"], "content": content,
                      "embedding": pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), dim),
                      "norm": np.linalg.norm(emb.astype(np.float64), axis=1)})
    con.register("bench_text", table)
    con.execute("UPDATE anatid_memories SET content = b.content FROM bench_text b "
                "WHERE b.memory_id = anatid_memories.memory_id")
    con.execute("INSERT INTO anatid_embeddings SELECT memory_id, tenant_id, embedding::FLOAT[], norm FROM bench_text")
    con.execute(f"""INSERT INTO anatid_postings SELECT tenant_id, memory_id, term, count(*)::INTEGER
                    FROM (SELECT tenant_id, memory_id, unnest({tokens_sql('content')}) AS term
                          FROM anatid_memories WHERE tx_to IS NULL) GROUP BY ALL""")
    con.execute("""INSERT INTO anatid_text_docs SELECT tenant_id, memory_id, sum(tf)::INTEGER
                   FROM anatid_postings GROUP BY ALL""")
    con.unregister("bench_text")
    db.close()
    with anatid.Anatid.open(path) as dbt:
        text_index.maintain(dbt._store, all_tenants=True)
        vector_index.maintain(dbt._store, all_tenants=True)
        # anatid_hybrid runs recall()'s graph stage, which reads the graph generation
        dbt.maintain_indexes(all_tenants=True, indexes=("graph",))
    journal_500(path, dim, rng)
    print(f"prepared {path} in {time.perf_counter() - t0:.1f} s", flush=True)


def journal_500(path: str, dim: int, rng) -> list[int]:
    """500 journalled writes over tenant 0, through the ordinary verb, in one batch; their ids."""
    import anatid
    vocab = words()
    with anatid.Anatid.open(path, tenant=0) as db0:
        items = [{"content": " ".join(vocab[zipf_words(rng, 12)]),
                  "embedding": [float(x) for x in rng.normal(size=dim)]} for _ in range(500)]
        return db0.remember_many(items)


# The memories this benchmark writes itself (journal_500's): every other one comes from datagen.
_BENCH_WRITES = "tenant_id = 0 AND writer IS DISTINCT FROM 'datagen'"


def newest_writes(path: str, n: int) -> list[int]:
    """The ids of the n memories journal_500 wrote last (ids grow with time)."""
    import anatid
    with anatid.Anatid.open(path, tenant=0) as db:
        return [int(r[0]) for r in db.connection.execute(
            f"SELECT DISTINCT memory_id FROM anatid_memories WHERE {_BENCH_WRITES} ORDER BY 1 DESC LIMIT $n",
            {"n": n}).fetchall()]


def erase_writes(path: str, ids: list[int], refold=()) -> int:
    """Remove memories journal_500 wrote (`ids`) and return how many. remember_many gave them rows only in the tables with a memory_id column, and no
    edge or other memory refers to them (checked first: the file is left unchanged
    otherwise), so they go from those tables, in one transaction. forget(hard=True) would do
    it through the verbs, but rebuilds the tenant's journals from scratch once per memory.
    A generation built while they existed still holds them: pass its index ("text",
    "vector") in `refold` to rebuild tenant 0's without them."""
    import anatid
    from anatid.indexes import text as text_index, vector as vector_index
    with anatid.Anatid.open(path, tenant=0) as db:
        with db._store.write() as cur:
            p = {"ids": list(ids)}
            refs = cur.execute("""
                SELECT (SELECT count(*) FROM anatid_edges WHERE src_id IN (SELECT unnest($ids))
                                                             OR dst_id IN (SELECT unnest($ids)))
                     + (SELECT count(*) FROM anatid_memories WHERE memory_id NOT IN (SELECT unnest($ids))
                        AND (supersedes IN (SELECT unnest($ids)) OR superseded_by IN (SELECT unnest($ids))))
                     + (SELECT count(*) FROM anatid_memories WHERE memory_id IN (SELECT unnest($ids))
                        AND NOT (""" + _BENCH_WRITES + "))", p).fetchone()[0]
            if refs:
                raise SystemExit(f"{path}: {refs} rows tie the memories to erase to others (or they are not "
                                 "the benchmark's own writes): not erased; rebuild the file with --rebuild")
            tables = [r[0] for r in cur.execute(
                "SELECT table_name FROM duckdb_columns() WHERE database_name = current_database() "
                "AND column_name = 'memory_id' AND table_name LIKE 'anatid\\_%' ESCAPE '\\' ORDER BY 1").fetchall()]
            for t in tables:
                cur.execute(f'DELETE FROM "{t}" WHERE memory_id IN (SELECT unnest($ids))', p)
        maintain = {"text": text_index.maintain, "vector": vector_index.maintain}
        for index in refold:
            maintain[index](db._store)
    return len(ids)


def _generations(path: str) -> dict:
    import anatid
    with anatid.Anatid.open(path, tenant=0) as db:
        return {i: db.connection.execute(f"SELECT max(gen_id) FROM anatid_{i}_gen WHERE tenant_id = 0").fetchone()[0]
                for i in ("text", "vector")}


@contextmanager
def journalled_writes(path: str, dim: int, rng):
    """journal_500's writes for the length of a measurement, then erased: the run leaves the
    file's memory count as it found it. The writes are committed before anything is timed,
    because a read must scan the journal as committed rows (inside a transaction that is
    rolled back afterwards, they would be read from its local storage instead). A tenant-0
    generation rebuilt in between holds them, and is rebuilt again without them."""
    before = _generations(path)
    ids = journal_500(path, dim, rng)
    try:
        yield ids
    finally:
        erase_writes(path, ids, refold=[i for i, g in _generations(path).items() if g != before[i]])


def refresh(path: str, dim: int, seed: int) -> None:
    """Rebuild every tenant's text and vector generations in the current format (an existing
    file is reused), with 500 journalled writes on tenant 0 as prepare() leaves them: the 500
    the benchmark wrote last are erased first, so the memory count stays as it was (refreshes
    before erase_writes() existed added 500 each; those stay, folded into the generations)."""
    import anatid
    from anatid.indexes import text as text_index, vector as vector_index
    t0 = time.perf_counter()
    erased = erase_writes(path, newest_writes(path, 500))
    with anatid.Anatid.open(path) as db:
        text_index.maintain(db._store, all_tenants=True)
        vector_index.maintain(db._store, all_tenants=True)
        db.maintain_indexes(all_tenants=True, indexes=("graph",))   # read by anatid_hybrid's graph stage
    journal_500(path, dim, np.random.default_rng(seed + 99))
    print(f"refreshed {path} in {time.perf_counter() - t0:.1f} s (erased the {erased} memories the benchmark "
          "wrote last, journalled 500)", flush=True)


def choose_queries(n, dim, seed):
    rng = np.random.default_rng(seed + 1)
    vocab = words()
    out = []
    for _ in range(n):
        # mid-frequency words: rank 20..2000 of the Zipf vocabulary
        terms = vocab[rng.integers(20, 2000, int(rng.integers(2, 4)))]
        out.append({"tenant": int(rng.integers(0, datagen.TENANTS)), "query": " ".join(terms),
                    "qvec": [float(x) for x in rng.normal(size=dim)]})
    return out


# ---- LadybugDB --------------------------------------------------------------------------------

LB_VECTOR = """MATCH (m:Memory) WHERE m.tenant = $t
RETURN m.id AS id, array_cosine_similarity(m.emb, $q) AS s ORDER BY s DESC, id LIMIT 50"""
LB_TEXT = """MATCH (p:Posting) WHERE p.tenant = $t AND list_contains($terms, p.term)
WITH p.term AS term, collect(p.mid) AS mids, collect(p.tf) AS tfs, collect(p.len) AS lens, count(*) AS df
UNWIND range(1, size(mids)) AS i
WITH mids[i] AS id, ln(1 + ($n - df + 0.5) / (df + 0.5)) * (tfs[i] * 2.2)
     / (tfs[i] + 1.2 * (0.25 + 0.75 * lens[i] / $avgdl)) AS c
RETURN id, sum(c) AS s ORDER BY s DESC, id LIMIT 50"""


# Term nodes (one per tenant and term, its df over current memories) with a HAS_TERM
# relationship carrying tf, and a per-tenant Stats node: the text arm as a graph user would
# model it. Formulation 1 (one UNION ALL branch per query term, a primary-key lookup of the
# term, the current filter after WITH, the per-posting BM25 part; summed in the client):
LB_TERM_BRANCH = """MATCH (st:Stats {{tenant: $t}}) MATCH (x:Term {{key: $k{i}}})-[h:HAS_TERM]->(m:Memory)
WITH st, x, h, m WHERE m.visible
RETURN m.id AS id, ln(1 + (st.n - x.df + 0.5) / (x.df + 0.5)) * (h.tf * 2.2)
       / (h.tf + 1.2 * (0.25 + 0.75 * m.len / st.avgdl)) AS c"""
# Formulation 2: one statement, the sum, order and limit in the engine, tenant stats passed
# by the client (which reads them once per tenant).
LB_TERM_SUM = """MATCH (x:Term)-[h:HAS_TERM]->(m:Memory) WHERE x.key IN $keys AND m.visible
WITH m.id AS id, sum(ln(1 + ($n - x.df + 0.5) / (x.df + 0.5)) * (h.tf * 2.2)
                     / (h.tf + 1.2 * (0.25 + 0.75 * m.len / $avgdl))) AS s
RETURN id, s ORDER BY s DESC, id LIMIT 50"""
LB_CONTENT = "UNWIND $ids AS i MATCH (m:Memory {id: i}) RETURN m.id, m.content"


def rrf(arms) -> list[int]:
    score: dict[int, float] = {}
    for arm in arms:
        for r, i in enumerate(arm, 1):
            score[i] = score.get(i, 0.0) + 1.0 / (60 + r)
    return [i for i, _ in sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))[:K]]


def export_peers(con, work: Path, dim: int) -> dict:
    """Current memories (embedding, length, content), their postings and the tenants' BM25
    statistics as parquet, for both peers; the stats as {tenant: (n, avgdl)}."""
    work.mkdir(parents=True, exist_ok=True)
    con.execute(f"""COPY (SELECT e.memory_id AS id, e.tenant_id AS tenant, e.embedding::FLOAT[{dim}] AS emb,
                                d.doc_len AS len, true AS visible, m.content
                         FROM anatid_embeddings e JOIN anatid_memories m ON m.memory_id = e.memory_id
                         JOIN anatid_text_docs d ON d.memory_id = e.memory_id
                         WHERE m.tx_to IS NULL AND m.valid_to IS NULL ORDER BY tenant, id)
                   TO '{work}/memory.parquet' (FORMAT parquet)""")
    con.execute(f"""COPY (SELECT row_number() OVER () AS pid, p.tenant_id AS tenant, p.term, p.memory_id AS mid,
                                p.tf, d.doc_len AS len
                         FROM anatid_postings p JOIN anatid_text_docs d USING (memory_id)
                         JOIN anatid_memories m ON m.memory_id = p.memory_id
                         WHERE m.tx_to IS NULL AND m.valid_to IS NULL) TO '{work}/posting.parquet' (FORMAT parquet)""")
    stats = dict((int(t), (float(n), float(a))) for t, n, a in con.execute("""
        SELECT d.tenant_id, count(*), avg(d.doc_len) FROM anatid_text_docs d JOIN anatid_memories m
        ON m.memory_id = d.memory_id WHERE m.tx_to IS NULL AND m.valid_to IS NULL GROUP BY 1""").fetchall())
    return stats


def ladybug_setup(con, work: Path, dim: int, stats: dict):
    """LadybugDB over the exported current data, one thread; its formulations by label."""
    import ladybug as lb
    dbdir = work / "lb"
    if dbdir.exists():
        import shutil
        shutil.rmtree(dbdir) if dbdir.is_dir() else dbdir.unlink()
    duck = duckdb.connect()
    duck.execute(f"""COPY (SELECT tenant || '|' || term AS key, count(*) AS df FROM read_parquet('{work}/posting.parquet')
                          GROUP BY 1) TO '{work}/term.parquet' (FORMAT parquet)""")
    duck.execute(f"""COPY (SELECT tenant || '|' || term AS "from", mid AS "to", tf FROM read_parquet('{work}/posting.parquet'))
                     TO '{work}/has_term.parquet' (FORMAT parquet)""")
    duck.execute(f"""COPY (SELECT tenant, count(*)::DOUBLE AS n, avg(len) AS avgdl FROM read_parquet('{work}/memory.parquet')
                          GROUP BY 1) TO '{work}/stats.parquet' (FORMAT parquet)""")
    duck.close()
    db = lb.Database(str(dbdir), compression=False)
    c = lb.Connection(db, num_threads=1)
    c.execute(f"CREATE NODE TABLE Memory(id INT64, tenant INT64, emb FLOAT[{dim}], len INT64, visible BOOLEAN, "
              "content STRING, PRIMARY KEY(id))")
    c.execute("CREATE NODE TABLE Posting(pid INT64, tenant INT64, term STRING, mid INT64, tf INT64, len INT64, "
              "PRIMARY KEY(pid))")
    c.execute("CREATE NODE TABLE Term(key STRING, df INT64, PRIMARY KEY(key))")
    c.execute("CREATE NODE TABLE Stats(tenant INT64, n DOUBLE, avgdl DOUBLE, PRIMARY KEY(tenant))")
    c.execute("CREATE REL TABLE HAS_TERM(FROM Term TO Memory, tf INT64)")
    c.execute(f"COPY Memory FROM '{work}/memory.parquet'")
    c.execute(f"COPY Posting FROM '{work}/posting.parquet'")
    c.execute(f"COPY Term FROM '{work}/term.parquet'")
    c.execute(f"COPY Stats FROM '{work}/stats.parquet'")
    c.execute(f"COPY HAS_TERM FROM '{work}/has_term.parquet'")
    vs, ts, sums, content = c.prepare(LB_VECTOR), c.prepare(LB_TEXT), c.prepare(LB_TERM_SUM), c.prepare(LB_CONTENT)
    branches: dict = {}

    def rows(res):
        out = []
        while res.has_next():
            out.append(res.get_next())
        return out

    def vector(q):
        return [int(r[0]) for r in rows(c.execute(vs, {"t": q["tenant"], "q": q["qvec"]}))]

    def postings_scan(q):
        n, avgdl = stats[q["tenant"]]
        return [int(r[0]) for r in rows(c.execute(ts, {"t": q["tenant"], "terms": sorted(set(q["query"].split())),
                                                       "n": n, "avgdl": avgdl}))]

    def keys(q):
        return [f"{q['tenant']}|{t}" for t in sorted(set(q["query"].split()))]

    def term_branches(q):
        ks = keys(q)
        if len(ks) not in branches:
            branches[len(ks)] = c.prepare(" UNION ALL ".join(LB_TERM_BRANCH.format(i=i) for i in range(len(ks))))
        score: dict[int, float] = {}
        for mid, part in rows(c.execute(branches[len(ks)], {"t": q["tenant"], **{f"k{i}": k for i, k in enumerate(ks)}})):
            score[int(mid)] = score.get(int(mid), 0.0) + part
        return [i for i, _ in sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))[:DEPTH]]

    def term_sum(q):
        n, avgdl = stats[q["tenant"]]
        return [int(r[0]) for r in rows(c.execute(sums, {"keys": keys(q), "n": n, "avgdl": avgdl}))]

    def fused(text_arm, with_content=False):
        def run(q):
            ids = rrf((vector(q), text_arm(q)))
            if with_content:
                got = {int(r[0]): r[1] for r in rows(c.execute(content, {"ids": ids}))}
                return [i for i in ids if i in got]
            return ids
        return run
    return db, {
        "postings node table, list_contains scan (the earlier formulation)": fused(postings_scan),
        "term nodes + HAS_TERM(tf), one UNION ALL branch per term, summed in the client": fused(term_branches),
        "term nodes + HAS_TERM(tf), one statement summing in the engine (stats from the client)": fused(term_sum),
        "term nodes + HAS_TERM(tf), one statement summing in the engine, with content": fused(term_sum, True),
        "term nodes + HAS_TERM(tf), UNION ALL per term, with content": fused(term_branches, True),
    }


# ---- DuckDB by hand ---------------------------------------------------------------------------

# What a user would write in plain DuckDB without anatid over the same current data: an
# in-memory DuckDB (one thread), memories sorted by tenant (zone maps skip other tenants in
# the vector scan), BM25 from a postings table with per-term df, fused by RRF in SQL.
HAND_SETUP = [
    "CREATE TABLE docs AS SELECT id, tenant, emb::FLOAT[{dim}] AS emb, len, content FROM read_parquet('{w}/memory.parquet') "
    "ORDER BY tenant, id",
    "CREATE TABLE post AS SELECT tenant, term, mid, tf, len FROM read_parquet('{w}/posting.parquet') ORDER BY tenant, term, mid",
    "CREATE TABLE tdf AS SELECT tenant, term, count(*) AS df FROM post GROUP BY ALL ORDER BY ALL",
    "CREATE TABLE stats (tenant BIGINT PRIMARY KEY, n DOUBLE, avgdl DOUBLE)",
    "INSERT INTO stats SELECT tenant, count(*), avg(len) FROM docs GROUP BY 1",
    # postings denormalised per (tenant, term) into LIST columns behind a primary key
    "CREATE TABLE tlists (tenant BIGINT, term VARCHAR, df BIGINT, mids BIGINT[], tfs BIGINT[], lens BIGINT[], "
    "PRIMARY KEY (tenant, term))",
    "INSERT INTO tlists SELECT tenant, term, count(*), list(mid ORDER BY mid), list(tf ORDER BY mid), "
    "list(len ORDER BY mid) FROM post GROUP BY ALL",
]
_HAND_BM25 = ("ln(1 + (st.n - {df} + 0.5) / ({df} + 0.5)) * ({tf} * 2.2) / ({tf} + 1.2 * (0.25 + 0.75 * {len} / st.avgdl))")
_HAND_TEXT_JOIN = f"""SELECT p.mid AS id, sum({_HAND_BM25.format(df="f.df", tf="p.tf", len="p.len")}) AS s
    FROM post p JOIN tdf f USING (tenant, term), stats st
    WHERE p.tenant = $t AND p.term IN (SELECT unnest($terms)) AND st.tenant = $t
    GROUP BY 1 ORDER BY s DESC, id LIMIT 50"""
_HAND_TEXT_LISTS = f"""SELECT id, sum({_HAND_BM25.format(df="df", tf="tf", len="len")}) AS s
    FROM (SELECT df, unnest(mids) AS id, unnest(tfs) AS tf, unnest(lens) AS len FROM tlists
          WHERE tenant = $t AND term IN (SELECT unnest($terms))), stats st
    WHERE st.tenant = $t GROUP BY 1 ORDER BY s DESC, id LIMIT 50"""
_HAND_FUSED = """WITH t AS ({text}),
     v AS (SELECT id, array_cosine_similarity(emb, $q::FLOAT[{dim}]) AS s FROM docs WHERE tenant = $t
           ORDER BY s DESC, id LIMIT 50),
     f AS (SELECT id, 1.0 / (60 + row_number() OVER (ORDER BY s DESC, id)) AS r FROM t
           UNION ALL SELECT id, 1.0 / (60 + row_number() OVER (ORDER BY s DESC, id)) FROM v),
     top AS (SELECT id, sum(r) AS score FROM f GROUP BY id ORDER BY score DESC, id LIMIT {k})
SELECT top.id{content} FROM top{join} ORDER BY score DESC, top.id"""


def hand_setup(work: Path, dim: int):
    con = duckdb.connect()
    con.execute("SET threads = 1")
    for sql in HAND_SETUP:
        con.execute(sql.format(w=work, dim=dim))
    engines = {}
    for label, text in (("postings table joined with per-term df, one statement", _HAND_TEXT_JOIN),
                        ("postings as LIST columns per (tenant, term) behind a primary key, one statement",
                         _HAND_TEXT_LISTS)):
        for content in (False, True):
            sql = _HAND_FUSED.format(text=text, dim=dim, k=K, content=", docs.content" if content else "",
                                     join=" JOIN docs ON docs.id = top.id" if content else "")

            def run(q, sql=sql):
                return [r[0] for r in con.execute(sql, {"t": q["tenant"], "q": q["qvec"],
                                                        "terms": sorted(set(q["query"].split()))}).fetchall()]
            engines[f"{label}{', with content' if content else ''}"] = run
    return con, engines


# ---- where recall()'s time goes -------------------------------------------------------------------

class _Timed:
    """A cursor stand-in that runs and fetches each statement eagerly, timing it."""

    def __init__(self, cur, log):
        self._cur, self._log = cur, log

    def execute(self, sql, params=None):
        rows, w, c = clocked(lambda: (self._cur.execute(sql) if params is None
                                      else self._cur.execute(sql, params)).fetchall())
        self._log.append((" ".join(sql.split())[:90], w, c))
        return _Rows(rows)

    def __getattr__(self, name):
        return getattr(self._cur, name)


class _Rows:
    def __init__(self, rows):
        self.rows = rows

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def fetchall(self):
        return self.rows


def profile_recall(handles, recall, queries) -> dict:
    """p50 wall / CPU ms of each statement recall() issues (statements that ran on fewer than
    half of the queries are listed with their count), and of the whole call."""
    log: list = []
    saved = {}
    for h in handles.values():
        st = h._store
        saved[st] = st.read
        st.read = (lambda orig: (lambda: _Timed(orig(), log)))(st.read)
    try:
        for q in queries[:10]:
            recall(q)
        log.clear()       # the warm-up's statements are not counted
        _, wall, cpu = timed(recall, queries, warmup=0)
    finally:
        for st, read in saved.items():
            st.read = read
    out = {"total": {"wall_ms": round(_pct(wall, .5), 2), "cpu_ms": round(_pct(cpu, .5), 2), "n": len(wall)}}
    by: dict = {}
    for sql, w, c in log:
        by.setdefault(sql, []).append((w, c))
    for sql, v in sorted(by.items(), key=lambda kv: -len(kv[1])):
        out[sql] = {"wall_ms": round(_pct([x[0] for x in v], .5), 2), "cpu_ms": round(_pct([x[1] for x in v], .5), 2),
                    "n": len(v)}
    return out


# ---- the run -----------------------------------------------------------------------------------

def peers_best(engines: dict) -> dict:
    """Per peer, its fastest formulation by p50 among those with 0 id mismatches, ids only
    and with content (a formulation with mismatches is reported, never quoted)."""
    out = {}
    for peer in ("ladybug", "duckdb by hand"):
        for kind in ("ids", "with content"):
            rows = [(v["p50_ms"], k) for k, v in engines.items() if k.startswith(peer + ":")
                    and v.get("id_mismatches_vs_oracle") == 0 and ("with content" in k) == (kind == "with content")]
            if rows:
                p50, name = min(rows)
                # not "p50_ms": benchmark.charts would draw this copy as one more engine
                out[f"{peer}, {kind}"] = {"engine": name, "p50_p95_ms": [p50, engines[name]["p95_ms"]]}
    return out


def run(args) -> dict:
    import anatid
    from anatid import engines
    path = str(Path(args.work) / f"hybrid-{args.scale:g}-{args.dim}.anatid")
    Path(args.work).mkdir(parents=True, exist_ok=True)
    if args.rebuild or not os.path.exists(path):
        prepare(path, args.scale, args.dim, args.seed)
    elif args.refresh:
        refresh(path, args.dim, args.seed)
    queries = choose_queries(args.queries, args.dim, args.seed)
    result = {"benchmark": "hybrid_recall", "scale": args.scale, "dim": args.dim, "queries": len(queries),
              "k": K, "depth": DEPTH, "threads": 1, "python": platform.python_version(),
              "duckdb": duckdb.__version__, "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
              "journal_rows_tenant0": 500, "engines": {}, "notes": []}
    load_start = [round(x, 2) for x in os.getloadavg()]
    handles = {t: anatid.Anatid.open(path, tenant=t) for t in range(datagen.TENANTS)}
    db0 = handles[0]
    if not db0.native.loaded:
        raise SystemExit(f"native extension not loaded: {db0.native.reason}")
    db0.connection.execute("SET threads = 1")
    cur = db0.connection.cursor()
    result["memories"] = cur.execute("SELECT count(*) FROM anatid_memories").fetchone()[0]
    # vector_ceiling := NULL, as recall() below passes allow_slow=True (tenant 0 may hold more
    # than BRUTE_FORCE_CEILING's 100k visible rows: files refreshed before erase_writes() did)
    macro = ("SELECT memory_id FROM anatid.anatid_hybrid($query, tenant := $tenant, k := 10, qvec := $qvec, "
             "depth := 50, valid_at := $at, vector_ceiling := NULL)")
    at = db0._store.view().valid_at

    def native_sql(q):
        return [r[0] for r in cur.execute(macro, {"query": q["query"], "tenant": q["tenant"], "qvec": q["qvec"],
                                                  "at": at}).fetchall()]

    def recall(q):
        return [h.memory_id for h in handles[q["tenant"]].recall(q["query"], embedding=q["qvec"], k=K,
                                                                 allow_slow=True)]

    def oracle(q):
        saved, engines._native_hybrid = engines._native_hybrid, None
        try:
            return recall(q)
        finally:
            engines._native_hybrid = saved

    def text_only(q):
        return [r[0] for r in cur.execute(macro, {"query": q["query"], "tenant": 0, "qvec": None,
                                                  "at": at}).fetchall()]

    ref, ref_t, _ = timed(oracle, queries[: args.oracle_queries], warmup=5)
    result["engines"]["sql oracle (recall(), native off)"] = summary(ref_t)
    for name, fn in (("native anatid.anatid_hybrid (one SQL statement)", native_sql),
                     ("native via recall()", recall)):
        got, t, _ = timed(fn, queries)
        mism = sum(a != b for a, b in zip(got, ref))
        result["engines"][name] = {**summary(t), "id_mismatches_vs_oracle": mism,
                                   "checked": len(ref)}
    result["profile_lean_recall"] = profile_recall(handles, recall, queries)
    # the journal's cost: text-only search over tenant 0 with its 500 journalled writes vs after a rebuild
    def text_lean(q):    # recall() on tenant 0, text arm (and the graph seeds) only
        return [h.memory_id for h in db0.recall(q["query"], k=K)]

    _, with_journal, _ = timed(text_only, queries)
    _, with_journal_lean, _ = timed(text_lean, queries)
    from anatid.indexes.text import rebuild_fts_index
    if not args.keep_journal:
        rebuild_fts_index(db0)
        _, without, _ = timed(text_only, queries)
        _, without_lean, _ = timed(text_lean, queries)
        # interleaved A/B would need two files; the two runs are back to back instead
        result["journal_500_writes_text_search"] = {"with_journal": summary(with_journal),
                                                    "after_rebuild": summary(without),
                                                    "added_p50_ms": round(_pct(with_journal, .5) - _pct(without, .5), 3)}
        result["journal_500_writes_recall_text_only"] = {
            "with_journal": summary(with_journal_lean), "after_rebuild": summary(without_lean),
            "added_p50_ms": round(_pct(with_journal_lean, .5) - _pct(without_lean, .5), 3)}
    # The peers fuse the text and vector arms only (neither has recall()'s graph stage), so
    # they are checked against the oracle with the graph arm off, and compared with our
    # engines at the same weights (graph 0): the like-for-like rows the ratios use.
    g0 = {"vector": 1.0, "text": 1.0, "graph": 0.0}
    macro_g0 = macro.replace("depth := 50,", "depth := 50, wg := 0.0,")

    def recall_g0(q):
        return [h.memory_id for h in handles[q["tenant"]].recall(q["query"], embedding=q["qvec"], k=K,
                                                                 allow_slow=True, weights=g0)]

    def oracle_g0(q):
        saved, engines._native_hybrid = engines._native_hybrid, None
        try:
            return recall_g0(q)
        finally:
            engines._native_hybrid = saved

    def native_sql_g0(q):
        return [r[0] for r in cur.execute(macro_g0, {"query": q["query"], "tenant": q["tenant"], "qvec": q["qvec"],
                                                     "at": at}).fetchall()]
    ref_g0, t, _ = timed(oracle_g0, queries[: args.oracle_queries], warmup=5)
    result["engines"]["sql oracle, graph arm off (weights graph 0)"] = summary(t)
    for name, fn in (("native anatid.anatid_hybrid, graph arm off (wg := 0)", native_sql_g0),
                     ("native via recall(), graph arm off (weights graph 0), with content", recall_g0)):
        got, t, _ = timed(fn, queries)
        result["engines"][name] = {**summary(t), "id_mismatches_vs_oracle": sum(a != b for a, b in zip(got, ref_g0)),
                                   "checked": len(ref_g0)}
    work = Path(args.work) / f"lb-{args.scale:g}-{args.dim}"
    stats = export_peers(cur, work, args.dim) if not (args.no_ladybug and args.no_hand) else {}
    peers = {}
    if not args.no_hand:
        t0 = time.perf_counter()
        _hand, hand = hand_setup(work, args.dim)
        result["duckdb_by_hand_load_s"] = round(time.perf_counter() - t0, 1)
        peers.update({f"duckdb by hand: {k}": v for k, v in hand.items()})
    if not args.no_ladybug:
        try:
            t0 = time.perf_counter()
            lb_db, lb = ladybug_setup(cur, work, args.dim, stats)
            result["ladybug_load_s"] = round(time.perf_counter() - t0, 1)
            peers.update({f"ladybug: {k}, 1 thread": v for k, v in lb.items()})
        except ImportError as exc:
            result["notes"].append(f"ladybug not installed (pip install ladybug): skipped ({exc})")
    for name, fn in peers.items():
        try:
            got, t, _ = timed(fn, queries)
        except Exception as exc:  # report, never hide
            result["engines"][name] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
            continue
        mism = sum(a != b for a, b in zip(got, ref_g0))
        result["engines"][name] = {**summary(t), "id_mismatches_vs_oracle": mism, "checked": len(ref_g0),
                                   "oracle": "graph arm off"}
        print(f"{name:90s} p50 {_pct(t, .5):8.3f} ms  p95 {_pct(t, .95):8.3f}  mismatches {mism}", flush=True)
    result["peers_best"] = peers_best(result["engines"])
    recall_p50 = result["engines"]["native via recall(), graph arm off (weights graph 0), with content"]["p50_ms"]
    macro_p50 = result["engines"]["native anatid.anatid_hybrid, graph arm off (wg := 0)"]["p50_ms"]
    result["ratios_p50_vs_peers_best"] = {
        f"{ours} / {peer}": round(p / best["p50_p95_ms"][0], 4)
        for ours, p, kind in (("native via recall(), graph off, with content", recall_p50, "with content"),
                              ("native anatid.anatid_hybrid, graph off (ids)", macro_p50, "ids"))
        for peer, best in result["peers_best"].items() if peer.endswith(kind)}
    print("best peers:", json.dumps(result["peers_best"]), "\nratios:", json.dumps(result["ratios_p50_vs_peers_best"]),
          flush=True)
    nat = result["engines"]["native anatid.anatid_hybrid (one SQL statement)"]["p50_ms"]
    result["ratios_p50_vs_native"] = {k: round(v["p50_ms"] / nat, 2) for k, v in result["engines"].items()
                                      if "p50_ms" in v}
    result["load_average_start_end"] = [load_start, [round(x, 2) for x in os.getloadavg()]]
    for h in handles.values():
        h.close()
    return result


def run_mismatch(args) -> dict:
    """Ids and order of both native paths (recall()'s lean path and the macro) against the SQL
    oracle on args.queries queries; no timing, no LadybugDB."""
    import anatid
    from anatid import engines
    path = str(Path(args.work) / f"hybrid-{args.scale:g}-{args.dim}.anatid")
    if not os.path.exists(path):
        raise SystemExit(f"{path} is missing: run the benchmark at this scale once first")
    queries = choose_queries(args.queries, args.dim, args.seed)
    load_start = [round(x, 2) for x in os.getloadavg()]
    t_start = time.perf_counter()
    handles = {t: anatid.Anatid.open(path, tenant=t) for t in range(datagen.TENANTS)}
    db0 = handles[0]
    if not db0.native.loaded:
        raise SystemExit(f"native extension not loaded: {db0.native.reason}")
    db0.connection.execute("SET threads = 1")
    cur = db0.connection.cursor()
    at = db0._store.view().valid_at
    macro = ("SELECT memory_id FROM anatid.anatid_hybrid($query, tenant := $tenant, k := 10, qvec := $qvec, "
             "depth := 50, valid_at := $at, vector_ceiling := NULL)")   # as allow_slow=True

    def recall(q):
        return [h.memory_id for h in handles[q["tenant"]].recall(q["query"], embedding=q["qvec"], k=K,
                                                                 allow_slow=True)]
    out = {"lean": [], "macro": []}
    engines_seen = set()
    for i, q in enumerate(queries):
        saved, engines._native_hybrid = engines._native_hybrid, None
        try:
            ref = recall(q)
        finally:
            engines._native_hybrid = saved
        got = handles[q["tenant"]].recall(q["query"], embedding=q["qvec"], k=K, allow_slow=True)
        engines_seen.add(got.engine)
        if [h.memory_id for h in got] != ref:
            out["lean"].append(i)
        if [r[0] for r in cur.execute(macro, {"query": q["query"], "tenant": q["tenant"], "qvec": q["qvec"],
                                              "at": at}).fetchall()] != ref:
            out["macro"].append(i)
    for h in handles.values():
        h.close()
    return {"benchmark": "hybrid_recall_mismatches", "scale": args.scale, "dim": args.dim, "queries": len(queries),
            "k": K, "depth": DEPTH, "threads": 1, "seed": args.seed,
            "id_mismatches_vs_oracle": {"native via recall()": len(out["lean"]),
                                        "native anatid.anatid_hybrid (one SQL statement)": len(out["macro"])},
            "mismatching_queries": {k: v[:20] for k, v in out.items()},
            "engines_answering_recall": sorted(engines_seen),
            "elapsed_s": round(time.perf_counter() - t_start, 1),
            "load_average_start_end": [load_start, [round(x, 2) for x in os.getloadavg()]],
            "duckdb": duckdb.__version__,
            "note": "ids and order of every query compared with the SQL oracle (recall() with the native engine "
                    "off); the file as the last full run left it (500 journalled writes on tenant 0 unless "
                    "that run rebuilt tenant 0's text generation afterwards)"}


def run_384(args) -> dict:
    """Exact vector top-50 over one tenant of 100k x 384-d, vector arm only, one thread."""
    import anatid
    from anatid.indexes.vector import rebuild_vector_index
    path = str(Path(args.work) / "vec384.anatid")
    n, dim = 100_000, 384
    if args.rebuild or not os.path.exists(path):
        for s in ("", ".wal"):
            if os.path.exists(path + s):
                os.remove(path + s)
        rng = np.random.default_rng(args.seed)
        with anatid.Anatid.open(path, embedding_dim=dim) as db:
            items = []
            for i in range(n):
                items.append({"content": f"v{i}", "embedding": rng.normal(size=dim).astype(np.float32).tolist()})
                if len(items) == 10_000:
                    db.remember_many(items)
                    items = []
            rebuild_vector_index(db)
    with anatid.Anatid.open(path) as db:
        # The text generation as maintain_indexes() builds it for any file with memories (a
        # user's file has one): hits hydrate from it instead of a join against
        # anatid_memories. Files written before this was added get it here, once.
        if not db.connection.execute("SELECT count(*) FROM anatid_text_gen WHERE tenant_id = 0").fetchone()[0]:
            from anatid.indexes.text import rebuild_fts_index
            rebuild_fts_index(db)
    with anatid.Anatid.open(path) as db:
        db.connection.execute("SET threads = 1")
        rng = np.random.default_rng(args.seed + 7)
        qs = [{"qvec": rng.normal(size=dim).tolist()} for _ in range(100)]
        cur = db.connection.cursor()
        at = db._store.view().valid_at
        sql = "SELECT memory_id FROM anatid.anatid_hybrid('', qvec := $qvec, k := 50, depth := 50, valid_at := $at)"

        def macro(q):
            return [r[0] for r in cur.execute(sql, {"qvec": q["qvec"], "at": at}).fetchall()]

        def lean(q):   # recall(): the lean path, vector arm only, 50 hits with content
            return [h.memory_id for h in db.recall("", embedding=q["qvec"], k=50, allow_slow=True)]

        def oracle(q):  # recall() with the native engine off: the SQL oracle's exact scan
            from anatid import engines
            saved, engines._native_hybrid = engines._native_hybrid, None
            try:
                return lean(q)
            finally:
                engines._native_hybrid = saved

        load_start = [round(x, 2) for x in os.getloadavg()]
        for q in qs[:3]:
            assert macro(q) == lean(q)
        checked = qs[:args.oracle_checks]
        mismatches = sum(oracle(q) != lean(q) for q in checked)
        t_macro, t_lean = [], []
        for q in qs:     # interleaved A/B
            for fn, out in ((macro, t_macro), (lean, t_lean)):
                out.append(clocked(fn, q)[1])
        profile = profile_recall({0: db}, lean, qs)
        return {"benchmark": "vector_top50_100k_x_384", "rows": n, "dim": dim, "threads": 1,
                "native": summary(t_macro), "native_recall_lean": summary(t_lean),
                "id_mismatches_vs_oracle": mismatches, "oracle_checked": len(checked),
                "profile_lean_recall": profile,
                "text_generation": True,
                "note": "native: the anatid.anatid_hybrid macro statement; native_recall_lean: recall(embedding=, k=50) "
                        "(the aggregate, which also returns the 50 hits' content from the file's text generation; "
                        "rows i.i.d. N(0, 1)); the C++ scan alone: benchmark/vector_scan.cpp (`iid` for this data)",
                "load_average_start_end": [load_start, [round(x, 2) for x in os.getloadavg()]],
                "duckdb": duckdb.__version__}


def journal_profile(db, cur, queries) -> dict:
    """Where the journal's cost goes inside the text arm's rank statement (the statement
    recall() issues, without the seed check), A/B interleaved on the same file: as issued;
    with the journal rows fed without their postings strings (what scanning and comparing
    them costs; the answer differs); without the journal rows (the answer differs)."""
    from anatid import native_hybrid as nh
    full = nh._rank_sql(True, False)
    text_row = "SELECT 3, memory_id, seq, vf, vt, doc_len, NULL, postings, NULL FROM anatid_text_journal"
    assert text_row in full
    variants = {"as_issued": full,
                "journal_without_postings": full.replace(text_row, text_row.replace("postings, NULL", "NULL, NULL")),
                "without_journal_rows": full.replace(text_row + " WHERE tenant_id = $tenant",
                                                     text_row + " WHERE tenant_id = $tenant AND false")}
    at_us = (db._store.view().valid_at - nh._EPOCH) // timedelta(microseconds=1)
    samples: dict = {k: [] for k in variants}
    for q in queries:
        terms = sorted(set(nh.ascii_tokens(q["query"]) or []))
        request = nh.encode_request(at_us=at_us, depth=DEPTH, k=K, wv=1.0, wt=1.0, wg=1.0, vector_ceiling=None,
                                    terms=terms, qvec=None, qnorm=None, gids=[], ghops=[])
        for name, sql in variants.items():
            samples[name].append(clocked(lambda: cur.execute(sql, {"tenant": 0, "request": request}).fetchone())[1])
    return {k: round(_pct(v, .5), 3) for k, v in samples.items()}


def run_journal_cost(args) -> dict:
    """What 500 journalled text writes add to a text search over a 100k-document tenant:
    journal 500 writes on tenant 0, time text-only recall() (the lean path) on it, fold the
    journal with rebuild_fts_index(), time again; wall and CPU per call. The 500 are erased
    afterwards (journalled_writes), so the file keeps its memory count."""
    import anatid
    from anatid.indexes.text import journal_rows, rebuild_fts_index
    path = str(Path(args.work) / f"hybrid-{args.scale:g}-{args.dim}.anatid")
    queries = choose_queries(args.queries, args.dim, args.seed)
    load_start = [round(x, 2) for x in os.getloadavg()]
    with journalled_writes(path, args.dim, np.random.default_rng(args.seed + 5)), \
            anatid.Anatid.open(path, tenant=0) as db0:
        db0.connection.execute("SET threads = 1")
        cur = db0.connection.cursor()

        def measure():
            ids, wall, cpu = timed(lambda q: [h.memory_id for h in db0.recall(q["query"], k=K)], queries)
            return summary(wall), summary(cpu), ids
        rows = journal_rows(cur, 0)
        w1, c1, ids1 = measure()
        profile = journal_profile(db0, cur, queries)
        rebuild_fts_index(db0)
        w2, c2, ids2 = measure()
    return {"benchmark": "text_search_journal_cost", "scale": args.scale, "tenant": 0,
            "text_journal_rows": rows, "queries": len(queries), "threads": 1,
            "with_journal": {"wall": w1, "cpu": c1}, "after_rebuild": {"wall": w2, "cpu": c2},
            "added_p50_ms": {"wall": round(w1["p50_ms"] - w2["p50_ms"], 3), "cpu": round(c1["p50_ms"] - c2["p50_ms"], 3)},
            "same_ids_before_and_after": ids1 == ids2,
            "journal_profile_ms_p50": profile,
            "load_average_start_end": [load_start, [round(x, 2) for x in os.getloadavg()]],
            "note": "recall(query, k=10) on tenant 0, text arm and the graph seeds only; the two runs are back to back "
                    "(a file cannot be both), so compare CPU under load",
            "duckdb": duckdb.__version__}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--oracle-queries", type=int, default=None, help="default: all")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", default="/tmp/anatid-bench")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--no-ladybug", action="store_true")
    ap.add_argument("--no-hand", action="store_true", help="skip the plain-DuckDB-by-hand peer")
    ap.add_argument("--keep-journal", action="store_true")
    ap.add_argument("--refresh", action="store_true",
                    help="reuse the file but rebuild its generations, and replace the 500 writes the benchmark "
                         "journalled last on tenant 0 with 500 new ones (the memory count stays as it was)")
    ap.add_argument("--dim384", action="store_true")
    ap.add_argument("--mismatch-only", action="store_true",
                    help="only compare both native paths' ids with the SQL oracle on --queries queries "
                         "(no timing, no LadybugDB); writes hybrid_mismatch-<scale>.json")
    ap.add_argument("--oracle-checks", type=int, default=20,
                    help="--dim384: queries whose recall() ids are compared with the SQL oracle's")
    ap.add_argument("--journal-cost", action="store_true",
                    help="journal 500 writes on tenant 0, then text search before and after rebuild_fts_index(); "
                         "the 500 are erased afterwards")
    args = ap.parse_args()
    args.oracle_queries = args.oracle_queries or args.queries
    RESULTS.mkdir(exist_ok=True)
    if args.mismatch_only:
        res = run_mismatch(args)
        out = RESULTS / f"hybrid_mismatch-{args.scale:g}.json"
    elif args.dim384:
        res = run_384(args)
        out = RESULTS / "hybrid_vector384.json"
    elif args.journal_cost:
        res = run_journal_cost(args)
        out = RESULTS / f"text_journal_cost-{args.scale:g}.json"
    else:
        res = run(args)
        out = RESULTS / f"hybrid_recall-{args.scale:g}.json"
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
