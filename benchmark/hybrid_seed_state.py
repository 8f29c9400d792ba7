"""What the seed check costs inside recall()'s rank statement (1M file of benchmark.hybrid_recall).

    PYTHONPATH=python python -m benchmark.hybrid_seed_state     # after hybrid_recall --scale 1

Captures the rank statements recall() issues for 60 queries on tenants 0-2 (with the seed
state column, python/anatid/native_hybrid.py _SEED_STATE), then runs each of them in every
variant below, in shuffled order, eight times, and reports the p50 CPU ms (process time: the
machine is shared) per variant. Every variant that returns the check is compared with the
statement as issued first. Writes benchmark/results/hybrid_seed_state-1.json.
"""
from __future__ import annotations

import json
import os
import random
import statistics
import time
from pathlib import Path

import anatid
from anatid import native_hybrid as nh

from . import hybrid_recall as hr

VARIANTS = {
    "as issued: tenant's [count(*), max(entity_id), XOR of the ids' hashes] as a scalar subquery": lambda sql: sql,
    "tenant's [count(*), max(entity_id)] only (before the hash XOR; misses some rolled-back ids)":
        lambda sql: sql.replace(nh._SEED_STATE, "(SELECT [count(*), max(entity_id)] FROM anatid_entities "
                                                "WHERE tenant_id = $tenant)"),
    "without the seed state column": lambda sql: sql.replace(", " + nh._SEED_STATE, ""),
    "every tenant's [count(*), max(entity_id)]":
        lambda sql: sql.replace(nh._SEED_STATE, "(SELECT [count(*), max(entity_id)] FROM anatid_entities)"),
    "every tenant's count(*) only":
        lambda sql: sql.replace(nh._SEED_STATE, "(SELECT [count(*), 0] FROM anatid_entities)"),
    "tenant's count and max as a cross join":
        lambda sql: sql.replace(", " + nh._SEED_STATE, "").replace(
            "$request), count(*)", "$request), count(*), any_value(e.ec), any_value(e.em)")
        + ", (SELECT count(*) AS ec, max(entity_id) AS em FROM anatid_entities WHERE tenant_id = $tenant) e",
}


def main() -> None:
    path = str(Path("/tmp/anatid-bench") / "hybrid-1-64.anatid")
    queries = [q for q in hr.choose_queries(200, 64, 7) if q["tenant"] < 3][:60]
    handles = {t: anatid.Anatid.open(path, tenant=t, read_only=True) for t in range(3)}
    handles[0].connection.execute("SET threads = 1")
    captured = []
    for q in queries:     # parses the generations
        handles[q["tenant"]].recall(q["query"], embedding=q["qvec"], k=hr.K, allow_slow=True)

    class Capture:
        def __init__(self, cur):
            self._cur = cur

        def execute(self, sql, params=None):
            if "anatid_hybrid_recall" in sql:
                captured.append((sql, dict(params)))
            return self._cur.execute(sql) if params is None else self._cur.execute(sql, params)

        def __getattr__(self, name):
            return getattr(self._cur, name)
    for h in handles.values():
        read = h._store.read
        h._store.read = (lambda r: (lambda: Capture(r())))(read)
    for q in queries:
        handles[q["tenant"]].recall(q["query"], embedding=q["qvec"], k=hr.K, allow_slow=True)
    cur = handles[0].connection.cursor()
    load_start = [round(x, 2) for x in os.getloadavg()]
    for sql, p in captured:
        want = cur.execute(sql, p).fetchone()
        for name, f in VARIANTS.items():
            got = cur.execute(f(sql), p).fetchone()
            assert got[:2] == want[:2], name
    cpu = {k: [] for k in VARIANTS}
    rng = random.Random(1)
    for _ in range(8):
        for sql, p in captured:
            items = list(VARIANTS.items())
            rng.shuffle(items)
            for name, f in items:
                t0 = time.process_time()
                cur.execute(f(sql), p).fetchall()
                cpu[name].append((time.process_time() - t0) * 1e3)
    res = {"benchmark": "hybrid_seed_state", "statements": len(captured), "repeats": 8,
           "cpu_ms_p50": {k: round(statistics.median(v), 3) for k, v in cpu.items()},
           "load_average_start_end": [load_start, [round(x, 2) for x in os.getloadavg()]]}
    out = hr.RESULTS / "hybrid_seed_state-1.json"
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
