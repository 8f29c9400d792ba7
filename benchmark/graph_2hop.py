"""Two-hop recall, side by side in one process: native, our SQL oracle, LadybugDB.

    python -m benchmark.graph_2hop --scale 0.1            # 100k memories (CI-sized: --queries 200)
    python -m benchmark.graph_2hop --scale 1              # 1M memories (make bench-graph)

Self-checking: every engine's ids (and order) are compared with the SQL oracle's for
every query before any time is reported; a mismatch count is part of the result.
Single thread everywhere (DuckDB `SET threads = 1`, LadybugDB num_threads=1 unless a
setting says otherwise), seeded seeds, warm-up, p50/p95/p99 in milliseconds.
Writes benchmark/results/graph_2hop-<scale>.json; docs/benchmarks.md cites it.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import duckdb

from . import datagen

RESULTS = Path(__file__).parent / "results"
HOPS, LIMIT = 2, 50


def _pct(samples, q):
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def _summary(samples):
    return {"p50_ms": round(_pct(samples, 0.50), 4), "p95_ms": round(_pct(samples, 0.95), 4),
            "p99_ms": round(_pct(samples, 0.99), 4), "mean_ms": round(statistics.fmean(samples), 4),
            "n": len(samples)}


def timed(fn, queries, warmup=50, cpu=None):
    """Wall-clock ms per query; `cpu` (a list) also gets this process's CPU ms per query,
    which a busy machine inflates far less than wall time (single-threaded engines only)."""
    for q in queries[:warmup]:
        fn(q)
    out, samples = [], []
    for q in queries:
        c0, t0 = time.process_time(), time.perf_counter()
        ids = fn(q)
        samples.append((time.perf_counter() - t0) * 1000.0)
        if cpu is not None:
            cpu.append((time.process_time() - c0) * 1000.0)
        out.append(ids)
    return out, samples


# ---- our engines -----------------------------------------------------------------------

def anatid_engines(db, view):
    from anatid.native_graph import recall_ids
    from anatid.verbs.graph_sql import graph_recall_sql
    cur = db.connection
    oracle_sql = f"SELECT memory_id, hop FROM ({graph_recall_sql(view)})"
    macro_ok = cur.execute("SELECT count(*) FROM anatid.anatid_functions() WHERE name = 'anatid_recall_2hop'"
                           ).fetchone()[0] == 1

    def native_lean(q):
        return [m for m, _ in recall_ids(cur, q["tenant"], [q["key"]], HOPS, LIMIT, None, view.valid_at)]

    def native_macro(q):
        rows = cur.execute("SELECT memory_id FROM anatid.anatid_recall_2hop($t, [$k], valid_at := $v)",
                           {"t": q["tenant"], "k": q["key"], "v": view.valid_at}).fetchall()
        return [r[0] for r in rows]

    def sql_oracle(q):
        rows = cur.execute(oracle_sql, {**view.params(q["tenant"]), "seed_keys": [q["key"]], "hops": HOPS,
                                        "limit": LIMIT}).fetchall()
        return [r[0] for r in rows]

    engines = {"native (anatid_graph_recall, ids)": native_lean}
    if macro_ok:
        engines["native (anatid.anatid_recall_2hop macro)"] = native_macro
    engines["sql oracle (ids)"] = sql_oracle
    return engines


def verb_engine(path):
    """db.recall_2hop(): the whole Python verb, content included (one handle per tenant)."""
    import anatid
    handles = {}

    def run(q):
        db = handles.get(q["tenant"])
        if db is None:
            db = handles[q["tenant"]] = anatid.Anatid.open(path, tenant=q["tenant"])
            db.connection.execute("SET threads = 1")
        hits = db.recall_2hop(q["name"], limit=LIMIT)
        assert hits.engine == "native", hits.notes
        return [h.memory_id for h in hits]
    return run, handles


# ---- LadybugDB -----------------------------------------------------------------------------

# Cypher formulations of the same contract, every one reported (ids checked against the
# oracle like ours). LadybugDB 0.22 has no CALL subqueries and SHORTEST needs a lower bound
# of 1, hence the forms merged in Python: hop 0 first, then the walk, skipping memories
# already found. The fastest is three fixed-length statements (hop 0, 1, 2), each asking
# for LIMIT + the ids found so far (a hop-2 walk can come back to the seed or a hop-1
# entity: those memories are already found and skipped), stopping once LIMIT are found.
_HOP0 = ("MATCH (s:Entity {id: $id})<-[:About]-(m:Memory) WHERE m.visible "
         "RETURN m.id AS id%s ORDER BY id DESC LIMIT $lim")
_WALK = ("MATCH (s:Entity {id: $id})-[r:Relates*%s 1..2]-(e:Entity)<-[:About]-(m:Memory) WHERE m.visible "
         "RETURN m.id AS id, min(length(r)) AS h ORDER BY h, id DESC LIMIT $lim")
_HOP1 = ("MATCH (s:Entity {id: $id})-[:Relates]-(e:Entity)<-[:About]-(m:Memory) WHERE m.visible "
         "RETURN DISTINCT m.id AS id%s ORDER BY id DESC LIMIT $lim")
_HOP2 = ("MATCH (s:Entity {id: $id})-[:Relates]-(:Entity)-[:Relates]-(e:Entity)<-[:About]-(m:Memory) "
         "WHERE m.visible RETURN DISTINCT m.id AS id%s ORDER BY id DESC LIMIT $lim")
_CONTENT = ", m.content AS content"
LADYBUG_SINGLE = {
    "var-length 0..2, min(length)":
        "MATCH (s:Entity {id: $id})-[r:Relates*0..2]-(e:Entity)<-[:About]-(m:Memory) WHERE m.visible "
        "RETURN m.id AS id, min(length(r)) AS h ORDER BY h, id DESC LIMIT $lim",
}
LADYBUG_TWO_STEP = {
    "hop 0 + SHORTEST 1..2": (_HOP0 % "", _WALK % " SHORTEST"),
    "hop 0 + var-length 1..2": (_HOP0 % "", _WALK % ""),
}
# (statements, prepared?, with content?)
LADYBUG_PER_HOP = {
    "three fixed-length statements (hop 0, 1, 2), merged": ((_HOP0 % "", _HOP1 % "", _HOP2 % ""), False),
    "three fixed-length statements, prepared": ((_HOP0 % "", _HOP1 % "", _HOP2 % ""), True),
    "three fixed-length statements, prepared, with content":
        ((_HOP0 % _CONTENT, _HOP1 % _CONTENT, _HOP2 % _CONTENT), True),
}
# One statement: the three fixed-length hops as UNION ALL branches, each with its own order
# and limit (LIMIT for hop 0; 2 x LIMIT for hops 1 and 2, enough since a later hop is only
# needed while fewer than LIMIT are found), merged in the client the same way.
_UNION = " UNION ALL ".join(f"{stmt.replace('$lim', lim).replace(' AS id', ' AS id, %d AS h' % h, 1)}"
                            for h, (stmt, lim) in enumerate(((_HOP0, "$lim"), (_HOP1, "$lim2"), (_HOP2, "$lim2"))))
LADYBUG_UNION = {"one statement, UNION ALL of the three fixed-length hops, prepared": _UNION % ("", "", "")}


def export_graph(con, work: Path) -> None:
    """The current graph as parquet, for the peers: entities, visible memories (with content),
    about edges of visible memories, current relates edges."""
    work.mkdir(parents=True, exist_ok=True)
    exports = {
        "entity": "SELECT entity_id AS id, tenant_id AS tenant, name_key AS key FROM anatid_entities",
        "memory": "SELECT memory_id AS id, tenant_id AS tenant, (tx_to IS NULL AND valid_to IS NULL) AS visible, "
                  "content FROM anatid_memories",
        "about": "SELECT src_id AS \"from\", dst_id AS \"to\" FROM anatid_edges WHERE kind = 'about'",
        "relates": "SELECT src_id AS \"from\", dst_id AS \"to\" FROM anatid_edges WHERE kind = 'relates' "
                   "AND tx_to IS NULL AND valid_to IS NULL",
    }
    for name, sql in exports.items():
        con.execute(f"COPY ({sql}) TO '{work / name}.parquet' (FORMAT parquet)")


def ladybug_load(con, work: Path, compression: bool):
    import ladybug as lb
    export_graph(con, work)
    dbdir = work / f"lb-{'c' if compression else 'nc'}"
    if dbdir.exists():
        import shutil
        shutil.rmtree(dbdir) if dbdir.is_dir() else dbdir.unlink()
    t0 = time.perf_counter()
    db = lb.Database(str(dbdir), compression=compression)
    c = lb.Connection(db)
    c.execute("CREATE NODE TABLE Entity(id INT64, tenant INT64, key STRING, PRIMARY KEY(id))")
    c.execute("CREATE NODE TABLE Memory(id INT64, tenant INT64, visible BOOLEAN, content STRING, PRIMARY KEY(id))")
    c.execute("CREATE REL TABLE About(FROM Memory TO Entity)")
    c.execute("CREATE REL TABLE Relates(FROM Entity TO Entity)")
    c.execute(f"COPY Entity FROM '{work / 'entity.parquet'}'")
    c.execute(f"COPY Memory FROM '{work / 'memory.parquet'}'")
    c.execute(f"COPY About FROM '{work / 'about.parquet'}'")
    c.execute(f"COPY Relates FROM '{work / 'relates.parquet'}'")
    return db, time.perf_counter() - t0


def merge_hops(run_hop, n_hops):
    """Hop by hop, each asked for LIMIT + found ids, skipping ids already found."""
    found: list = []
    seen: set = set()
    for h in range(n_hops):
        for row in run_hop(h, LIMIT + len(found)):
            if row[0] not in seen:
                seen.add(row[0])
                found.append(row)
                if len(found) == LIMIT:
                    return found
    return found


def ladybug_engines(db, threads_options):
    import ladybug as lb

    def ids_of(res):
        out = []
        while res.has_next():
            out.append(int(res.get_next()[0]))
        return out

    def rows_of(res):
        out = []
        while res.has_next():
            out.append(res.get_next())
        return out

    engines = {}
    for threads in threads_options:
        conn = lb.Connection(db, num_threads=threads)
        for label, query in LADYBUG_SINGLE.items():
            def single(q, conn=conn, query=query):
                return ids_of(conn.execute(query, {"id": q["entity_id"], "lim": LIMIT}))
            engines[f"ladybug: {label}, {threads} thread(s)"] = single
        for label, (hop0, walk) in LADYBUG_TWO_STEP.items():
            def two_step(q, conn=conn, hop0=hop0, walk=walk):
                first = ids_of(conn.execute(hop0, {"id": q["entity_id"], "lim": LIMIT}))
                if len(first) == LIMIT:
                    return first
                seen = set(first)
                rest = ids_of(conn.execute(walk, {"id": q["entity_id"], "lim": LIMIT + len(first)}))
                return (first + [m for m in rest if m not in seen])[:LIMIT]
            engines[f"ladybug: {label}, {threads} thread(s)"] = two_step
        for label, (stmts, prepared) in LADYBUG_PER_HOP.items():
            stmts = [conn.prepare(s) for s in stmts] if prepared else list(stmts)

            def per_hop(q, conn=conn, stmts=stmts):
                rows = merge_hops(lambda h, lim: rows_of(conn.execute(stmts[h], {"id": q["entity_id"], "lim": lim})),
                                  len(stmts))
                return [int(r[0]) for r in rows]
            engines[f"ladybug: {label}, {threads} thread(s)"] = per_hop
        for label, query in LADYBUG_UNION.items():
            stmt = conn.prepare(query)

            def union(q, conn=conn, stmt=stmt):
                rows = rows_of(conn.execute(stmt, {"id": q["entity_id"], "lim": LIMIT, "lim2": 2 * LIMIT}))
                by_hop = [[r for r in rows if r[1] == h] for h in range(HOPS + 1)]
                return [int(r[0]) for r in merge_hops(lambda h, lim: by_hop[h], HOPS + 1)]
            engines[f"ladybug: {label}, {threads} thread(s)"] = union
    return engines


# ---- DuckDB by hand ------------------------------------------------------------------------

# What a user would write in plain DuckDB over the same current graph, without anatid: an
# in-memory DuckDB (one thread) holding the exported tables, seeded by entity id like
# LadybugDB. "adjacency lists": one row per entity with its neighbours and its visible
# memories (descending) denormalised into LIST columns, behind a primary key.
HAND_SETUP = [
    "CREATE TABLE mem AS SELECT id, content FROM read_parquet('{w}/memory.parquet') WHERE visible ORDER BY id",
    "CREATE TABLE about AS SELECT a.\"to\" AS entity_id, a.\"from\" AS memory_id FROM read_parquet('{w}/about.parquet') a "
    "JOIN read_parquet('{w}/memory.parquet') m ON m.id = a.\"from\" WHERE m.visible ORDER BY entity_id, memory_id DESC",
    "CREATE TABLE rel AS SELECT DISTINCT * FROM (SELECT \"from\" AS a, \"to\" AS b FROM read_parquet('{w}/relates.parquet') "
    "UNION ALL SELECT \"to\", \"from\" FROM read_parquet('{w}/relates.parquet')) ORDER BY a, b",
    "CREATE TABLE adj (entity_id BIGINT PRIMARY KEY, nbrs BIGINT[], mems BIGINT[])",
    "INSERT INTO adj SELECT e.id, (SELECT list(b ORDER BY b) FROM rel WHERE a = e.id), "
    "(SELECT list(memory_id ORDER BY memory_id DESC) FROM about WHERE entity_id = e.id) "
    "FROM read_parquet('{w}/entity.parquet') e",
]
_HAND_JOIN = """
WITH h1 AS (SELECT DISTINCT b AS e FROM rel WHERE a = $id),
     h2 AS (SELECT DISTINCT r.b AS e FROM rel r JOIN h1 ON r.a = h1.e),
     ents AS (SELECT e, min(h) AS h FROM (SELECT $id AS e, 0 AS h UNION ALL SELECT e, 1 FROM h1
                                          UNION ALL SELECT e, 2 FROM h2) GROUP BY e),
     hits AS (SELECT a.memory_id AS id, min(ents.h) AS hop FROM about a JOIN ents ON a.entity_id = ents.e
              GROUP BY 1 ORDER BY hop, id DESC LIMIT $lim)
