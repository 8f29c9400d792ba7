"""`anatid sql DB "SELECT ..."`: one read-only query over the whole file.

Three things keep it read-only: the file is opened with read_only=True (so
the write lock is not taken and a running writer is not disturbed), DuckDB's
own statement classifier must call the text a single SELECT or EXPLAIN, and
the query runs inside `BEGIN TRANSACTION READ ONLY`, which is rolled back.
"""
from __future__ import annotations

import sys

import duckdb

from ._render import table
from .contract import EXIT_OK, CliError, UsageError, add_json, open_db, print_json

ALLOWED = ("SELECT", "EXPLAIN")


def register(sub) -> None:
    p = sub.add_parser("sql", help="run one read-only SELECT over the file (every tenant is visible)")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("query", nargs="?", default="-", help="a SELECT or EXPLAIN statement; '-' or omitted reads stdin")
    add_json(p)                  # rows as a JSON list of objects
    p.add_argument("--max-width", type=int, default=60, help="truncate table cells to this width (default 60)")
    p.set_defaults(run=run)


def classify(con, text: str) -> str | None:
    """None if `text` is one SELECT/EXPLAIN statement, else why it is refused."""
    try:
        statements = con.extract_statements(text)
    except duckdb.Error as exc:
        return f"cannot parse the query: {str(exc).splitlines()[0]}"
    if len(statements) != 1:
        return f"expected exactly one statement, got {len(statements)}"
    kind = statements[0].type.name
    if kind not in ALLOWED:
        return f"refused a {kind} statement: anatid sql runs only SELECT and EXPLAIN (the file is opened read-only)"
    return None


def run(args) -> int:
    if args.max_width < 1:
        raise UsageError(f"--max-width {args.max_width}: must be 1 or more", "e.g. --max-width 60")
    with open_db(args.db, read_only=True) as db:     # before stdin: a missing file does not wait for input
        text = sys.stdin.read() if args.query == "-" else args.query
        cur = db.connection
        refused = classify(cur, text)
        if refused:
            raise UsageError(refused)
        cur.execute("BEGIN TRANSACTION READ ONLY")
        try:
            cur.execute(text)
            headers = [d[0] for d in cur.description or []]
            rows = cur.fetchall() if headers else []
        except duckdb.Error as exc:
            raise CliError(str(exc).strip().splitlines()[0]) from None
        finally:
            cur.execute("ROLLBACK")
    if args.json:
        print_json([dict(zip(headers, row)) for row in rows])
    else:
        print(table(headers, [list(r) for r in rows], max_width=args.max_width))
        print(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return EXIT_OK
