"""remember against a plain-DuckDB transaction of the same logical shape, and group commit.

    PYTHONPATH=python python benchmark/write_shape.py              # smoke (CI): 150 per round
    PYTHONPATH=python python benchmark/write_shape.py --n 400 --rounds 5 --out benchmark/results/write_shape.json

In one process, on the same file system (both files in one temporary folder on disk, so
every commit writes and fsyncs a WAL):

* anatid's `remember` on one thread: two entities, a 64-d vector, content; every journal
  written (the graph, text and vector journals) in its one durable transaction;
* the plain-DuckDB transaction of the same logical shape, no anatid code: BEGIN, a memory row
  (the 15 columns of anatid_memories), its two ABOUT edges (one INSERT of two rows), one
  journal row, COMMIT, on a file of its own;

interleaved round by round (the machine is shared: compare within a run). Then group commit
(anatid.group_commit): 1, 2, 4 and 8 threads remembering on one handle, each call returning
only once its commit is durable, against the same threads with grouping off (every call its
own transaction, as before group commit). Self-checking: every acknowledged id is read back,
each journal grew by the expected rows, before anything is reported.

Targets (issue 21): remember >= 0.9x the plain transaction; 4 threads >= 1,000 remembers/s.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import duckdb

import anatid
from anatid import Anatid

HERE = Path(__file__).resolve().parent
ENTITIES = [f"entity{i}" for i in range(200)]
DIM = 64

_PLAIN_SCHEMA = """
CREATE TABLE memories (memory_id BIGINT PRIMARY KEY, version INTEGER, tenant_id BIGINT, content VARCHAR,
    kind VARCHAR, confidence DOUBLE, strength DOUBLE, writer VARCHAR, valid_from TIMESTAMP, valid_to TIMESTAMP,
    tx_from TIMESTAMP, tx_to TIMESTAMP, supersedes BIGINT, superseded_by BIGINT, last_used_at TIMESTAMP);
CREATE TABLE edges (edge_id BIGINT, tenant_id BIGINT, kind VARCHAR, src_id BIGINT, dst_id BIGINT,
    valid_from TIMESTAMP, tx_from TIMESTAMP);