SELECT hits.id{content} FROM hits{join} ORDER BY hop, hits.id DESC"""
_HAND_LISTS = """
WITH s AS (SELECT nbrs, mems FROM adj WHERE entity_id = $id),
     e1 AS (SELECT a.nbrs, a.mems FROM adj a WHERE a.entity_id IN (SELECT unnest(nbrs) FROM s)),
     e2 AS (SELECT a.mems FROM adj a WHERE a.entity_id IN (SELECT unnest(nbrs) FROM e1)),
     cand AS (SELECT unnest(mems) AS id, 0 AS h FROM s UNION ALL SELECT unnest(mems), 1 FROM e1
              UNION ALL SELECT unnest(mems), 2 FROM e2),
     hits AS (SELECT id, min(h) AS hop FROM cand GROUP BY id ORDER BY hop, id DESC LIMIT $lim)
SELECT hits.id{content} FROM hits{join} ORDER BY hop, hits.id DESC"""


def hand_load(work: Path):
    con = duckdb.connect()
    con.execute("SET threads = 1")
    t0 = time.perf_counter()
    for sql in HAND_SETUP:
        con.execute(sql.format(w=work))
    return con, time.perf_counter() - t0


def hand_engines(con):
    join = " JOIN mem ON mem.id = hits.id"
    engines = {}
    for label, sql in (("join over edge tables, one statement", _HAND_JOIN),
                       ("adjacency lists, one statement", _HAND_LISTS)):
        for content in (False, True):
            stmt = sql.format(content=", mem.content" if content else "", join=join if content else "")

            def one(q, stmt=stmt):
                return [r[0] for r in con.execute(stmt, {"id": q["entity_id"], "lim": LIMIT}).fetchall()]
            engines[f"duckdb by hand: {label}{', with content' if content else ''}"] = one

    # the client walks the adjacency lists hop by hop: one primary-key lookup per hop (the
    # frontier's rows), memories merged in the client, content fetched for the LIMIT found
    def walk(q, content=False):
        row = con.execute("SELECT nbrs, mems FROM adj WHERE entity_id = $id", {"id": q["entity_id"]}).fetchone()
        if row is None:
            return []
        nbrs, mems = row[0] or [], row[1] or []
        found = list(mems[:LIMIT])
        seen_m, seen_e = set(found), {q["entity_id"]}
        frontier = sorted(set(nbrs) - seen_e)
        for _hop in range(1, HOPS + 1):
            if len(found) >= LIMIT or not frontier:
                break
            seen_e.update(frontier)
            rows = con.execute("SELECT nbrs, mems FROM adj WHERE entity_id IN (SELECT unnest($ids))",
                               {"ids": frontier}).fetchall()
            new = sorted({m for _, ms in rows for m in (ms or [])} - seen_m, reverse=True)
            found.extend(new[:LIMIT - len(found)])
            seen_m.update(new)
            frontier = sorted({e for ns, _ in rows for e in (ns or [])} - seen_e)
        if content and found:
            got = dict(con.execute("SELECT id, content FROM mem WHERE id IN (SELECT unnest($ids))", {"ids": found}
                                   ).fetchall())
            return [m for m in found if m in got]
        return found
    engines["duckdb by hand: adjacency lists, client walk (a lookup per hop)"] = walk
    engines["duckdb by hand: adjacency lists, client walk, with content"] = lambda q: walk(q, True)
    return engines


# ---- the comparison -------------------------------------------------------------------------

IDS, VERB = "native (anatid_graph_recall, ids)", "anatid verb recall_2hop (native, with content)"
MACRO = "native (anatid.anatid_recall_2hop macro)"


def peers_best(engines: dict) -> dict:
    """Per peer, its fastest formulation by p50 among those with 0 mismatches, ids only and
    with content (a formulation with mismatches is reported, never quoted)."""
    out = {}
    for peer in ("ladybug", "duckdb by hand"):
        for kind in ("ids", "with content"):
            rows = [(v["p50_ms"], k) for k, v in engines.items() if k.startswith(peer + ":")
                    and v.get("mismatches") == 0 and ("with content" in k) == (kind == "with content")]
            if rows:
                p50, name = min(rows)
                # not "p50_ms": benchmark.charts would draw this copy as one more engine
                out[f"{peer}, {kind}"] = {"engine": name, "p50_p95_ms": [p50, engines[name]["p95_ms"]]}
    return out


def ratios(engines: dict, best: dict) -> dict:
    """Ours over each peer's best, p50: ids against ids, the verb (content) against content."""
    out = {}
    for ours, kind in ((IDS, "ids"), (MACRO, "ids"), (VERB, "with content")):
        for peer in ("ladybug", "duckdb by hand"):
            b = best.get(f"{peer}, {kind}")
            if ours in engines and "p50_ms" in engines[ours] and b:
                out[f"{ours} / {peer} best ({kind})"] = round(engines[ours]["p50_ms"] / b["p50_p95_ms"][0], 4)
    return out


