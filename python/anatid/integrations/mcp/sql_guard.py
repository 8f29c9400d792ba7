"""The `sql` tool: read-only SQL over the memory file, enforced by DuckDB, not by a regex.

Three layers, each sufficient against the attacks the others are meant to stop:

1. **Classify.** DuckDB's own parser splits the text (`extract_statements`) and names each
   statement's type. Exactly one statement is accepted, and it must be a SELECT, or an
   EXPLAIN / EXPLAIN ANALYZE whose remainder is itself a single SELECT (EXPLAIN ANALYZE runs
   its statement, so `EXPLAIN ANALYZE DELETE ...` would write).
2. **Scan the parse tree.** `json_serialize_sql` gives DuckDB's parse of that exact text.
   Table functions must be on a short allowlist (no `read_csv`, `glob`, `query`, ...),
   scalar functions that reach outside the database are refused, and a base table must be a
   plain identifier naming a table, view or CTE that exists: DuckDB's replacement scan would
   otherwise turn `FROM '/etc/passwd.csv'` or `FROM "https://..."` into a file or network
   read. Anything the serializer cannot handle is refused.
3. **Execute read-only.** The statement runs on a private cursor inside
   `BEGIN TRANSACTION READ ONLY`, which is always rolled back, with a row cap and a timeout
   (`interrupt()` from a timer).

Underneath all three, `harden()` turns DuckDB's `enable_external_access` off for the whole
database instance of the server; DuckDB accepts that at run time and refuses to turn it back
on, so no file, network or extension access survives even a bug in the layers above.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

import duckdb

from ...errors import AnatidError, ValidationError
from .wire import is_id_key, to_wire

DEFAULT_MAX_ROWS = 1000
DEFAULT_TIMEOUT_S = 10.0

_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)

# Table functions that read only values or the catalog. Everything else (read_csv, glob,
# read_text, query, query_table, sniff_csv, checkpoint, pragma_*, duckdb_secrets...) is refused.
ALLOWED_TABLE_FUNCTIONS = frozenset({
    "range", "generate_series", "unnest", "json_each", "json_tree",
    "duckdb_tables", "duckdb_views", "duckdb_columns", "duckdb_constraints", "duckdb_indexes",
    "duckdb_schemas", "duckdb_types",
})

# Scalar functions that look outside the database, leak its configuration, or write state.
DENIED_FUNCTIONS = frozenset({
    "getenv", "current_setting", "which_secret", "nextval", "currval", "setseed",
    "read_text", "read_blob", "query", "query_table", "json_serialize_sql", "json_execute_serialized_sql",
})

# Table reference types that carry no file or network access by themselves; their children
# are scanned like everything else. An unknown type is refused.
SAFE_TABLE_REFS = frozenset({"SUBQUERY", "JOIN", "EXPRESSION_LIST", "EMPTY", "EMPTY_FROM", "PIVOT"})
# Query nodes that only read. A CTE can hold a DELETE/UPDATE/INSERT node whose statement
# still classifies as SELECT, so every node in the tree is checked.
READ_QUERY_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "CTE_NODE", "RECURSIVE_CTE_NODE"})
SHOW_SPECIALS = frozenset({'"tables"', '"databases"', "tables", "databases"})


class SqlRefused(ValidationError):
    """The `sql` tool refused a query before running it."""

    def __init__(self, problem: str):
        super().__init__("query", problem, "one read-only SELECT or EXPLAIN over this file's tables")


class SqlTimeout(AnatidError):
    """The query ran past the tool's timeout and was interrupted."""


@dataclass(frozen=True)
class SqlResult:
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    statement_type: str

    def to_wire(self) -> dict:
        rows = [[to_wire(v, as_id=is_id_key(c)) for c, v in zip(self.columns, r)] for r in self.rows]
        return {"columns": self.columns, "rows": rows, "row_count": len(rows),
                "truncated": self.truncated, "statement_type": self.statement_type}


def harden(con: duckdb.DuckDBPyConnection) -> None:
    """Turn external access off for the instance behind `con` (one-way, instance-wide)."""
    con.execute("SET enable_external_access = false")
    if con.execute("SELECT current_setting('enable_external_access')").fetchone()[0] not in (False, "false"):
        raise AnatidError("could not turn DuckDB's enable_external_access off; refusing to enable the sql tool")


