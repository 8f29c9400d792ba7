"""What the reads' journal invariant (anatid.indexes.health.check_journal) costs, A/B
interleaved in one process on copies of the 1M benchmark files:

    python -m benchmark.journal_check                  # graph and hybrid, 1M
    python -m benchmark.journal_check --skip-hybrid    # graph only (the 49 MB file)

"before" is the read as it was without the invariant (the statement returns NULL where
it now returns the journal's count(*), so the check is skipped), "steady" the read as it
is when the journal has not changed since the handle last verified it (one count(*) more
in the read's statement), "after a write" when it grew within RECHECK_SECONDS of the
last exact check (the same work), "exact" when the exact check runs (the first read, a
shrunk journal, or growth after RECHECK_SECONDS: count(*) plus one statement per index;
the handle's cache is emptied before every call), and "exact check" that statement alone. Self-checking: each variant's ids equal "before"'s on every query.
The graph file is benchmark.graph_2hop's, the hybrid file benchmark.hybrid_recall's
(build them with those first); each is copied, its generations rebuilt through
maintain_indexes() (which records covered_id) and then journalled like those benchmarks
do (334 remember_many items, ~1,000 graph journal rows; 500 text and vector rows).
Writes benchmark/results/journal_check-1.json, with the load average, since the machine
may be shared.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import time
from pathlib import Path

import duckdb

RESULTS = Path(__file__).parent / "results"


def _pct(samples, q):
    s = sorted(samples)
    return round(s[min(len(s) - 1, int(q * len(s)))], 4)


def interleaved(variants: dict, queries, rounds: int = 3) -> dict:
    """p50/p95 ms of each variant, calls interleaved query by query; ids checked against the first."""
    names = list(variants)
    for q in queries[:20]:
        for n in names:
            variants[n](q)
    samples = {n: [] for n in names}
    mismatches = {n: 0 for n in names}
    for _ in range(rounds):
        for q in queries:
            want = None
            for n in names:
                t0 = time.perf_counter()
                got = variants[n](q)
                samples[n].append((time.perf_counter() - t0) * 1000.0)
                if want is None:
                    want = got
                elif got != want:
                    mismatches[n] += 1
    return {n: {"p50_ms": _pct(samples[n], 0.5), "p95_ms": _pct(samples[n], 0.95), "n": len(samples[n]),
                "mismatches": mismatches[n]} for n in names}


def _prime(store, how: str) -> None:
    """Set the handle's journal-check cache as a read would find it `how`."""
    cache = store.__dict__.setdefault("_journal_verified", {})
    if how == "exact":
        cache.clear()
    elif how == "after a write":       # the last exact check saw one row fewer, just now
        for key, (_, accepted, _) in list(cache.items()):
            cache[key] = (accepted - 1, accepted - 1, time.monotonic())


def _no_check(sql: str) -> str:
    assert ", count(*)" in sql
    return sql.replace(", count(*)", ", NULL", 1)


def graph(src: str, work: Path, queries: int) -> dict:
    import anatid
    from anatid import native_graph
    from anatid.indexes import health
    path = str(work / "graph-1.anatid")
    shutil.copy(src, path)
    db = anatid.Anatid.open(path, tenant=0)
    cur = db.connection
    cur.execute("SET threads = 1")
    db.maintain_indexes(indexes=("graph",), force=True)
    items = [{"content": f"journal {i}", "entities": [f"entity {(i * 7) % 97}", f"entity {(i * 13) % 89}",
                                                      f"entity {(i * 3) % 83}"]} for i in range(334)]
    db.remember_many(items)
    rows = cur.execute("SELECT count(*) FROM anatid_graph_journal WHERE tenant_id = 0").fetchone()[0]
    keys = [r[0] for r in cur.execute("""
        SELECT e.name_key FROM anatid_entities e WHERE e.tenant_id = 0
          AND EXISTS (SELECT 1 FROM anatid_edges a WHERE a.kind = 'about' AND a.dst_id = e.entity_id)
        ORDER BY e.entity_id""").fetchall()]
    rng = random.Random(7)
    picks = [rng.choice(keys) for _ in range(queries)]
    store, at = db._store, db._store.view().valid_at
    with_count, without = native_graph._RECALL, _no_check(native_graph._RECALL)

    def ids(sql, how="steady"):
        def run(key):
            native_graph._RECALL = sql
            _prime(store, how)
            try:
                return native_graph.recall_ids(cur, 0, [key], 2, 50, None, at, store=store)
            finally:
                native_graph._RECALL = with_count
        return run

    def verb(sql, how="steady"):
        def run(key):
            native_graph._RECALL = sql
            _prime(store, how)
            try:
                return [h.memory_id for h in db.recall_2hop(key, limit=50)]
            finally:
                native_graph._RECALL = with_count
        return run

    assert health.journal_shortfall(store, cur, "graph", 0) is None
    out = {"journal_rows": int(rows),
           "ids": interleaved({"before": ids(without), "steady": ids(with_count),
                               "after a write": ids(with_count, "after a write"),
                               "exact": ids(with_count, "exact")}, picks),
           "verb recall_2hop": interleaved({"before": verb(without), "steady": verb(with_count),
                                            "after a write": verb(with_count, "after a write"),
                                            "exact": verb(with_count, "exact")}, picks)}
    out["exact check"] = interleaved({"graph": lambda k: health.journal_shortfall(store, cur, "graph", 0)}, picks)
    db.close()
    return out


