"""The floor under one-transaction-per-remember writes: what DuckDB charges from Python
for a statement and for a commit, whatever anatid does.

    python benchmark/write_floor.py                 # writes results/write_floor-<duckdb version>.json
    python benchmark/write_floor.py --reps 200      # fewer repetitions
    python benchmark/write_floor.py --dir /tmp --dir /dev/shm   # disk and tmpfs, interleaved

Needs only duckdb (no anatid import), so it runs unchanged in a throwaway venv with
another DuckDB version. The tables are anatid's own (python/anatid/sql/*.sql) in a file
on disk, so every commit writes and fsyncs the WAL as a remember's does. Measured, each
as the median of --reps repetitions, every variant interleaved round by round in one
process (the machine is shared: compare within a run, not across runs):

* `SELECT 1`, and a one-row INSERT into anatid_memories (15 columns) with bound
  parameters and with literal values, inside an open transaction: the per-statement cost;
* BEGIN + that INSERT + COMMIT: the cheapest possible single-table remember;
* BEGIN + one one-row INSERT into each of k of the 8 tables a remember appends to
  (k = 1, 2, 4, 8) + COMMIT: total and commit time by the number of tables touched;
* all of it with the default thread count and with SET threads = 1 (a global setting:
  it would also slow every concurrent read, so anatid does not set it);
* with --dir given more than once, all of it once per folder, one file and connection
  each, interleaved round by round: /dev/shm is tmpfs, where fsync costs nothing, so
  what is left there is DuckDB's own statement and commit work, not the disk.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
SQL = HERE.parent / "python" / "anatid" / "sql"

T0 = datetime(2026, 1, 1)
# One row of each table a remember appends to, in the order remember writes them.
ROWS = [
    ("anatid_memories",
     "INSERT INTO anatid_memories VALUES ($id, 1, 1, $c, 'fact', 1.0, 1.0, NULL, $t, NULL, $t, NULL, NULL, NULL, NULL)"),
    ("anatid_edges", "INSERT INTO anatid_edges VALUES ($id, 1, 'about', $id, 7, NULL, 1.0, $t, NULL, $t, NULL)"),
    ("anatid_graph_journal", "INSERT INTO anatid_graph_journal (tenant_id, seq, op, entry) VALUES (1, $id, 3, $c)"),
    ("anatid_embeddings", "INSERT INTO anatid_embeddings VALUES ($id, 1, $v::FLOAT[], 1.0)"),
    ("anatid_vector_journal",
     "INSERT INTO anatid_vector_journal (tenant_id, memory_id, seq, vf, vt, norm, embedding) "
     "VALUES (1, $id, $id, 0, 9223372036854775807, 1.0, $v::FLOAT[])"),
    ("anatid_postings", "INSERT INTO anatid_postings SELECT 1, $id, unnest(['a', 'b', 'c']), unnest([1, 2, 1])"),
    ("anatid_text_docs", "INSERT INTO anatid_text_docs VALUES (1, $id, 4)"),
    ("anatid_text_journal",
     "INSERT INTO anatid_text_journal (tenant_id, memory_id, seq, doc_len, vf, vt, postings) "
     "VALUES (1, $id, $id, 4, 0, 9223372036854775807, 'a:1 b:2 c:1')"),
]
LITERAL = ("INSERT INTO anatid_memories VALUES ({id}, 1, 1, 'note about things', 'fact', 1.0, 1.0, NULL, "
           "TIMESTAMP '2026-01-01', NULL, TIMESTAMP '2026-01-01', NULL, NULL, NULL, NULL)")


def schema(con) -> None:
    for name in ("schema_v1.sql", "derived_graph.sql", "derived_text.sql", "derived_vector.sql"):
        code = "\n".join(line.split("--", 1)[0] for line in (SQL / name).read_text().splitlines())
        for stmt in code.split(";"):
            if "CREATE TABLE" in stmt.upper():
                con.execute(stmt)


class Ids:
    def __init__(self) -> None:
        self.n = 10 ** 15

    def __call__(self) -> int:
        self.n += 1
        return self.n


def params(sql: str, ids: Ids) -> dict:
    p = {"id": ids()}
    if "$c" in sql:
        p["c"] = "3|1|2|7|0||4:ada|4:fact" if "journal" in sql else "note about things"
    if "$t" in sql:
        p["t"] = T0
    if "$v" in sql:
        p["v"] = [0.125] * 64
    return p


def variants(con, ids: Ids) -> dict:
    """name -> a callable doing one repetition and returning {part: seconds}."""
    def timed(fn):
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    def in_tx(stmt):
        def run():
            con.execute("BEGIN")
            t = timed(stmt)
            con.execute("COMMIT")
            return {"statement": t}
        return run

    mem_sql = ROWS[0][1]
    out = {
        "select_1": in_tx(lambda: con.execute("SELECT 1").fetchall()),
        "insert_15_cols_bound": in_tx(lambda: con.execute(mem_sql, params(mem_sql, ids))),
        "insert_15_cols_literal": in_tx(lambda: con.execute(LITERAL.format(id=ids()))),
    }

    def tables(k):
        def run():
            t0 = time.perf_counter()
            con.execute("BEGIN")
            for _, sql in ROWS[:k]:
                con.execute(sql, params(sql, ids))
            t1 = time.perf_counter()
            con.execute("COMMIT")
            t2 = time.perf_counter()
            return {"total": t2 - t0, "commit": t2 - t1}
        return run

    for k in (1, 2, 4, 8):
        out[f"tx_{k}_tables"] = tables(k)
    return out


def _filesystem(folder: str) -> str | None:
    """The type of the file system holding `folder` (Linux /proc/mounts), e.g. tmpfs."""
    try:
        mounts = [line.split()[1:3] for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return None
    real = os.path.realpath(folder)
    best = max((m for m in mounts if real == m[0] or real.startswith(m[0].rstrip("/") + "/")),
               key=lambda m: len(m[0]), default=None)
    return best[1] if best else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--out", default=None)
    ap.add_argument("--dir", action="append", default=None,
                    help="folder for the database file (default: the system's temporary folder); "
                         "give it more than once to measure each folder, interleaved")
    args = ap.parse_args()
    dirs = args.dir or [tempfile.gettempdir()]
    cons, runs = {}, {}
    ids = Ids()
    for d in dirs:
        folder = tempfile.mkdtemp(prefix="anatid-floor-", dir=d)
        cons[d] = duckdb.connect(os.path.join(folder, "floor.duckdb"))
        schema(cons[d])
        runs[d] = variants(cons[d], ids)
    default_threads = cons[dirs[0]].execute("SELECT current_setting('threads')").fetchone()[0]
    samples: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    per = 4  # repetitions in a row; short runs, many rounds: every setting sees the same load
    rounds = max(1, args.reps // per)
    for d in dirs:
        for _ in range(2):  # warm-up round, not recorded
            for fn in runs[d].values():
                fn()
    for r in range(rounds):
        for threads in (default_threads, 1):
            for d in dirs:
                cons[d].execute(f"SET threads = {int(threads)}")
                for name, fn in runs[d].items():
                    bucket = samples.setdefault((name, f"threads={threads}", d), {})
                    for _ in range(per):
                        for part, s in fn().items():
                            bucket.setdefault(part, []).append(s)
    table = []
    for (name, threads, d), parts in samples.items():
        row = {"measure": name, "threads": threads, "dir": d, "filesystem": _filesystem(d),
               "n": len(next(iter(parts.values())))}
        for part, vals in parts.items():
            row[f"{part}_p50_ms"] = round(statistics.median(vals) * 1e3, 3)
        if "total" in parts:
            row["per_s_at_p50"] = round(1 / statistics.median(parts["total"]), 1)
        table.append(row)
    result = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "duckdb": duckdb.__version__, "load_avg": os.getloadavg(),
                          "default_threads": int(default_threads)},
              "dirs": dirs, "rows": table}
    for con in cons.values():
        con.close()
    write_result(result, args, dirs, "write_floor")


def write_result(result: dict, args, dirs: list[str], stem: str) -> None:
    """results/<stem>-<duckdb version>[-<dir names>].json (or --out), and each row on stdout."""
    suffix = "" if args.dir is None else "-" + "-".join(Path(d).name or "root" for d in dirs)
    out = Path(args.out) if args.out else HERE / "results" / f"{stem}-{duckdb.__version__}{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    for row in result["rows"]:
        print(json.dumps(row))
    print(f"load average {os.getloadavg()}, written to {out}")


if __name__ == "__main__":
    main()
