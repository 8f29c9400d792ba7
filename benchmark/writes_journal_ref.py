"""Would a vector journal row that references anatid_embeddings (no copy of the vector)
pay for itself? Both sides of the trade, measured; anatid does not write such rows.

    PYTHONPATH=python python benchmark/writes_journal_ref.py            # writes results/writes-journal-ref.json
    PYTHONPATH=python python benchmark/writes_journal_ref.py --batches 6 --reads 20

Write side: remember_many into two files in one process, batch by batch interleaved (both
see the same load): A as shipped, B with the vector journal's embedding column NULL (what
a reference row would hold). B's file is only a benchmark file: its reads would be wrong.
Each file's total includes a final CHECKPOINT, so checkpoint work is counted, not moved.

Read side: on the shared 1M-memory file (read-only, --file), the journal rows a read would
scan, as TEMP tables of the newest --journal memories: with the vector inline (as now)
and as references resolved the only way a read could, by a join into anatid_embeddings on
memory_id (DuckDB's join-filter pushdown turns it into a zone-map range on the newest row
group). Also the join's cost when no row needs it (every row inline), written as one
statement with a conditional join. Medians of --reads, interleaved.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import writes as W  # noqa: E402  (item(), load_index_modules())

from anatid import Anatid  # noqa: E402
from anatid.verbs import bulk  # noqa: E402

_SHIPPED = bulk._VECTOR_STATE
_NO_COPY = _SHIPPED.replace("{vector} AS embedding", "CAST(NULL AS FLOAT[]) AS embedding")


def write_side(batch: int, batches: int) -> dict:
    W.load_index_modules()
    folder = tempfile.mkdtemp(prefix="anatid-journal-ref-")
    dbs = {k: Anatid.open(os.path.join(folder, f"{k}.anatid"), embedding_dim=W.DIM) for k in "AB"}
    state = {"A": _SHIPPED, "B": _NO_COPY}
    rng = random.Random(9)
    wall = {"A": [], "B": []}
    cpu = {"A": [], "B": []}
    for b in range(batches + 1):
        items = [W.item(rng, 10**6 * (b + 1) + i) for i in range(batch)]
        for k in ("AB" if b % 2 else "BA"):
            bulk._VECTOR_STATE = state[k]
            c0, t0 = time.process_time(), time.perf_counter()
            dbs[k].remember_many(items)
            if b:  # the first batch warms up
                wall[k].append(time.perf_counter() - t0)
                cpu[k].append(time.process_time() - c0)
    bulk._VECTOR_STATE = _SHIPPED
    out = {}
    for k in "AB":
        t0 = time.perf_counter()
        dbs[k].connection.execute("CHECKPOINT")
        ckpt = time.perf_counter() - t0
        wal_free = os.path.getsize(os.path.join(folder, f"{k}.anatid"))
        dbs[k].close()
        out["shipped" if k == "A" else "journal_without_vector"] = {
            "per_s_including_final_checkpoint": round(batches * batch / (sum(wall[k]) + ckpt), 1),
            "p50_batch_ms": round(statistics.median(wall[k]) * 1e3, 1),
            "cpu_ms_per_batch_p50": round(statistics.median(cpu[k]) * 1e3, 1),
            "final_checkpoint_ms": round(ckpt * 1e3, 1), "file_bytes_after_checkpoint": wal_free}
    out["throughput_ratio"] = round(out["journal_without_vector"]["per_s_including_final_checkpoint"]
                                    / out["shipped"]["per_s_including_final_checkpoint"], 3)
    return {"batch": batch, "batches": batches, **out}


_INLINE = "SELECT count(*), sum(len(embedding)) FROM anatid_j_inline WHERE tenant_id = $t"
_REF = """SELECT count(*), sum(len(emb)) FROM (
    SELECT j.memory_id, coalesce(j.embedding, e.embedding) AS emb FROM anatid_j_ref j
    LEFT JOIN anatid_embeddings e ON e.memory_id = j.memory_id AND e.tenant_id = j.tenant_id
         AND j.embedding IS NULL AND j.norm IS NOT NULL
    WHERE j.tenant_id = $t)"""
_REF_NONE_NEEDED = _REF.replace("anatid_j_ref", "anatid_j_inline")


def read_side(path: str, journal: int, reads: int) -> dict:
    con = duckdb.connect(path, read_only=True)
    tenant, n = con.execute("SELECT any_value(tenant_id), count(*) FROM anatid_embeddings").fetchone()
    con.execute(f"""CREATE TEMP TABLE anatid_j_inline AS
        SELECT tenant_id, memory_id, memory_id AS seq, norm, embedding FROM anatid_embeddings
        WHERE tenant_id = {int(tenant)} ORDER BY memory_id DESC LIMIT {int(journal)}""")
    con.execute("CREATE TEMP TABLE anatid_j_ref AS SELECT * REPLACE (CAST(NULL AS FLOAT[]) AS embedding) "
                "FROM anatid_j_inline")
    queries = {"inline": _INLINE, "reference_join": _REF, "join_with_no_reference_row": _REF_NONE_NEEDED}
    want = con.execute(_INLINE, {"t": tenant}).fetchall()
    for q in queries.values():
        assert con.execute(q, {"t": tenant}).fetchall() == want  # same vectors by either route
    times = {k: [] for k in queries}
    for _ in range(reads):
        for k, q in queries.items():
            t0 = time.perf_counter()
            con.execute(q, {"t": tenant}).fetchall()
            times[k].append(time.perf_counter() - t0)
    plan = con.execute("EXPLAIN ANALYZE " + _REF.replace("$t", str(int(tenant)))).fetchall()[0][1]
    groups = re.findall(r"Row Groups Scanned: (\d+ / \d+)", plan)
    con.close()
    return {"file": path, "embeddings": n, "journal_rows": journal, "reads": reads,
            "p50_ms": {k: round(statistics.median(v) * 1e3, 3) for k, v in times.items()},
            "row_groups_scanned": groups}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--file", default="/tmp/anatid-bench/hybrid-1-64.anatid")
    ap.add_argument("--journal", type=int, nargs="+", default=[100, 1000, 5000])
    ap.add_argument("--reads", type=int, default=30)
    ap.add_argument("--out", default=str(HERE / "results" / "writes-journal-ref.json"))
    args = ap.parse_args()
    result = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "duckdb": duckdb.__version__, "load_avg_before": os.getloadavg()},
              "write": write_side(args.batch, args.batches)}
    if os.path.exists(args.file):
        result["read"] = [read_side(args.file, j, args.reads) for j in args.journal]
    else:
        result["read"] = f"{args.file} not found: run benchmark/hybrid_recall.py at 1M first"
    result["machine"]["load_avg_after"] = os.getloadavg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
