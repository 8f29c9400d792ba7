"""Write throughput: remember on one thread, remember_many, and writes with two readers.

    PYTHONPATH=python python benchmark/writes.py            # smoke size (CI)
    PYTHONPATH=python python benchmark/writes.py --large    # the published size
    PYTHONPATH=python python benchmark/writes.py --profile-only   # remember_many's profile only

Self-checking: every acknowledged id is read back and every registered journal
hook is listed before anything is timed; the figures go to
benchmark/results/writes.json (docs/benchmarks.md cites them). Also measured: the
statement profile of a remember (statements per remember, ms in each, the commit),
and remember on a file preloaded with --preload memories against the fresh file
(every write statement must cost O(rows written), so the rate must not fall).
remember_many is profiled the same way (ms per batch in each statement, the rest is
Python). per_s counts every batch, the ones whose commit ran DuckDB's automatic
checkpoint included; per_s_at_p50_batch is the typical batch.
Targets (issue 9): >= 1,000 remember/s with every journal written,
>= 50,000 memories/s through remember_many, and writes with two readers
running at >= 0.5x their solo rate.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

import duckdb

import anatid
from anatid import Anatid
from anatid.verbs import journal

HERE = Path(__file__).resolve().parent
ENTITIES = [f"entity{i}" for i in range(200)]
DIM = 64


def load_index_modules() -> dict[str, int]:
    """Import every index module so its journal hooks fire; return hooks per event."""
    for name in ("graph", "text", "vector"):
        try:
            importlib.import_module(f"anatid.indexes.{name}")
        except ImportError:
            pass
    return {event: len(fns) for event, fns in journal._hooks.items()}


def vec(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(DIM)]


def item(rng: random.Random, i: int) -> dict:
    return {"content": f"note {i} about {' and '.join(rng.sample(ENTITIES, 2))}: the meeting moved to room {i % 97}",
            "entities": rng.sample(ENTITIES, 2), "embedding": vec(rng)}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def remember_loop(db: Anatid, n: int, rng: random.Random, start: int) -> tuple[list[int], list[float]]:
    ids, lat = [], []
    for i in range(n):
        it = item(rng, start + i)
        t0 = time.perf_counter()
        m = db.remember(it["content"], entities=it["entities"], embedding=it["embedding"])
        lat.append(time.perf_counter() - t0)
        ids.append(m.memory_id)
    return ids, lat


class _Traced:
    """A cursor that times every statement by its first words (the statement profile)."""

    def __init__(self, cur, prof):
        self._cur, self._prof = cur, prof

    def execute(self, query, params=None):
        t0 = time.perf_counter()
        self._cur.execute(query, params) if params is not None else self._cur.execute(query)
        words = " ".join(query.split())
        key = " ".join(words.split(" ")[:3]) if words.startswith(("INSERT", "UPDATE", "DELETE")) else words[:70]
        entry = self._prof.setdefault(key, [0, 0.0])
        entry[0] += 1
        entry[1] += time.perf_counter() - t0
        return self

    def commit(self):
        t0 = time.perf_counter()
        self._cur.commit()
        entry = self._prof.setdefault("COMMIT", [0, 0.0])
        entry[0] += 1
        entry[1] += time.perf_counter() - t0

    def fetchone(self):
        return self._cur.fetchone()

    def fetchall(self):
        return self._cur.fetchall()

    def __getattr__(self, name):
        return getattr(self._cur, name)


def statement_profile(db: Anatid, n: int, rng: random.Random, start: int) -> dict:
    """Statements per remember and ms per remember spent in each, over n remembers."""
    store = db._store
    prof: dict[str, list] = {}
    real = store.cursor()
    store._state().cursor = _Traced(real, prof)
    try:
        t0 = time.perf_counter()
        remember_loop(db, n, rng, start)
        total = time.perf_counter() - t0
    finally:
        store._state().cursor = real
    rows = sorted(prof.items(), key=lambda kv: -kv[1][1])
    return {"remembers": n, "ms_per_remember": round(total / n * 1e3, 3),
            "statements_per_remember": round(sum(c for k, (c, _) in rows if k != "COMMIT") / n, 2),
            "by_statement": [{"statement": k, "per_remember": round(c / n, 2), "ms_per_remember": round(t / n * 1e3, 3)}
                             for k, (c, t) in rows]}


def batch_profile(db: Anatid, batches: int, batch: int, rng: random.Random, start: int) -> dict:
    """remember_many's statements (ms per batch in each, the commit included) against its
    total: what is left is Python (validation, tokenizing, building the relations)."""
    store = db._store
    prof: dict[str, list] = {}
    real = store.cursor()
    total = 0.0
    for b in range(batches):
        items = [item(rng, start + b * batch + i) for i in range(batch)]
        store._state().cursor = _Traced(real, prof)
        try:
            t0 = time.perf_counter()
            db.remember_many(items)
            total += time.perf_counter() - t0
        finally:
            store._state().cursor = real
    rows = sorted(prof.items(), key=lambda kv: -kv[1][1])
    in_sql = sum(t for _, (_, t) in rows)
    return {"batches": batches, "batch": batch, "ms_per_batch": round(total / batches * 1e3, 1),
            "ms_in_statements_and_commit": round(in_sql / batches * 1e3, 1),
            "ms_in_python": round((total - in_sql) / batches * 1e3, 1),
            "by_statement": [{"statement": k, "per_batch": round(c / batches, 2),
                              "ms_per_batch": round(t / batches * 1e3, 2)} for k, (c, t) in rows]}


# The tables a remember_many batch appends to, with the column naming its memory (None:
# the graph journal, whose rows of one batch share the batch's seq).
_BATCH_TABLES = {"anatid_memories": "memory_id", "anatid_edges": "src_id", "anatid_embeddings": "memory_id",
                 "anatid_vector_journal": "memory_id", "anatid_postings": "memory_id",
                 "anatid_text_docs": "memory_id", "anatid_text_journal": "memory_id", "anatid_graph_journal": None}


def wal_bytes_by_table(db: Anatid, path: str, batch: int, rng: random.Random, start: int) -> dict:
    """What one batch's rows cost each table: the batch is written, checkpointed, and its
    rows of each table are appended again in a transaction of their own (WAL bytes, the
    INSERT and the COMMIT of that table alone; no automatic checkpoint in between)."""
    ids = db.remember_many([item(rng, start + i) for i in range(batch)])
    con = db.connection
    threshold = con.execute("SELECT current_setting('checkpoint_threshold')").fetchone()[0]
    con.execute("SET checkpoint_threshold = '10GB'")
    con.execute("CHECKPOINT")
    lo, hi = min(ids), max(ids)
    wal = path + ".wal"
    out = {}
    try:
        for table, col in _BATCH_TABLES.items():
            where = (f"WHERE {col} BETWEEN {lo} AND {hi}" if col else
                     "WHERE seq = (SELECT max(seq) FROM anatid_graph_journal WHERE op = 3)")
            rows = con.execute(f"SELECT count(*) FROM {table} {where}").fetchone()[0]
            w0 = os.path.getsize(wal) if os.path.exists(wal) else 0
            t0 = time.perf_counter()
            con.execute("BEGIN")
            con.execute(f"INSERT INTO {table} SELECT * FROM {table} {where}")
            t1 = time.perf_counter()
            con.execute("COMMIT")
            t2 = time.perf_counter()
            w1 = os.path.getsize(wal)
            out[table] = {"rows": rows, "wal_bytes": w1 - w0, "wal_bytes_per_memory": round((w1 - w0) / batch),
                          "insert_ms": round((t1 - t0) * 1e3, 2), "commit_ms": round((t2 - t1) * 1e3, 2)}
    finally:
        for table, col in _BATCH_TABLES.items():  # the copies go again: the file stays a plain benchmark file
            where = (f"WHERE {col} BETWEEN {lo} AND {hi}" if col else
                     "WHERE seq = (SELECT max(seq) FROM anatid_graph_journal WHERE op = 3)")
            con.execute(f"DELETE FROM {table} {where}")
        con.execute(f"SET checkpoint_threshold = '{threshold}'")
    return out


def commits_with_and_without_checkpoint(db: Anatid, path: str, batches: int, batch: int, rng: random.Random,
                                        start: int, threshold: str | None = None) -> dict:
    """remember_many's COMMIT split by whether DuckDB's automatic checkpoint ran inside it
    (the WAL shrank), and the explicit CHECKPOINT of what is left at the end: the work a
    checkpoint does is per memory written, so moving it out of the commit would not make it
    smaller."""
    store = db._store
    real = store.cursor()
    wal = path + ".wal"
    db.connection.execute("CHECKPOINT")
    if threshold is not None:
        db.connection.execute(f"SET checkpoint_threshold = '{threshold}'")
    plain, with_ckpt, total = [], [], 0.0

    class Split(_Traced):
        def commit(self):
            w0 = os.path.getsize(wal) if os.path.exists(wal) else 0
            t0 = time.perf_counter()
            self._cur.commit()
            dt = time.perf_counter() - t0
            (with_ckpt if (os.path.getsize(wal) if os.path.exists(wal) else 0) < w0 else plain).append(dt)

    for b in range(batches):
        items = [item(rng, start + b * batch + i) for i in range(batch)]
        store._state().cursor = Split(real, {})
        try:
            t0 = time.perf_counter()
            db.remember_many(items)
            total += time.perf_counter() - t0
        finally:
            store._state().cursor = real
    t0 = time.perf_counter()
    db.connection.execute("CHECKPOINT")
    final = time.perf_counter() - t0
    ms = lambda v: round(statistics.median(v) * 1e3, 1) if v else None
    return {"batches": batches, "batch": batch, "checkpoint_threshold": threshold or "default",
            "commits_without_checkpoint": len(plain),
            "commit_ms_p50_without_checkpoint": ms(plain), "commits_with_checkpoint": len(with_ckpt),
            "commit_ms_p50_with_checkpoint": ms(with_ckpt), "final_checkpoint_ms": round(final * 1e3, 1),
            "checkpoint_ms_per_batch": round((sum(with_ckpt) - len(with_ckpt) * (ms(plain) or 0) / 1e3 + final)
                                             / batches * 1e3, 1),
            "per_s_including_final_checkpoint": round(batches * batch / (total + final), 1)}


def profile_only(out: str) -> None:
    """remember_many's statement profile at 2,000 and 5,000 per batch, its WAL by table and
    its commits split by checkpoint, each on a fresh file (results/writes-profile.json)."""
    load_index_modules()
    result = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "duckdb": duckdb.__version__,
                          "anatid": anatid.__version__, "load_avg_before": os.getloadavg()}}
    for batch in (2000, 5000):
        rng = random.Random(9)
        folder = tempfile.mkdtemp(prefix="anatid-writes-profile-")
        path = os.path.join(folder, "p.anatid")
        db = Anatid.open(path, embedding_dim=DIM)
        db.remember_many([item(rng, i) for i in range(batch)])  # warm up
        prof = batch_profile(db, 6, batch, rng, 10**6)
        prof["per_s"] = round(batch / prof["ms_per_batch"] * 1e3, 1)
        prof["wal_bytes_per_batch"] = wal_bytes_per_batch(db, path, batch, rng, 2 * 10**6)
        prof["commits"] = commits_with_and_without_checkpoint(db, path, 12, batch, rng, 3 * 10**6)
        prof["wal_by_table"] = wal_bytes_by_table(db, path, batch, rng, 4 * 10**6)
        db.close()
        # the same 12 batches on a fresh file that never checkpoints until the end: does a
        # larger threshold make the checkpoint's work smaller, or only move it?
        path2 = os.path.join(folder, "p2.anatid")
        db = Anatid.open(path2, embedding_dim=DIM)
        db.remember_many([item(rng, 5 * 10**6 + i) for i in range(batch)])
        prof["commits_1gb_threshold"] = commits_with_and_without_checkpoint(db, path2, 12, batch, rng, 6 * 10**6,
                                                                            threshold="1GB")
        db.close()
        result[f"batch_{batch}"] = prof
    result["machine"]["load_avg_after"] = os.getloadavg()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


def wal_bytes_per_batch(db: Anatid, path: str, batch: int, rng: random.Random, start: int) -> int:
    """Bytes one remember_many batch adds to the write-ahead log (what its commit writes)."""
    db.connection.execute("CHECKPOINT")
    wal = path + ".wal"
    before = os.path.getsize(wal) if os.path.exists(wal) else 0
    db.remember_many([item(rng, start + i) for i in range(batch)])
    return (os.path.getsize(wal) if os.path.exists(wal) else 0) - before


def preloaded_comparison(folder: str, preload: int, n: int, empty: dict, rng: random.Random) -> dict:
    """remember on a file already holding `preload` memories against the fresh file: every
    write statement must cost O(rows written), so the rate must not fall with file size."""
    db = Anatid.open(os.path.join(folder, "preloaded.anatid"), embedding_dim=DIM)
    t0, batch = time.perf_counter(), 5000
    for b in range(0, preload, batch):
        db.remember_many([item(rng, 5 * 10**6 + b + i) for i in range(min(batch, preload - b))])
    load_s = time.perf_counter() - t0
    remember_loop(db, 50, rng, 6 * 10**6)  # warm up
    _, lat = remember_loop(db, n, rng, 7 * 10**6)
    full = summary(n, lat)
    profile = statement_profile(db, min(n, 300), rng, 8 * 10**6)
    items = [item(rng, 9 * 10**6 + i) for i in range(5000)]
    t0 = time.perf_counter()
    db.remember_many(items)
    many_s = time.perf_counter() - t0
    memories = db.connection.execute("SELECT count(*) FROM anatid_memories").fetchone()[0]
    db.close()
    return {"preloaded_memories": preload, "preload_s": round(load_s, 1), "memories_at_end": memories,
            "remember_on_fresh_file": empty, "remember_on_preloaded_file": full,
            "ratio_preloaded_to_fresh": round(full["per_s"] / empty["per_s"], 3),
            "remember_many_5000_on_preloaded_per_s": round(5000 / many_s, 1),
            "statement_profile_preloaded": profile}


def summary(n: int, lat: list[float]) -> dict:
    total = sum(lat)
    return {"n": n, "per_s": round(n / total, 1), "p50_ms": round(pct(lat, 0.5) * 1e3, 3),
            "p95_ms": round(pct(lat, 0.95) * 1e3, 3)}


def contended(db: Anatid, n: int, rng: random.Random, start: int) -> tuple[dict, dict, list[int]]:
    """remember alone, then with two reader threads (hybrid recall, recall_2hop) running."""
    stop = threading.Event()
    reads = [0, 0]

    def reader(j: int) -> None:
        r = random.Random(j)
        while not stop.is_set():
            if j == 0:
                db.recall("meeting room entity7", k=10, embedding=vec(r), allow_slow=True)
            else:
                db.recall_2hop(r.choice(ENTITIES), limit=20)
            reads[j] += 1

    _, lat_solo = remember_loop(db, n, rng, start)
    threads = [threading.Thread(target=reader, args=(j,)) for j in range(2)]
    for t in threads:
        t.start()
    try:
        _, lat_busy = remember_loop(db, n, rng, start + 10**6)
    finally:
        stop.set()
        for t in threads:
            t.join()
    return summary(n, lat_solo), summary(n, lat_busy), reads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results" / "writes.json"))
    ap.add_argument("--preload", type=int, default=None,
                    help="memories in the preloaded file (default 200,000 with --large, 20,000 otherwise)")
    ap.add_argument("--profile-only", action="store_true",
                    help="only remember_many's profile at 2,000 and 5,000 per batch: statements, commits with "
                         "and without a checkpoint, WAL bytes by table (results/writes-profile.json)")
    args = ap.parse_args()
    if args.profile_only:
        profile_only(args.out if args.out != str(HERE / "results" / "writes.json")
                     else str(HERE / "results" / "writes-profile.json"))
        return
    n_single, n_batches, batch = (3000, 20, 5000) if args.large else (300, 4, 2000)
    rng = random.Random(9)
    hooks = load_index_modules()
    folder = tempfile.mkdtemp(prefix="anatid-writes-")
    path = os.path.join(folder, "w.anatid")
    db = Anatid.open(path, embedding_dim=DIM)
    journal_tables = [r[0] for r in db.connection.execute(
        "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'anatid\\_%journal%' ESCAPE '\\'").fetchall()]

    # warm up and check: every id acknowledged is there, journals (if any) grew.
    before = {t: db.connection.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in journal_tables}
    ids, _ = remember_loop(db, 50, rng, 0)
    assert all(db.get(i).memory_id == i for i in ids)
    grown = {t: db.connection.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] - before[t]
             for t in journal_tables}

    ids, lat = remember_loop(db, n_single, rng, 1000)
    solo = summary(n_single, lat)
    assert len(set(ids)) == n_single
    profile_fresh = statement_profile(db, min(n_single, 300), rng, 4 * 10**6)

    batch_lat, batch_cpu, total = [], [], 0
    for b in range(n_batches):
        items = [item(rng, 10**6 + b * batch + i) for i in range(batch)]
        t0, c0 = time.perf_counter(), time.process_time()
        got = db.remember_many(items)
        batch_lat.append(time.perf_counter() - t0)
        batch_cpu.append(time.process_time() - c0)
        assert len(got) == batch
        total += batch
    many = {"batches": n_batches, "batch": batch, "per_s": round(total / sum(batch_lat), 1),
            "p50_batch_ms": round(pct(batch_lat, 0.5) * 1e3, 1), "p95_batch_ms": round(pct(batch_lat, 0.95) * 1e3, 1),
            "per_s_at_p50_batch": round(batch / pct(batch_lat, 0.5), 1),
            # CPU seconds of this process (DuckDB's threads included) per batch: less
            # sensitive than wall time to other jobs on a shared machine
            "cpu_ms_per_batch_p50": round(pct(batch_cpu, 0.5) * 1e3, 1),
            "per_cpu_s": round(total / sum(batch_cpu), 1)}
    many_profile = batch_profile(db, 4, batch, rng, 5 * 10**5)
    many_profile["wal_bytes_per_batch"] = wal_bytes_per_batch(db, path, batch, rng, 7 * 10**5)

    # Writes with two readers, twice: first on a file without index generations (every read
    # an exact scan through the macro, which uses both cores), then after maintain_indexes()
    # (the documented way to run: reads merge base + journal). The solo rate is measured right
    # before each contended run, on the same file.
    solo2, busy, reads = contended(db, n_single, rng, 2 * 10**6)
    db.maintain_indexes()
    solo3, busy3, reads3 = contended(db, n_single, rng, 6 * 10**6)
    memories = db.connection.execute("SELECT count(*) FROM anatid_memories").fetchone()[0]
    db.close()
    preload = args.preload if args.preload is not None else (200_000 if args.large else 20_000)
    sizes = preloaded_comparison(folder, preload, n_single, solo, rng)

    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "size": "large" if args.large else "smoke",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "duckdb": duckdb.__version__,
                    "anatid": anatid.__version__, "load_avg": os.getloadavg()},
        "native": db.native.loaded, "journal_hooks": hooks, "journal_rows_per_50_remembers": grown,
        "remember_one_thread": solo, "remember_many": many,
        "remember_solo_again": solo2, "remember_with_two_readers": busy, "reads_done": reads,
        "ratio_busy_to_solo": round(busy["per_s"] / solo2["per_s"], 3),
        "with_generations": {"remember_solo": solo3, "remember_with_two_readers": busy3, "reads_done": reads3,
                             "ratio_busy_to_solo": round(busy3["per_s"] / solo3["per_s"], 3)},
        "memories_at_end": memories,
        "statement_profile_fresh": profile_fresh, "remember_many_profile": many_profile,
        "file_size_comparison": sizes,
        "targets": {"remember_per_s": 1000, "remember_many_per_s": 50000, "ratio_busy_to_solo": 0.5},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