# -- layer 1: DuckDB's statement classifier ------------------------------------------------------
def _statement_type(stmt) -> str:
    return getattr(stmt.type, "name", str(stmt.type).rsplit(".", 1)[-1]).upper()


def _explained(con, text: str) -> str:
    """The statement an EXPLAIN [ANALYZE] wraps, found with DuckDB's tokenizer."""
    tokens = duckdb.tokenize(text)
    words = []
    for i, (pos, kind) in enumerate(tokens):
        end = tokens[i + 1][0] if i + 1 < len(tokens) else len(text)
        if "comment" not in str(kind):
            words.append((pos, text[pos:end].strip()))
    if not words or words[0][1].lower() != "explain":
        raise SqlRefused("is an EXPLAIN in a form this tool does not accept")
    rest = words[1:]
    if rest and rest[0][1].lower() in ("analyze", "analyse"):
        rest = rest[1:]
    if not rest:
        raise SqlRefused("EXPLAIN names no statement")
    inner = text[rest[0][0]:]
    try:
        inner_stmts = con.extract_statements(inner)
    except duckdb.Error as exc:
        raise SqlRefused(f"EXPLAIN may only wrap one SELECT; the rest does not parse: {exc}") from None
    if len(inner_stmts) != 1 or _statement_type(inner_stmts[0]) != "SELECT":
        kinds = ", ".join(_statement_type(s) for s in inner_stmts) or "nothing"
        raise SqlRefused(f"EXPLAIN may only wrap one SELECT, not {kinds}")
    return inner


def classify(con, text: str) -> tuple[str, str, str]:
    """(statement text to run, SELECT text to scan, statement type), or SqlRefused."""
    if not isinstance(text, str) or not text.strip():
        raise SqlRefused("is empty")
    if "\x00" in text:
        raise SqlRefused("contains a NUL character")
    try:
        stmts = con.extract_statements(text)
    except duckdb.Error as exc:
        raise SqlRefused(f"does not parse: {exc}") from None
    if not stmts:
        raise SqlRefused("contains no statement")
    kinds = [_statement_type(s) for s in stmts]
    for k in kinds:
        if k not in ("SELECT", "EXPLAIN"):
            raise SqlRefused(f"contains a {k} statement; only SELECT and EXPLAIN are allowed")
    if len(stmts) != 1:
        raise SqlRefused(f"contains {len(stmts)} statements; send one per call")
    run = stmts[0].query
    scan = _explained(con, run) if kinds[0] == "EXPLAIN" else run
    return run, scan, kinds[0]


# -- layer 2: the parse tree ---------------------------------------------------------------------
def parse_tree(con, text: str) -> dict:
    try:
        raw = con.execute("SELECT json_serialize_sql($q::VARCHAR)", {"q": text}).fetchone()[0]
    except duckdb.Error as exc:
        raise SqlRefused(f"does not parse: {exc}") from None
    tree = json.loads(raw)
    if tree.get("error"):
        raise SqlRefused(f"does not parse as a SELECT: {tree.get('error_message', 'unknown error')}")
    if len(tree.get("statements", ())) != 1:
        raise SqlRefused("does not parse as exactly one SELECT")
    return tree


def _plain(name: str, what: str) -> None:
    if name and not _PLAIN_IDENTIFIER.fullmatch(name):
        raise SqlRefused(f"{what} {name!r} is not a plain identifier (letters, digits, underscore)")


