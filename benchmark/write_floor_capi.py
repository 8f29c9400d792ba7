"""The same floor as write_floor.py, without Python in the loop: DuckDB's own C API,
prepared statements bound and executed from C through ctypes.

    python benchmark/write_floor_capi.py                          # results/write_floor_capi-<duckdb version>.json
    python benchmark/write_floor_capi.py --dir /tmp --dir /dev/shm

write_floor.py shows that from Python a remember's eight one-row INSERTs and its COMMIT cost
what a remember costs. This asks whether a native write path could do much better: the
duckdb wheel's shared library exports DuckDB's C API (duckdb_open, duckdb_prepare,
duckdb_execute_prepared, ...), so the same tables (python/anatid/sql/*.sql) are written
through prepared statements that are prepared once and only bound and executed per row,
the cheapest way any client (an extension included) can append a row in SQL. Measured,
as medians of --reps repetitions interleaved round by round:

* BEGIN + one one-row INSERT into each of k of the 8 tables a remember appends to
  (k = 1, 2, 4, 8) + COMMIT, in a file on each --dir (tmpfs: no fsync cost);
* an autocommit one-row INSERT into a one-column table: the cheapest durable write there is.

Nothing of anatid is imported; the file is a plain DuckDB database.
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from write_floor import HERE, _filesystem, schema, write_result

VEC = "[" + ", ".join(["0.125"] * 64) + "]::FLOAT[]"
# The rows of write_floor.ROWS with positional parameters, and what each binds in order
# ("id": a fresh BIGINT, "text": a VARCHAR, "ts": a TIMESTAMP): the C API binds by position.
ROWS = [
    ("INSERT INTO anatid_memories VALUES ($1, 1, 1, $2, 'fact', 1.0, 1.0, NULL, $3, NULL, $3, NULL, NULL, NULL, NULL)",
     ("id", "text", "ts")),
    ("INSERT INTO anatid_edges VALUES ($1, 1, 'about', $1, 7, NULL, 1.0, $2, NULL, $2, NULL)", ("id", "ts")),
    ("INSERT INTO anatid_graph_journal (tenant_id, seq, op, entry) VALUES (1, $1, 3, $2)", ("id", "text")),
    (f"INSERT INTO anatid_embeddings VALUES ($1, 1, {VEC}, 1.0)", ("id",)),
    ("INSERT INTO anatid_vector_journal (tenant_id, memory_id, seq, vf, vt, norm, embedding) "
     f"VALUES (1, $1, $1, 0, 9223372036854775807, 1.0, {VEC})", ("id",)),
    ("INSERT INTO anatid_postings SELECT 1, $1, unnest(['a', 'b', 'c']), unnest([1, 2, 1])", ("id",)),
    ("INSERT INTO anatid_text_docs VALUES (1, $1, 4)", ("id",)),
    ("INSERT INTO anatid_text_journal (tenant_id, memory_id, seq, doc_len, vf, vt, postings) "
     "VALUES (1, $1, $1, 4, 0, 9223372036854775807, 'a:1 b:2 c:1')", ("id",)),
]
T0_US = 1767225600 * 10 ** 6  # 2026-01-01 in epoch microseconds


class _Timestamp(ctypes.Structure):
    _fields_ = [("micros", ctypes.c_int64)]


def c_api():
    """DuckDB's C API from the duckdb wheel's own shared library."""
    pkg = Path(duckdb.__file__).resolve().parent
    found = sorted(glob.glob(str(pkg.parent / "_duckdb*.so")) + glob.glob(str(pkg / "*.so")))
    lib = next((ctypes.CDLL(p) for p in found if hasattr(ctypes.CDLL(p), "duckdb_prepare")), None)
    if lib is None:
        raise SystemExit(f"no shared library exporting DuckDB's C API beside {pkg}")
    vp = ctypes.c_void_p
    for name, args in {"duckdb_open": [ctypes.c_char_p, ctypes.POINTER(vp)],
                       "duckdb_connect": [vp, ctypes.POINTER(vp)],
                       "duckdb_disconnect": [ctypes.POINTER(vp)], "duckdb_close": [ctypes.POINTER(vp)],
                       "duckdb_query": [vp, ctypes.c_char_p, vp], "duckdb_destroy_result": [vp],
                       "duckdb_prepare": [vp, ctypes.c_char_p, ctypes.POINTER(vp)],
                       "duckdb_nparams": [vp],
                       "duckdb_bind_int64": [vp, ctypes.c_uint64, ctypes.c_int64],
                       "duckdb_bind_varchar": [vp, ctypes.c_uint64, ctypes.c_char_p],
                       "duckdb_bind_timestamp": [vp, ctypes.c_uint64, _Timestamp],
                       "duckdb_execute_prepared": [vp, vp]}.items():
        getattr(lib, name).argtypes = args
    lib.duckdb_nparams.restype = ctypes.c_uint64
    return lib


class Native:
    """One database file and connection driven through the C API."""

    def __init__(self, lib, path: str) -> None:
        self.lib, self.db, self.con = lib, ctypes.c_void_p(), ctypes.c_void_p()
        self.result = ctypes.create_string_buffer(128)  # duckdb_result is smaller than this
        if lib.duckdb_open(path.encode(), ctypes.byref(self.db)) or lib.duckdb_connect(self.db, ctypes.byref(self.con)):
            raise SystemExit(f"cannot open {path} through the C API")
        self.prepared: dict[str, ctypes.c_void_p] = {}

    def query(self, sql: str) -> None:
        failed = self.lib.duckdb_query(self.con, sql.encode(), self.result)
        self.lib.duckdb_destroy_result(self.result)
        if failed:
            raise RuntimeError(f"C API query failed: {sql}")

    def execute(self, sql: str, binds: tuple[str, ...], row_id: int) -> None:
        stmt = self.prepared.get(sql)
        if stmt is None:
            stmt = ctypes.c_void_p()
            if self.lib.duckdb_prepare(self.con, sql.encode(), ctypes.byref(stmt)):
                raise RuntimeError(f"C API prepare failed: {sql}")
            if self.lib.duckdb_nparams(stmt) != len(binds):
                raise RuntimeError(f"{sql} takes {self.lib.duckdb_nparams(stmt)} parameters, not {len(binds)}")
            self.prepared[sql] = stmt
        for i, kind in enumerate(binds, start=1):
            if kind == "id":
                self.lib.duckdb_bind_int64(stmt, i, row_id)
            elif kind == "text":
                self.lib.duckdb_bind_varchar(stmt, i, b"note about things")
            else:
                self.lib.duckdb_bind_timestamp(stmt, i, _Timestamp(T0_US))
        failed = self.lib.duckdb_execute_prepared(stmt, self.result)
        self.lib.duckdb_destroy_result(self.result)
        if failed:
            raise RuntimeError(f"C API execute failed: {sql}")

    def close(self) -> None:
        self.lib.duckdb_disconnect(ctypes.byref(self.con))
        self.lib.duckdb_close(ctypes.byref(self.db))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--out", default=None)
    ap.add_argument("--dir", action="append", default=None)
    args = ap.parse_args()
    dirs = args.dir or [tempfile.gettempdir()]
    lib = c_api()
    natives, next_id = {}, [10 ** 15]
    for d in dirs:
        path = os.path.join(tempfile.mkdtemp(prefix="anatid-floor-capi-", dir=d), "floor.duckdb")
        with duckdb.connect(path) as con:  # the schema through Python, then closed: one owner at a time
            schema(con)
            con.execute("CREATE TABLE one_column (a BIGINT)")
        natives[d] = Native(lib, path)

    def new_id() -> int:
        next_id[0] += 1
        return next_id[0]

    def tables(n: Native, k: int) -> dict:
        t0 = time.perf_counter()
        n.query("BEGIN")
        for sql, binds in ROWS[:k]:
            n.execute(sql, binds, new_id())
        t1 = time.perf_counter()
        n.query("COMMIT")
        t2 = time.perf_counter()
        return {"total": t2 - t0, "commit": t2 - t1}

    def autocommit_one_column(n: Native) -> dict:
        t0 = time.perf_counter()
        n.execute("INSERT INTO one_column VALUES ($1)", ("id",), new_id())
        return {"total": time.perf_counter() - t0}

    measures = {f"tx_{k}_tables": (lambda n, k=k: tables(n, k)) for k in (1, 2, 4, 8)}
    measures["autocommit_insert_1_column"] = autocommit_one_column
    samples: dict[tuple[str, str], dict[str, list[float]]] = {}
    per, rounds = 4, max(1, args.reps // 4)
    for r in range(rounds + 2):  # the first two rounds warm up and are not recorded
        for d, n in natives.items():
            for name, fn in measures.items():
                for _ in range(per):
                    parts = fn(n)
                    if r >= 2:
                        bucket = samples.setdefault((name, d), {})
                        for part, s in parts.items():
                            bucket.setdefault(part, []).append(s)
    table = []
    for (name, d), parts in samples.items():
        row = {"measure": name, "dir": d, "filesystem": _filesystem(d), "n": len(parts["total"])}
        for part, vals in parts.items():
            row[f"{part}_p50_ms"] = round(statistics.median(vals) * 1e3, 3)
        row["per_s_at_p50"] = round(1 / statistics.median(parts["total"]), 1)
        table.append(row)
    threads = duckdb.connect().execute("SELECT current_setting('threads')").fetchone()[0]
    result = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "duckdb": duckdb.__version__,
                          "load_avg": os.getloadavg(), "default_threads": int(threads)},
              "path": "DuckDB C API through ctypes: prepared once, bound and executed per row",
              "dirs": dirs, "rows": table}
    for n in natives.values():
        n.close()
    write_result(result, args, dirs, "write_floor_capi")


if __name__ == "__main__":
    main()