# ---- the run ------------------------------------------------------------------------------

def choose_queries(db, n, seed):
    rows = db.connection.execute("""
        SELECT e.tenant_id, e.entity_id, e.name, e.name_key FROM anatid_entities e
        WHERE EXISTS (SELECT 1 FROM anatid_edges a WHERE a.kind = 'about' AND a.dst_id = e.entity_id)
        ORDER BY e.entity_id""").fetchall()
    rng = random.Random(seed)
    picks = [rows[rng.randrange(len(rows))] for _ in range(n)]
    return [{"tenant": int(t), "entity_id": int(e), "name": name, "key": key} for t, e, name, key in picks]


# ---- journal overhead -------------------------------------------------------------------

# The lean statement over the journal plus one harmless extra row (op 4 closes a memory
# id that does not exist). A different row per read: first, the journal bytes are new to
# the cache (a miss: parse and fold everything); last, they extend the cached journal
# (parse one row, fold). The same row every read: a cache hit with the same statement
# shape, the baseline those two are compared with.
_EXTRA_FIRST = ("SELECT anatid_graph_recall(entry, $request) FROM (SELECT entry FROM ("
                "SELECT $extra AS entry, 0 AS k, 0 AS seq UNION ALL "
                "SELECT entry, 1, seq FROM anatid_graph_journal WHERE tenant_id = $tenant) ORDER BY k, seq)")
