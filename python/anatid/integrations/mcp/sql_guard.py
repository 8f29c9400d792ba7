"""The `sql` tool: read-only SQL over the memory file, enforced by DuckDB, not by a regex.

Three layers, each sufficient against the attacks the others are meant to stop:

1. **Classify.** DuckDB's own parser splits the text (`extract_statements`) and names each
   statement's type. Exactly one statement is accepted, and it must be a SELECT, or an
   EXPLAIN / EXPLAIN ANALYZE whose remainder is itself a single SELECT (EXPLAIN ANALYZE runs
   its statement, so `EXPLAIN ANALYZE DELETE ...` would write).
2. **Scan the parse tree against allowlists** (`sql_allow`). `system.main.json_serialize_sql`
   gives DuckDB's parse of that exact text, and every node must be on a list: each function
   and operator (read-only scalars, aggregates, window functions; no `anatid_*` native but
   `anatid_version`, nothing that reports settings, the session or the process), each table
   function (`range`, `generate_series`, `unnest`, `json_each`, `json_tree`), each relation
   (this file's own `anatid_*` tables, CTEs, `information_schema.tables`/`columns`;
   never `duckdb_*`, `pg_*`, `pragma_*` or `sqlite_*`, which show paths and settings), each
   expression class, operator type, query node and table reference type. A name that is not
   a plain identifier is refused, which stops DuckDB's replacement scans of `FROM
   '/etc/passwd.csv'` or `FROM "https://..."`; a function the file redefines with a macro is
   refused; a parse-tree node the scan does not recognise is refused rather than guessed at.
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
from . import sql_allow as allow
from .wire import is_id_key, to_wire

DEFAULT_MAX_ROWS = 1000
DEFAULT_TIMEOUT_S = 10.0

_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


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
    setting = con.execute("SELECT system.main.current_setting('enable_external_access')").fetchone()[0]
    if setting not in (False, "false"):
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
        raw = con.execute("SELECT system.main.json_serialize_sql($q::VARCHAR)", {"q": text}).fetchone()[0]
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


# The guard's own catalog reads name DuckDB's built-ins by their full path (system.main.*) and
# call no other function: a macro in the file named `lower`, `current_database`,
# `duckdb_tables` or `json_serialize_sql` shadows an unqualified built-in, and would otherwise
# rewrite what the guard sees.
_RELATIONS = """
SELECT table_name, database_name, schema_name, temporary, internal, false FROM system.main.duckdb_tables()
UNION ALL
SELECT view_name, database_name, schema_name, temporary, internal, true FROM system.main.duckdb_views()"""
_SHADOWED = "SELECT function_name FROM system.main.duckdb_functions() WHERE NOT internal"
_DATABASE = "SELECT system.main.current_database()"


@dataclass(frozen=True)
class Catalog:
    """What the scan checks names against, read from the connection just before the scan."""
    own: frozenset[str]
    others: frozenset[str]
    shadowed: frozenset[str]
    database: str
    views: frozenset[str] = frozenset()   # views not DuckDB's own, named in refusals

    @classmethod
    def of(cls, con) -> "Catalog":
        database = str(con.execute(_DATABASE).fetchone()[0]).lower()
        own, others, views = set(), set(), set()
        for name, db, schema, temporary, internal, is_view in con.execute(_RELATIONS).fetchall():
            name = str(name).lower()
            # This file's own anatid_* tables: the default database's main schema. Not views:
            # anatid creates none, and a view's body would run calls the scan never sees.
            is_own = (str(db).lower() == database and schema == "main" and not temporary and not internal
                      and not is_view and name.startswith(allow.RELATION_PREFIX))
            (own if is_own else others).add(name)
            if is_view and not internal:
                views.add(name)
        shadowed = frozenset(str(r[0]).lower() for r in con.execute(_SHADOWED).fetchall())
        return cls(frozenset(own), frozenset(others - own), shadowed, database, frozenset(views - own))


def _cte_names(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        cte_map = node.get("cte_map")
        if isinstance(cte_map, dict):
            for entry in cte_map.get("map", ()):
                out.add(str(entry.get("key", "")))
        for v in node.values():
            _cte_names(v, out)
    elif isinstance(node, list):
        for v in node:
            _cte_names(v, out)
    return out


def _path(node: dict) -> list[str] | None:
    qualified = node.get("qualified_name")
    if isinstance(qualified, dict) and isinstance(qualified.get("path"), list):
        return [str(p) for p in qualified["path"]]
    return None  # DuckDB 1.x serializes no qualified_name


class _Scan:
    """One walk over the parse tree; raises SqlRefused at the first thing not on an allowlist."""

    def __init__(self, catalog: Catalog, tree: dict):
        self.catalog = catalog
        self.ctes = set()
        for name in _cte_names(tree, set()):
            _plain(name, "CTE name")
            # A CTE named like a system view would make `FROM pg_settings` ambiguous between
            # scopes; a name that is no other relation can only ever mean the CTE.
            if name.lower() in catalog.others:
                raise SqlRefused(f"CTE name {name!r} is also a DuckDB catalog relation; rename the CTE")
            self.ctes.add(name.lower())

    def walk(self, node: Any) -> None:
        if isinstance(node, list):
            for v in node:
                self.walk(v)
        elif isinstance(node, dict):
            if "class" in node:
                self.expression(node)
            elif ("modifiers" in node and "cte_map" in node) or str(node.get("type", "")).endswith("_NODE"):
                kind = node.get("type")
                if kind not in allow.QUERY_NODES:
                    raise SqlRefused(f"contains a {kind} inside the query; only reads are allowed")
                self.children(node)
            elif "sample" in node and "alias" in node:
                self.table_ref(node)
            elif "function_name" in node or "table_name" in node:
                raise SqlRefused(f"contains a parse-tree node this tool does not understand "
                                 f"({node.get('type')!r}); it is refused rather than guessed at")
            else:
                self.children(node)

    def children(self, node: dict, skip: tuple[str, ...] = ()) -> None:
        for key, v in node.items():
            if key not in skip:
                self.walk(v)

    def expression(self, node: dict) -> None:
        cls, kind = node.get("class"), node.get("type")
        if cls not in allow.EXPRESSION_CLASSES:
            raise SqlRefused(f"contains an expression of class {cls!r}, which this tool does not accept")
        if cls in ("FUNCTION", "WINDOW"):
            self.function(node, allow.FUNCTIONS, "function")
            if node.get("export_state"):
                raise SqlRefused(f"exports the state of aggregate {node.get('function_name')!r}")
        elif cls == "OPERATOR" and kind not in allow.OPERATOR_TYPES:
            raise SqlRefused(f"contains the operator {kind!r}, which this tool does not accept")
        self.children(node)

    def function(self, node: dict, allowed: frozenset[str], what: str) -> None:
        name = str(node.get("function_name", ""))
        low = name.lower()
        path = _path(node)
        if path is not None and (not path or path[-1].lower() != low):
            raise SqlRefused(f"{what} {name!r} is named inconsistently in the parse tree ({path})")
        # Method-call syntax (`content.upper()`) puts a column name where the schema goes.
        _plain(str(node.get("schema", "") or ""), f"qualifier of {what} {name!r}")
        _plain(str(node.get("catalog", "") or ""), f"qualifier of {what} {name!r}")
        if low.startswith(allow.RELATION_PREFIX) and low not in allow.ANATID_ALLOWED:
            raise SqlRefused(f"{what} {name!r} is an anatid native function: it loads, builds or reports "
                             "process-wide state, which the sql tool never touches; the other tools answer "
                             "through it")
        if low not in allowed:
            listed = (f"allowed: {', '.join(sorted(allowed))}" if len(allowed) < 20 else
                      "docs/mcp.md lists the read-only scalar, aggregate and window functions and operators")
            raise SqlRefused(f"{what} {name!r} is not on the sql tool's allowlist ({listed})")
        if low in self.catalog.shadowed:
            raise SqlRefused(f"{what} {name!r} is redefined by a macro or function outside DuckDB's built-ins; "
                             "the sql tool only calls the built-in")

    def table_ref(self, node: dict) -> None:
        kind = node.get("type")
        if kind not in allow.TABLE_REFS:
            raise SqlRefused(f"table reference of type {kind!r} is not allowed")
        if kind == "BASE_TABLE":
            self.relation(node)
            return
        if kind == "TABLE_FUNCTION":
            fn = node.get("function") or {}
            if fn.get("class") != "FUNCTION":
                raise SqlRefused("a table function this tool does not understand")
            self.function(fn, allow.TABLE_FUNCTIONS, "table function")
            self.children(fn, skip=("class",))
            self.children(node, skip=("function",))
            return
        if kind == "SHOW_REF" and node.get("query") is None \
                and str(node.get("table_name", "")).lower() not in allow.SHOW_SPECIALS:
            raise SqlRefused(f"SHOW of {node.get('table_name')!r} is not allowed")
        self.children(node)

    def relation(self, node: dict) -> None:
        parts = [str(node.get(k, "") or "") for k in ("catalog_name", "schema_name", "table_name")]
        for part, what in zip(parts, ("catalog", "schema", "table")):
            _plain(part, what)
        catalog, schema, table = (p.lower() for p in parts)
        name = ".".join(p for p in parts if p)
        path = _path(node)
        if path is not None and [p.lower() for p in path] != [p for p in (catalog, schema, table) if p]:
            raise SqlRefused(f"table {name!r} is named inconsistently in the parse tree ({path})")
        if node.get("at_clause") is not None:
            raise SqlRefused("uses an AT clause")
        if schema == "information_schema" and not catalog:
            if table in allow.INFORMATION_SCHEMA:
                return
            listed = ", ".join(f"information_schema.{t}" for t in sorted(allow.INFORMATION_SCHEMA))
            raise SqlRefused(f"information_schema.{table} is not allowed (allowed: {listed})")
        if catalog in ("", self.catalog.database) and schema in ("", "main"):
            if table in self.catalog.own or (not catalog and not schema and table in self.ctes):
                return
        if table in self.catalog.views:
            raise SqlRefused(f"relation {name!r} is a view: a view's body runs calls this scan never sees; the sql "
                             f"tool reads this file's {allow.RELATION_PREFIX}* tables, CTEs and "
                             "information_schema.tables/columns")
        if table in self.catalog.others:
            raise SqlRefused(f"relation {name!r} is a DuckDB catalog or system relation (they show paths and "
                             f"settings); the sql tool reads this file's {allow.RELATION_PREFIX}* tables, "
                             "CTEs and information_schema.tables/columns")
        raise SqlRefused(f"table {name!r} does not exist in this file (the sql tool reads this file's "
                         f"{allow.RELATION_PREFIX}* tables, CTEs and information_schema.tables/columns)")


def check(con, text: str) -> tuple[str, str]:
    """Layers 1 and 2: (statement text to run, statement type), or SqlRefused."""
    run, scan, kind = classify(con, text)
    tree = parse_tree(con, scan)
    _Scan(Catalog.of(con), tree).walk(tree["statements"])
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
