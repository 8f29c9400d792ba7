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

# Cypher formulations of the same contract (LadybugDB 0.22 has no CALL subqueries and
# SHORTEST needs a lower bound of 1, hence the two-query forms merged in Python: hop 0
# first, then the walk, skipping memories already found at hop 0).
_HOP0 = ("MATCH (s:Entity {id: $id})<-[:About]-(m:Memory) WHERE m.visible "
         "RETURN m.id AS id ORDER BY id DESC LIMIT $lim")
_WALK = ("MATCH (s:Entity {id: $id})-[r:Relates*%s 1..2]-(e:Entity)<-[:About]-(m:Memory) WHERE m.visible "
         "RETURN m.id AS id, min(length(r)) AS h ORDER BY h, id DESC LIMIT $lim")
LADYBUG_SINGLE = {
    "var-length 0..2, min(length)":
        "MATCH (s:Entity {id: $id})-[r:Relates*0..2]-(e:Entity)<-[:About]-(m:Memory) WHERE m.visible "
        "RETURN m.id AS id, min(length(r)) AS h ORDER BY h, id DESC LIMIT $lim",
}
LADYBUG_TWO_STEP = {
    "hop 0 + SHORTEST 1..2": (_HOP0, _WALK % " SHORTEST"),
    "hop 0 + var-length 1..2": (_HOP0, _WALK % ""),
}


def ladybug_load(con, work: Path, compression: bool):
    import ladybug as lb
    work.mkdir(parents=True, exist_ok=True)
    exports = {
        "entity": "SELECT entity_id AS id, tenant_id AS tenant, name_key AS key FROM anatid_entities",
        "memory": "SELECT memory_id AS id, tenant_id AS tenant, (tx_to IS NULL AND valid_to IS NULL) AS visible "
                  "FROM anatid_memories",
        "about": "SELECT src_id AS \"from\", dst_id AS \"to\" FROM anatid_edges WHERE kind = 'about'",
        "relates": "SELECT src_id AS \"from\", dst_id AS \"to\" FROM anatid_edges WHERE kind = 'relates' "
                   "AND tx_to IS NULL AND valid_to IS NULL",
    }
    for name, sql in exports.items():
        con.execute(f"COPY ({sql}) TO '{work / name}.parquet' (FORMAT parquet)")
    dbdir = work / f"lb-{'c' if compression else 'nc'}"
    if dbdir.exists():
        import shutil
        shutil.rmtree(dbdir) if dbdir.is_dir() else dbdir.unlink()
    t0 = time.perf_counter()
    db = lb.Database(str(dbdir), compression=compression)
    c = lb.Connection(db)
    c.execute("CREATE NODE TABLE Entity(id INT64, tenant INT64, key STRING, PRIMARY KEY(id))")
    c.execute("CREATE NODE TABLE Memory(id INT64, tenant INT64, visible BOOLEAN, PRIMARY KEY(id))")
    c.execute("CREATE REL TABLE About(FROM Memory TO Entity)")
    c.execute("CREATE REL TABLE Relates(FROM Entity TO Entity)")
    c.execute(f"COPY Entity FROM '{work / 'entity.parquet'}'")
    c.execute(f"COPY Memory FROM '{work / 'memory.parquet'}'")
    c.execute(f"COPY About FROM '{work / 'about.parquet'}'")
    c.execute(f"COPY Relates FROM '{work / 'relates.parquet'}'")
    return db, time.perf_counter() - t0


def ladybug_engines(db, threads_options):
    import ladybug as lb

    def ids_of(res):
        out = []
        while res.has_next():
            out.append(int(res.get_next()[0]))
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
    return engines


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
    report = db.maintain_indexes(all_tenants=True, indexes=("graph",))["graph"]   # the text index is not measured here
    result["build"] = {"seconds_all_tenants": report.get("build_seconds", report["seconds"]),
                       "seconds_with_validation": report["seconds"],
                       "bytes": sum(t["bytes"] for t in report["tenants"]),
                       "tenants": len(report["tenants"])}
    view = db._store.view(None)
    queries = choose_queries(db, args.queries, args.seed)
    engines = anatid_engines(db, view)
    verb, handles = verb_engine(path)
    engines["anatid verb recall_2hop (native, with content)"] = verb
    if not args.no_ladybug:
        try:
            import ladybug  # noqa: F401
            lbdb, lb_load = ladybug_load(db.connection, Path(f"/tmp/anatid-bench-lb-{args.scale:g}"), args.lb_compression)
            result["ladybug"] = {"version": getattr(ladybug, "__version__", "?"), "load_s": round(lb_load, 2),
                                 "compression": args.lb_compression}
            engines.update(ladybug_engines(lbdb, args.lb_threads))
        except ImportError:
            result["notes"].append("ladybug not installed (pip install ladybug): skipped")

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
    ap.add_argument("--lb-threads", type=int, nargs="+", default=[1, 2])
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