_EXTRA_LAST = _EXTRA_FIRST.replace("ORDER BY k, seq", "ORDER BY k DESC, seq")


def _journal_cache(cur):
    return json.loads(cur.execute("SELECT anatid_graph_cache_stats()").fetchone()[0])["journal"]


def journal_overhead(db, path, queries, rows=1000):
    """~1,000 unabsorbed journal rows on tenant 0, measured A/B interleaved in one process:
    the same tenant-0 queries against a copy of the file taken before the write (no
    journal) and against the file after it, alternating per query. Also the two paths
    a read takes when the journal changed since the last read (a miss, an extension)."""
    import shutil
    import anatid
    from anatid.native_graph import encode_request, recall_ids
    from anatid.verbs.graph_sql import graph_recall_sql
    cur = db.connection
    cur.execute("CHECKPOINT")
    before_path = path + ".before"
    shutil.copyfile(path, before_path)
    before_db = anatid.Anatid.open(before_path)
    before_db.connection.execute("SET threads = 1")
    rows_before = cur.execute("SELECT count(*) FROM anatid_graph_journal WHERE tenant_id = 0").fetchone()[0]
    items = [{"content": f"journal {i}", "entities": [f"entity {(i * 7) % 97}", f"entity {(i * 13) % 89}",
                                                      f"entity {(i * 3) % 83}"]} for i in range(rows // 3)]
    db.remember_many(items)
    journal_rows = cur.execute("SELECT count(*) FROM anatid_graph_journal WHERE tenant_id = 0").fetchone()[0] - rows_before
    view = db._store.view(None)
    oracle_sql = f"SELECT memory_id, hop FROM ({graph_recall_sql(view)})"
    t0q = [q for q in queries if q["tenant"] == 0] or queries[:50]
    t0q = t0q * max(1, 300 // len(t0q))

    def lean(c):
        return lambda q: [m for m, _ in recall_ids(c, 0, [q["key"]], HOPS, LIMIT, None, view.valid_at)]

    def extra(sql, same_row=False):
        counter = [0]
        seq = 0 if sql is _EXTRA_FIRST else 2 ** 62     # in seq order where it stands, like a real write

        def run(q):
            counter[0] += 0 if same_row else 1
            row = cur.execute(sql, {"request": encode_request([q["key"]], HOPS, LIMIT, None, view.valid_at),
                                    "tenant": 0, "extra": f"4|{seq}|-{counter[0]}||||||"}).fetchone()
            return [h["memory_id"] for h in row[0]]
        return run

    modes = {"before": lean(before_db.connection), "after": lean(cur),
             "after + 1 row, cached": extra(_EXTRA_LAST, same_row=True),
             "after + 1 row, extending the cached journal": extra(_EXTRA_LAST),
             "after + 1 row, journal new to the cache": extra(_EXTRA_FIRST)}
    for q in t0q[:30]:                                   # warm-up (generations resident, journals cached)
        for fn in modes.values():
            fn(q)
    samples = {m: [] for m in modes}
    got = {m: [] for m in modes}
    paths = {m: {"hits": 0, "refolds": 0, "extends": 0, "misses": 0} for m in modes}
    for i, q in enumerate(t0q):
        order = list(modes) if i % 2 == 0 else list(reversed(modes))
        for m in order:
            s0 = _journal_cache(cur)
            t = time.perf_counter()
            ids = modes[m](q)
            samples[m].append((time.perf_counter() - t) * 1000.0)
            s1 = _journal_cache(cur)
            for k in paths[m]:
                paths[m][k] += s1[k] - s0[k]
            got[m].append(ids)
    want = [[r[0] for r in cur.execute(oracle_sql, {**view.params(0), "seed_keys": [q["key"]], "hops": HOPS,
                                                    "limit": LIMIT}).fetchall()] for q in t0q]
    before_db.close()
    os.remove(before_path)
    p50 = {m: _pct(v, .5) for m, v in samples.items()}
    after_modes = [m for m in modes if m != "before"]
    return {"rows": int(journal_rows), "queries": len(t0q), "method": "A/B interleaved per query, one process",
            "p50_ms": {m: round(v, 4) for m, v in p50.items()},
            "p95_ms": {m: round(_pct(v, .95), 4) for m, v in samples.items()},
            "added_p50_ms": {m: round(p50[m] - p50["before"], 4) for m in after_modes},
            "added_median_paired_ms": {m: round(statistics.median(a - b for a, b in zip(samples[m], samples["before"])), 4)
                                       for m in after_modes},
            # what a read pays when the journal changed since the last read: the same
            # statement shape with a cache hit is the baseline
            "changed_journal_added_p50_ms": {m: round(p50[m] - p50["after + 1 row, cached"], 4)
                                             for m in after_modes if m.startswith("after + 1 row, ") and
                                             m != "after + 1 row, cached"},
            "cache_paths": paths,
            "mismatches": {m: sum(1 for a, b in zip(got[m], want) if a != b) for m in after_modes}}


def build_only(args) -> dict:
    import anatid
    path = args.db or f"/tmp/anatid-bench-graph-{args.scale:g}.anatid"
    datagen.load(datagen.ensure_parquet(args.scale, args.data_seed), path)
    with anatid.Anatid.open(path) as db:
        db.connection.execute("SET threads = 1")
        report = db.maintain_indexes(all_tenants=True, indexes=("graph",))["graph"]
    return {"scale": args.scale, "build_seconds": report.get("build_seconds"),
            "seconds_with_validation": report["seconds"], "tenants": len(report["tenants"]),
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


def run(args) -> dict:
    import anatid
    result = {"benchmark": "graph_2hop", "scale": args.scale, "queries": args.queries, "hops": HOPS,
              "limit": LIMIT, "seed": args.seed, "python": platform.python_version(),
              "duckdb": duckdb.__version__, "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
              "engines": {}, "notes": [], "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    parquet = datagen.ensure_parquet(args.scale, args.data_seed)
    path = args.db or f"/tmp/anatid-bench-graph-{args.scale:g}.anatid"
    result["load_s"] = round(datagen.load(parquet, path), 2)
    db = anatid.Anatid.open(path)
    if not db.native.loaded:
        sys.exit(f"native extension not loaded: {db.native.reason}")
    db.connection.execute("SET threads = 1")
    report = db.maintain_indexes(all_tenants=True, indexes=("graph",))["graph"]
    result["build"] = {"seconds_all_tenants": report.get("build_seconds", report["seconds"]),
                       "seconds_with_validation": report["seconds"],
                       "bytes": sum(t["bytes"] for t in report["tenants"]),
                       "tenants": len(report["tenants"])}
    # the text index too, as maintain_indexes() builds it on a user's file: the verb takes its
    # hits' content from the text generation (not measured here: the graph build is)
    t0 = time.perf_counter()
    db.maintain_indexes(all_tenants=True, indexes=("text",))
    result["build"]["text_index_seconds"] = round(time.perf_counter() - t0, 2)
    view = db._store.view(None)
    queries = choose_queries(db, args.queries, args.seed)
    engines = anatid_engines(db, view)
    verb, handles = verb_engine(path)
    engines["anatid verb recall_2hop (native, with content)"] = verb
    exported = False
    if not args.no_ladybug:
        try:
            import ladybug  # noqa: F401
            lbdb, lb_load = ladybug_load(db.connection, Path(f"/tmp/anatid-bench-lb-{args.scale:g}"), args.lb_compression)
            exported = True
            result["ladybug"] = {"version": getattr(ladybug, "__version__", "?"), "load_s": round(lb_load, 2),
                                 "compression": args.lb_compression}
            engines.update(ladybug_engines(lbdb, args.lb_threads))
        except ImportError:
            result["notes"].append("ladybug not installed (pip install ladybug): skipped")
    if not args.no_hand:
        work = Path(f"/tmp/anatid-bench-lb-{args.scale:g}")
        if not exported:
            export_graph(db.connection, work)
        hand, hand_s = hand_load(work)
        result["duckdb_by_hand"] = {"load_s": round(hand_s, 2), "threads": 1,
                                    "tables": "mem(id, content), about(entity_id, memory_id), rel(a, b) both ways, "
                                              "adj(entity_id PRIMARY KEY, nbrs BIGINT[], mems BIGINT[])"}
        engines.update(hand_engines(hand))

    oracle_cpu: list = []
    want, base_samples = timed(engines["sql oracle (ids)"], queries, cpu=oracle_cpu)
    for name, fn in engines.items():
        if isinstance(fn, Exception):
            result["engines"][name] = {"error": str(fn).splitlines()[0]}
            continue
        try:
            cpu = oracle_cpu if name == "sql oracle (ids)" else []
            got, samples = (want, base_samples) if name == "sql oracle (ids)" else timed(fn, queries, cpu=cpu)
        except Exception as exc:
            result["engines"][name] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
            continue
        bad = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
        mismatches = len(bad)
        result["engines"][name] = {**_summary(samples), "mismatches": mismatches}
        if bad:  # a few examples, to tell an engine's bug from ours
            result["engines"][name]["mismatch_examples"] = [
                {"query": queries[i], "missing": [m for m in want[i] if m not in got[i]][:5],
                 "extra": [m for m in got[i] if m not in want[i]][:5], "same_set": set(got[i]) == set(want[i])}
                for i in bad[:3]]
        if cpu:
            result["engines"][name]["cpu_p50_ms"] = round(_pct(cpu, 0.5), 4)
        print(f"{name:55s} p50 {_pct(samples, .5):8.3f} ms  p95 {_pct(samples, .95):8.3f}  "
              f"p99 {_pct(samples, .99):8.3f}  mismatches {mismatches}", flush=True)

    result["peers_best"] = peers_best(result["engines"])
    result["ratios_p50"] = ratios(result["engines"], result["peers_best"])
    print("best peers:", json.dumps(result["peers_best"]), "\nratios:", json.dumps(result["ratios_p50"]), flush=True)
    if not args.no_journal:
        result["journal"] = journal_overhead(db, path, queries)
        print("journal:", {k: v for k, v in result["journal"].items() if k != "cache_paths"}, flush=True)
    result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    for h in handles.values():
        h.close()
    db.close()
    return result


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7, help="which seeds are queried")
    ap.add_argument("--data-seed", type=int, default=20260101)
    ap.add_argument("--db", default=None, help="anatid file to (re)create")
    ap.add_argument("--no-ladybug", action="store_true")
    ap.add_argument("--no-hand", action="store_true", help="skip the plain-DuckDB-by-hand peer")
    ap.add_argument("--no-journal", action="store_true", help="skip the journal-overhead measurement")
    ap.add_argument("--lb-threads", type=int, nargs="+", default=[1])
    ap.add_argument("--lb-compression", action=argparse.BooleanOptionalAction, default=False,
                    help="LadybugDB 0.22 compression (off by default: it returned wrong ids in our runs)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--build-only", action="store_true",
                    help="load, build the ten generations, print the build times and stop (writes no results file)")
    args = ap.parse_args(argv)
    if args.build_only:
        print(json.dumps(build_only(args)))
        return
    result = run(args)
    out = args.out or RESULTS / f"graph_2hop-{args.scale:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