def hybrid(src: str, work: Path, queries: int) -> dict:
    import numpy as np
    import anatid
    from anatid import native_hybrid
    from anatid.indexes import health
    from . import hybrid_recall
    path = str(work / "hybrid-1-64.anatid")
    shutil.copy(src, path)
    with anatid.Anatid.open(path, tenant=0) as db:
        db.maintain_indexes(force=True)          # tenant 0's graph too: the lean path seeds its graph arm
    hybrid_recall.journal_500(path, 64, np.random.default_rng(99))
    db = anatid.Anatid.open(path, tenant=0)
    cur = db.connection
    cur.execute("SET threads = 1")
    store = db._store
    qs = [q for q in hybrid_recall.choose_queries(queries * 10, 64, 7) if q["tenant"] == 0][:queries]
    db.recall(qs[0]["query"], embedding=qs[0]["qvec"], k=10, allow_slow=True)    # parses the generations
    with_count = dict(native_hybrid._RANK_SQL)
    without = {k: _no_check(v) for k, v in with_count.items()}

    def recall(sqls, how="steady"):
        def run(q):
            native_hybrid._RANK_SQL.update(sqls)
            _prime(store, how)
            try:
                hits = db.recall(q["query"], embedding=q["qvec"], k=10, allow_slow=True)
                assert not any("damaged_base" in n or "macro" in n for n in hits.notes), hits.notes
                return [h.memory_id for h in hits]
            finally:
                native_hybrid._RANK_SQL.update(with_count)
        return run

    assert all(health.journal_shortfall(store, cur, i, 0) is None for i in ("text", "vector"))
    out = {"journal_rows": {i: cur.execute(f"SELECT count(*) FROM anatid_{i}_journal WHERE tenant_id = 0").fetchone()[0]
                            for i in ("text", "vector")},
           "verb recall (text + vector + graph seeds)": interleaved(
               {"before": recall(without), "steady": recall(with_count),
                "after a write": recall(with_count, "after a write"), "exact": recall(with_count, "exact")}, qs)}
    out["exact check"] = interleaved({i: (lambda i: lambda q: health.journal_shortfall(store, cur, i, 0))(i)
                                      for i in ("text", "vector")}, qs)
    db.close()
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph-db", default="/tmp/anatid-bench-graph-1.anatid")
    ap.add_argument("--hybrid-db", default="/tmp/anatid-bench/hybrid-1-64.anatid")
    ap.add_argument("--work", default="/tmp/anatid-bench-journal-check")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--skip-hybrid", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS / "journal_check-1.json")
    args = ap.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "journal_check", "python": platform.python_version(), "duckdb": duckdb.__version__,
              "machine": f"{platform.machine()}, {os.cpu_count()} cpus", "threads": 1,
              "load_average_before": os.getloadavg()}
    result["graph"] = graph(args.graph_db, work, args.queries)
    if not args.skip_hybrid:
        result["hybrid"] = hybrid(args.hybrid_db, work, args.queries // 3)
    result["load_average_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
