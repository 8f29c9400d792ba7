"""What the graph arm costs, as users call it, in one process, interleaved query by query:
recall() with the graph off (weights={"graph": 0}), recall() with the defaults, and
anatid.anatid_hybrid from a plain DuckDB statement with the defaults (checked to return
recall()'s ids in recall()'s order on every query).

    python -m benchmark.graph_arm_speed --scale 0.1      # 100k memories, 10k per tenant
    python -m benchmark.graph_arm_speed --scale 1        # 1M memories (the issue's shape)

Data: benchmark.hybrid_recall's file (its Phase 0 graph with text, 64-d embeddings and
500 journalled writes on tenant 0), with every tenant's indexes maintained here, so the
graph arm runs on a graph generation. Single thread. Writes
benchmark/results/graph_arm_speed-<scale>.json.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import duckdb

from . import datagen, hybrid_recall

RESULTS = Path(__file__).parent / "results"
MACRO = ("SELECT memory_id FROM anatid.anatid_hybrid($query, tenant := $tenant, k := 10, qvec := $qvec, "
         "depth := 50, vector_ceiling := NULL)")


pct, summary = hybrid_recall._pct, hybrid_recall.summary


def macro_profile(cur, q) -> dict:
    """Where one anatid_hybrid call's time goes: DuckDB's own profile (binding, optimising,
    execution CPU), seconds to ms."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.json")
        cur.execute("PRAGMA enable_profiling = 'json'")
        cur.execute(f"PRAGMA profiling_output = '{out}'")
        try:
            cur.execute(MACRO, {"query": q["query"], "tenant": q["tenant"], "qvec": q["qvec"]}).fetchall()
        finally:
            cur.execute("PRAGMA disable_profiling")
        d = json.loads(Path(out).read_text(encoding="utf-8"))
    opt = d.get("optimizer", {})
    return {"total_ms": round(d["query"]["total_time"] * 1000, 2),
            "binding_ms": round(d["planner"]["binding_time"] * 1000, 2),
            "optimizer_ms": round(opt.get("total_time", 0) * 1000, 2),
            "join_order_ms": round(opt.get("join_order", 0) * 1000, 2),
            "execution_cpu_ms": round(d["query"]["cpu_time"] * 1000, 2)}


def main(argv=None) -> dict:
    import anatid
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", default="/tmp/anatid-bench")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    path = str(Path(args.work) / f"graph-arm-{args.scale:g}-64.anatid")
    Path(args.work).mkdir(parents=True, exist_ok=True)
    if not os.path.exists(path):
        hybrid_recall.prepare(path, args.scale, 64, args.seed)
        for t in range(datagen.TENANTS):
            with anatid.Anatid.open(path, tenant=t) as db:
                db.maintain_indexes()
    queries = hybrid_recall.choose_queries(args.queries, 64, args.seed)
    handles = {t: anatid.Anatid.open(path, tenant=t) for t in range(datagen.TENANTS)}
    handles[0].connection.execute("SET threads = 1")
    plain = handles[0].connection.cursor()
    load = [round(x, 2) for x in os.getloadavg()]

    def recall(q, weights=None):
        return [h.memory_id for h in handles[q["tenant"]].recall(q["query"], embedding=q["qvec"], k=10,
                                                                 weights=weights, allow_slow=True)]

    ways = {
        "recall(), graph off": lambda q: recall(q, {"graph": 0}),
        "recall(), defaults": recall,
        "anatid.anatid_hybrid, defaults": lambda q: [r[0] for r in plain.execute(
            MACRO, {"query": q["query"], "tenant": q["tenant"], "qvec": q["qvec"]}).fetchall()],
    }
    for q in queries[:10]:    # warm: generations parsed, caches filled
        for fn in ways.values():
            fn(q)
    times: dict[str, list[float]] = {k: [] for k in ways}
    mismatches = 0
    for i, q in enumerate(queries):
        order = list(ways.items()) if i % 2 == 0 else list(ways.items())[::-1]
        got = {}
        for name, fn in order:
            t0 = time.perf_counter()
            got[name] = fn(q)
            times[name].append((time.perf_counter() - t0) * 1000.0)
        mismatches += got["anatid.anatid_hybrid, defaults"] != got["recall(), defaults"]
    off = pct(times["recall(), graph off"], .5)
    result = {
        "benchmark": "graph_arm_speed", "workload": "hybrid", "scale": args.scale, "queries": len(queries), "k": 10, "depth": 50,
        "threads": 1, "duckdb": duckdb.__version__, "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus", "load_before": load,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "memories": plain.execute("SELECT count(*) FROM anatid_memories").fetchone()[0],
        "engines": {name: {**summary(ts), "p50_vs_graph_off": round(pct(ts, .5) / off, 2)}
                    for name, ts in times.items()},
        "macro_vs_recall_id_mismatches": mismatches,
        # the statements recall() issues with the defaults, p50 per statement (hybrid_recall's tracer)
        "profile_recall_defaults": hybrid_recall.profile_recall(handles, ways["recall(), defaults"], queries),
        "profile_macro_one_call": macro_profile(plain, queries[0]),
    }
    for db in handles.values():
        db.close()
    out = Path(args.out) if args.out else RESULTS / f"graph_arm_speed-{args.scale:g}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for name, s in result["engines"].items():
        print(f"{name:34s} p50 {s['p50_ms']:8.2f} ms  p95 {s['p95_ms']:8.2f} ms  x{s['p50_vs_graph_off']}")
    print("macro vs recall() id mismatches:", mismatches, "  load", load, "->", result["load_after"])
    return result


if __name__ == "__main__":
    main()