def _cte_names(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        cte_map = node.get("cte_map")
        if isinstance(cte_map, dict):
            for entry in cte_map.get("map", ()):
                out.add(str(entry.get("key", "")).lower())
        for v in node.values():
            _cte_names(v, out)
    elif isinstance(node, list):
        for v in node:
            _cte_names(v, out)
    return out


def _relations(con) -> set[str]:
    rows = con.execute("SELECT table_name FROM duckdb_tables() UNION ALL "
                       "SELECT view_name FROM duckdb_views()").fetchall()
    return {r[0].lower() for r in rows}


def _function_name(node: dict) -> str:
    name = str(node.get("function_name", ""))
    _plain(name, "function")
    _plain(str(node.get("schema", "") or ""), "schema of function")
    _plain(str(node.get("catalog", "") or ""), "catalog of function")
    return name.lower()


def _scan(node: Any, known: set[str]) -> None:
    if isinstance(node, list):
        for v in node:
            _scan(v, known)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if "modifiers" in node and "cte_map" in node and kind not in READ_QUERY_NODES:
        raise SqlRefused(f"contains a {kind} inside the query; only reads are allowed")
    is_table_ref = "sample" in node and "alias" in node and "class" not in node and "modifiers" not in node
    if is_table_ref:
        if kind == "BASE_TABLE":
            for part in ("catalog_name", "schema_name", "table_name"):
                _plain(str(node.get(part, "") or ""), part.replace("_name", ""))
            if node.get("at_clause") is not None:
                raise SqlRefused("uses an AT clause")
            table = str(node.get("table_name", "")).lower()
            if table not in known:
                raise SqlRefused(f"table {node.get('table_name')!r} does not exist in this file")
        elif kind == "TABLE_FUNCTION":
            fn = node.get("function") or {}
            name = _function_name(fn)
            if name not in ALLOWED_TABLE_FUNCTIONS:
                raise SqlRefused(f"table function {name!r} is not allowed "
                                 f"(allowed: {', '.join(sorted(ALLOWED_TABLE_FUNCTIONS))})")
        elif kind == "SHOW_REF":
            if node.get("query") is None and str(node.get("table_name", "")).lower() not in SHOW_SPECIALS:
                raise SqlRefused(f"SHOW of {node.get('table_name')!r} is not allowed")
        elif kind not in SAFE_TABLE_REFS:
            raise SqlRefused(f"table reference of type {kind!r} is not allowed")
    elif node.get("class") == "FUNCTION":
        name = _function_name(node)
        if name in DENIED_FUNCTIONS:
            raise SqlRefused(f"function {name!r} is not allowed")
    for v in node.values():
        _scan(v, known)


def check(con, text: str) -> tuple[str, str]:
    """Layers 1 and 2: (statement text to run, statement type), or SqlRefused."""
    run, scan, kind = classify(con, text)
    tree = parse_tree(con, scan)
    _scan(tree["statements"], _relations(con) | _cte_names(tree, set()))
    return run, kind


# -- layer 3: a read-only transaction that is always rolled back ---------------------------------
def run_sql(con, text: str, *, max_rows: int = DEFAULT_MAX_ROWS, timeout_s: float = DEFAULT_TIMEOUT_S) -> SqlResult:
    """Check `text` (layers 1 and 2) and run it read-only (layer 3)."""
    statement, kind = check(con, text)
    return execute_read_only(con, statement, kind, max_rows=max_rows, timeout_s=timeout_s)


def execute_read_only(con, statement: str, kind: str = "SELECT", *, max_rows: int = DEFAULT_MAX_ROWS,
                      timeout_s: float = DEFAULT_TIMEOUT_S) -> SqlResult:
    """Layer 3 alone: a private cursor, BEGIN TRANSACTION READ ONLY, always rolled back."""
    cur = con.cursor()
    try:
        cur.execute("BEGIN TRANSACTION READ ONLY")
        timer = threading.Timer(timeout_s, cur.interrupt)
        timer.daemon = True
        timer.start()
        try:
            cur.execute(statement)
            columns = [d[0] for d in (cur.description or ())]
            rows = cur.fetchmany(max_rows + 1) if columns else []
        except duckdb.InterruptException:
            raise SqlTimeout(f"query: interrupted after the {timeout_s:g} s timeout; narrow it or add a LIMIT") from None
        except duckdb.Error as exc:
            raise SqlRefused(f"failed in DuckDB: {exc}") from None
        finally:
            timer.cancel()
        return SqlResult(columns, [list(r) for r in rows[:max_rows]], len(rows) > max_rows, kind)
    finally:
        try:
            cur.execute("ROLLBACK")
        except duckdb.Error:
            pass  # the transaction is already gone
        cur.close()