CREATE TABLE journal (tenant_id BIGINT, seq BIGINT, op TINYINT, entry VARCHAR);
"""
_PLAIN_MEMORY = """INSERT INTO memories VALUES ($id, 1, 0, $content, 'fact', 1.0, 1.0, NULL, $now, NULL, $now,
                   NULL, NULL, NULL, NULL)"""
_PLAIN_EDGES = "INSERT INTO edges VALUES ($e1, 0, 'about', $id, $d1, $now, $now), ($e2, 0, 'about', $id, $d2, $now, $now)"
_PLAIN_JOURNAL = "INSERT INTO journal VALUES (0, $id, 3, $entry)"


def item(rng: random.Random, i: int) -> dict:
    pair = rng.sample(ENTITIES, 2)
    return {"content": f"note {i} about {' and '.join(pair)}: the meeting moved to room {i % 97}",
            "entities": pair, "embedding": [rng.uniform(-1, 1) for _ in range(DIM)]}


def path_label(threads, leaders) -> str:
    """How a row of the thread table wrote (the charts name each row by it)."""
    how = f"group commit, {leaders} group(s) at once" if leaders else "a transaction per call"
    return f"{threads} thread(s), {how}"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summary(lat: list[float]) -> dict:
    return {"n": len(lat), "per_s": round(len(lat) / sum(lat), 1),
            "p50_ms": round(pct(lat, 0.5) * 1000, 2), "p95_ms": round(pct(lat, 0.95) * 1000, 2)}


def remember_round(db: Anatid, n: int, rng: random.Random, start: int) -> tuple[list[int], list[float]]:
    ids, lat = [], []
    for i in range(n):
        it = item(rng, start + i)
        t0 = time.perf_counter()
        m = db.remember(it["content"], entities=it["entities"], embedding=it["embedding"])
        lat.append(time.perf_counter() - t0)
        ids.append(m.memory_id)
    return ids, lat


def plain_round(con: duckdb.DuckDBPyConnection, n: int, rng: random.Random, start: int) -> list[float]:
    lat = []
    for i in range(n):
        it = item(rng, start + i)
        mid = 10 * (start + i)
        now = datetime.utcnow()
        t0 = time.perf_counter()
        con.execute("BEGIN")
        con.execute(_PLAIN_MEMORY, {"id": mid, "content": it["content"], "now": now})
        con.execute(_PLAIN_EDGES, {"e1": mid + 1, "e2": mid + 2, "id": mid, "d1": start + i, "d2": start + i + 1,
                                   "now": now})
        con.execute(_PLAIN_JOURNAL, {"id": mid, "entry": f"3|{mid}|{mid}|{start + i}|||||"})
        con.execute("COMMIT")
        lat.append(time.perf_counter() - t0)
    return lat


def plain_profile(con: duckdb.DuckDBPyConnection, n: int, rng: random.Random, start: int) -> dict:
    """ms per transaction in each of the plain shape's statements (the twin of writes.py's profile)."""
    parts = {"BEGIN": 0.0, "INSERT memories": 0.0, "INSERT edges (2 rows)": 0.0, "INSERT journal": 0.0, "COMMIT": 0.0}
    for i in range(n):
        it = item(rng, start + i)
        mid = 10 * (start + i)
        now = datetime.utcnow()
        steps = [("BEGIN", "BEGIN", None),
                 ("INSERT memories", _PLAIN_MEMORY, {"id": mid, "content": it["content"], "now": now}),
                 ("INSERT edges (2 rows)", _PLAIN_EDGES, {"e1": mid + 1, "e2": mid + 2, "id": mid, "d1": 1, "d2": 2,
                                                          "now": now}),
                 ("INSERT journal", _PLAIN_JOURNAL, {"id": mid, "entry": f"3|{mid}|{mid}|1|||||"}),
                 ("COMMIT", "COMMIT", None)]
        for key, sql, params in steps:
            t0 = time.perf_counter()
            con.execute(sql, params) if params is not None else con.execute(sql)
            parts[key] += time.perf_counter() - t0
    return {"transactions": n, "ms_per_transaction": round(sum(parts.values()) / n * 1e3, 3),
            "by_statement": [{"statement": k, "ms": round(v / n * 1e3, 3)} for k, v in parts.items()]}


def journal_rows(db: Anatid) -> dict[str, int]:
    out = {}
    for table in ("anatid_graph_journal", "anatid_text_journal", "anatid_vector_journal", "anatid_memories"):
        out[table] = db.connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return out


def single_thread(folder: str, n: int, rounds: int) -> dict:
    db = Anatid.open(os.path.join(folder, "shape.anatid"), embedding_dim=DIM)
    con = duckdb.connect(os.path.join(folder, "plain.duckdb"))
    for statement in _PLAIN_SCHEMA.split(";"):
        if statement.strip():
            con.execute(statement)
    rng = random.Random(21)
    remember_round(db, 20, rng, 10**6)   # warm both: first statements plan and allocate
    plain_round(con, 20, rng, 10**6)
    before = journal_rows(db)
    ids, a_lat, p_lat, per_round = [], [], [], []
    for r in range(rounds):
        got, lat = remember_round(db, n, rng, r * n)
        plat = plain_round(con, n, rng, r * n)
        ids += got
        a_lat += lat
        p_lat += plat
        per_round.append({"remember_per_s": round(n / sum(lat), 1), "plain_per_s": round(n / sum(plat), 1)})
    after = journal_rows(db)
    import writes   # benchmark/writes.py's statement profile (a tracing cursor), same process
    profile = writes.statement_profile(db, n, rng, 5 * 10**6)
    plain_prof = plain_profile(con, n, rng, 5 * 10**6)
    # self-check: every acknowledged write is there, with each journal's rows
    found = db.connection.execute("SELECT count(DISTINCT memory_id) FROM anatid_memories "
                                  "WHERE list_contains($ids, memory_id)", {"ids": ids}).fetchone()[0]
    assert found == len(ids), (found, len(ids))
    grew = {t: after[t] - before[t] for t in after}
    assert grew["anatid_memories"] == len(ids) and grew["anatid_text_journal"] == len(ids), grew
    assert grew["anatid_vector_journal"] == len(ids) and grew["anatid_graph_journal"] == 2 * len(ids), grew
    plain_rows = con.execute("SELECT count(*) FROM memories").fetchone()[0]
    assert plain_rows == 20 + len(p_lat) + n, plain_rows
    stats = db._store.group.stats
    assert stats.grouped_calls == 0, "one thread: every remember is a group of one"
    db.close()
    con.close()
    a, p = summary(a_lat), summary(p_lat)
    return {"remember": a, "plain_same_shape": p, "ratio_per_s": round(a["per_s"] / p["per_s"], 3),
            "ratio_p50": round(p["p50_ms"] / a["p50_ms"], 3), "rounds": per_round, "journal_rows_grew": grew,
            "statement_profile_remember": profile, "statement_profile_plain": plain_prof}


def threaded(folder: str, threads: int, per_thread: int, leaders: int | None) -> dict:
    """leaders: groups written at once (None: grouping off, every call its own transaction)."""
    path = os.path.join(folder, f"threads-{threads}-{leaders}.anatid")
    db = Anatid.open(path, embedding_dim=DIM)
    db._store.group._leaders = 10**6 if leaders is None else leaders
    # every entity exists first: without grouping, two transactions creating the same entity
    # at once conflict (a retryable ConflictError), which would measure the retries
    db.remember_many([{"content": "warm", "entities": ENTITIES, "embedding": [0.1] * DIM}])
    acked: list[list[int]] = [[] for _ in range(threads)]
    lat: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(threads + 1)

    def writer(j: int) -> None:
        rng = random.Random(1000 + j)
        items = [item(rng, j * per_thread + i) for i in range(per_thread)]
        mine = []
        start.wait()
        for it in items:
            t0 = time.perf_counter()
            m = db.remember(it["content"], entities=it["entities"], embedding=it["embedding"])
            mine.append(time.perf_counter() - t0)
            acked[j].append(m.memory_id)
        with lock:
            lat.extend(mine)

    ts = [threading.Thread(target=writer, args=(j,)) for j in range(threads)]
    for t in ts:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    ids = [i for a in acked for i in a]
    found = db.connection.execute("SELECT count(DISTINCT memory_id) FROM anatid_memories "
                                  "WHERE list_contains($ids, memory_id)", {"ids": ids}).fetchone()[0]
    assert found == len(ids) == threads * per_thread, (found, len(ids))
    st = db._store.group.stats
    out = {"threads": threads, "grouping": leaders is not None, "leaders": leaders, "wall_s": wall, "_lat": lat, "acknowledged": len(ids), "per_s": round(len(ids) / wall, 1),
           "p50_ms": round(pct(lat, 0.5) * 1000, 2), "p95_ms": round(pct(lat, 0.95) * 1000, 2),
           "groups": st.groups - 1, "mean_group": round(len(ids) / max(1, st.groups - 1), 2),
           "largest_group": st.largest, "retried_alone": st.retried_alone}
    db.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=150, help="remembers (and plain transactions) per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--per-thread", type=int, default=None, help="remembers per writer thread (default: n)")
    ap.add_argument("--leaders", type=int, nargs="+", default=[2, 0],
                    help="group commit's LEADERS to measure (2: the default, two groups at once; 1: one at a time; 0: grouping off)")
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary folder on /tmp)")
    ap.add_argument("--out", default=str(HERE / "results" / "write_shape-smoke.json"))
    args = ap.parse_args()
    per_thread = args.per_thread or args.n
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        load = os.getloadavg()
        single = single_thread(folder, args.n, args.rounds)
        print(f"remember        {single['remember']}")
        print(f"plain same shape {single['plain_same_shape']}")
        print(f"ratio (remember / plain, per second) {single['ratio_per_s']}")
        for name in ("statement_profile_remember", "statement_profile_plain"):
            print(name, json.dumps(single[name]))
        # every mode once per round, the modes' order rotated round by round (the machine is
        # shared: a load change then hits each mode alike)
        runs: dict[tuple[int, int], list[dict]] = {}
        for r in range(args.rounds):
            for threads in (1, 2, 4, 8):
                order = args.leaders[r % len(args.leaders):] + args.leaders[:r % len(args.leaders)]
                for leaders in order:
                    row = threaded(folder, threads, max(10, per_thread // threads), leaders or None)
                    runs.setdefault((threads, leaders), []).append(row)
        groups = []
        for (threads, leaders), rows in sorted(runs.items()):
            lat = [x for row in rows for x in row["_lat"]]
            acked = sum(row["acknowledged"] for row in rows)
            calls_in_groups = sum(row["groups"] for row in rows)
            groups.append({"path": path_label(threads, leaders), "threads": threads, "leaders": leaders or None,
                           "grouping": bool(leaders),
                           "acknowledged": acked, "per_s": round(acked / sum(row["wall_s"] for row in rows), 1),
                           "per_s_by_round": [row["per_s"] for row in rows],
                           "p50_ms": round(pct(lat, 0.5) * 1000, 2), "p95_ms": round(pct(lat, 0.95) * 1000, 2),
                           "mean_group": round(acked / max(1, calls_in_groups), 2),
                           "largest_group": max(row["largest_group"] for row in rows),
                           "retried_alone": sum(row["retried_alone"] for row in rows)})
            print(groups[-1])
        load_after = os.getloadavg()
    res = {"command": "benchmark/write_shape.py", "args": vars(args), "anatid": anatid.__version__,
           "duckdb": duckdb.__version__, "python": platform.python_version(), "cpus": os.cpu_count(),
           "load_before": [round(x, 2) for x in load], "load_after": [round(x, 2) for x in load_after],
           "single_thread": single, "group_commit": groups,
           "targets": {"remember_vs_plain": 0.9, "four_threads_per_s": 1000}}
    Path(args.out).write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
