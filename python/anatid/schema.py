"""Create, check and migrate the tables of an anatid file."""
from __future__ import annotations

import os
from importlib import resources
from typing import Callable

import duckdb

from .errors import SchemaVersionError

SCHEMA_VERSION = 1

# version -> function migrating a file from (version - 1) to version, run in
# one transaction. Version 1 is created from scratch, so nothing here yet.
MIGRATIONS: dict[int, Callable[[duckdb.DuckDBPyConnection], None]] = {}

CANONICAL_TABLES = (
    "anatid_meta", "anatid_entities", "anatid_memories", "anatid_edges",
    "anatid_episodes", "anatid_evidence", "anatid_embeddings", "anatid_audit",
)
DERIVED_TABLES = ("anatid_postings", "anatid_text_docs")


def sql_text(name: str) -> str:
    return resources.files("anatid").joinpath("sql", name).read_text(encoding="utf-8")


def split_sql(text: str) -> list[str]:
    """Statements of a .sql file of ours (no semicolons inside literals)."""
    body = "\n".join(line.split("--", 1)[0] for line in text.splitlines())
    return [part.strip() for part in body.split(";") if part.strip()]


def derived_sql_files() -> list[str]:
    """sql/derived_*.sql: the tables of each derived index, created with the file."""
    folder = resources.files("anatid").joinpath("sql")
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("derived_") and p.name.endswith(".sql"))


def _table_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = current_schema() AND table_name = ?", [name]).fetchone()
    return bool(row[0])


def stored_version(con: duckdb.DuckDBPyConnection) -> int | None:
    if not _table_exists(con, "anatid_meta"):
        return None
    row = con.execute("SELECT value FROM anatid_meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else None


def ensure_schema(con: duckdb.DuckDBPyConnection, read_only: bool) -> int:
    """Create a new file's tables, migrate an old one, refuse a newer one."""
    version = stored_version(con)
    if version is not None and version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"this file has anatid schema version {version}, but this anatid understands "
            f"versions up to {SCHEMA_VERSION}: upgrade anatid (pip install -U anatid)")
    if version == SCHEMA_VERSION:
        if not read_only:
            _create_derived(con)
        return version
    if read_only:
        if version is None:
            raise SchemaVersionError("this file has no anatid tables and was opened read-only: "
                                     "open it once read-write to create them")
        raise SchemaVersionError(f"this file has schema version {version} and needs a migration "
                                 f"to {SCHEMA_VERSION}: open it once read-write")
    con.begin()
    try:
        if version is None:
            for statement in split_sql(sql_text("schema_v1.sql")):
                con.execute(statement)
            for name in derived_sql_files():
                for statement in split_sql(sql_text(name)):
                    con.execute(statement)
            con.execute("INSERT INTO anatid_meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
        else:
            for target in range(version + 1, SCHEMA_VERSION + 1):
                MIGRATIONS[target](con)
            con.execute("UPDATE anatid_meta SET value = ? WHERE key = 'schema_version'",
                        [str(SCHEMA_VERSION)])
        con.commit()
    except BaseException:
        con.rollback()
        raise
    return SCHEMA_VERSION


def _column_exists(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = current_schema() AND table_name = ? AND column_name = ?", [table, column]).fetchone()
    return bool(row[0])


def legacy_text_journal(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether anatid_text_journal has the old layout (terms VARCHAR[], tfs INTEGER[]
    instead of postings VARCHAR): a file written before the change and opened read-only
    since. Native text reads need the new column; the SQL oracle reads no journal."""
    return _column_exists(con, "anatid_text_journal", "terms")


# The old text journal's rows in the new layout (sql/derived_text.sql): the lists zipped
# into "term:tf term:tf ..." sorted by term, empty or NULL lists as NULL.
_TEXT_JOURNAL_FROM_LISTS = """
INSERT INTO anatid_text_journal (tenant_id, memory_id, seq, doc_len, vf, vt, postings)
SELECT tenant_id, memory_id, seq, doc_len, vf, vt,
       CASE WHEN len(terms) > 0 THEN
           array_to_string(list_transform(list_sort(list_zip(terms, tfs)), lambda x: x[1] || ':' || x[2]), ' ')
       END
FROM anatid_text_journal_lists
"""


def legacy_graph_generations(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether anatid_graph_generations lacks its nonce column: a file written before the
    graph cache was keyed by (generation_id, nonce) and opened read-only since. Its base
    markers carry no nonce either, so native graph reads refuse it (the SQL oracle answers)."""
    return _table_exists(con, "anatid_graph_generations") and \
        not _column_exists(con, "anatid_graph_generations", "nonce")


def new_nonce() -> int:
    """A random signed 64-bit nonce: with a generation id, the key of a process-wide cache
    (ids are unique per file only; two files may allocate the same one)."""
    return int.from_bytes(os.urandom(8), "little", signed=True)


# A nonce for every stored graph generation, then each base marker restated with it
# (op|seq|a|b|...: b = the nonce; what anatid.indexes.graph's _MARKERS writes).
_GRAPH_NONCES = """
UPDATE anatid_graph_generations g SET nonce = n.nonce
FROM (SELECT unnest(CAST($gens AS BIGINT[])) AS generation_id, unnest(CAST($nonces AS BIGINT[])) AS nonce) n
WHERE g.generation_id = n.generation_id
"""
_GRAPH_MARKERS_KEYED = """
UPDATE anatid_graph_journal j
SET entry = concat('0|', split_part(j.entry, '|', 2), '|', g.generation_id, '|', g.nonce, '|||||')
FROM anatid_graph_generations g
WHERE j.op = 0 AND j.tenant_id = g.tenant_id AND TRY_CAST(split_part(j.entry, '|', 3) AS BIGINT) = g.generation_id
"""


def _key_graph_generations(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("ALTER TABLE anatid_graph_generations ADD COLUMN nonce BIGINT")
    gens = [int(g) for (g,) in con.execute("SELECT generation_id FROM anatid_graph_generations").fetchall()]
    if gens:
        con.execute(_GRAPH_NONCES, {"gens": gens, "nonces": [new_nonce() for _ in gens]})
        con.execute(_GRAPH_MARKERS_KEYED)


def _create_derived(con: duckdb.DuckDBPyConnection) -> None:
    """Derived tables never hold facts, so a file that lacks some (written before
    an index existed) gets them on its next read-write open, and a derived table
    whose layout changed is rewritten in the same transaction (the text journal's
    term lists became one postings string; graph generations gained a nonce)."""
    statements = [st for name in derived_sql_files() for st in split_sql(sql_text(name))]
    if not statements:
        return
    con.begin()
    try:
        legacy = legacy_text_journal(con)
        unkeyed = legacy_graph_generations(con)
        if legacy:
            con.execute("ALTER TABLE anatid_text_journal RENAME TO anatid_text_journal_lists")
        for statement in statements:
            con.execute(statement)
        if legacy:
            con.execute(_TEXT_JOURNAL_FROM_LISTS)
            con.execute("DROP TABLE anatid_text_journal_lists")
        if unkeyed:
            _key_graph_generations(con)
        con.commit()
    except BaseException:
        con.rollback()
        raise


def get_meta(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    row = con.execute("SELECT value FROM anatid_meta WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def max_id(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute(
        "SELECT greatest(coalesce((SELECT max(memory_id) FROM anatid_memories), 0),"
        " coalesce((SELECT max(entity_id) FROM anatid_entities), 0),"
        " coalesce((SELECT max(edge_id) FROM anatid_edges), 0),"
        " coalesce((SELECT max(episode_id) FROM anatid_episodes), 0),"
        " coalesce((SELECT max(audit_id) FROM anatid_audit), 0))").fetchone()
    return int(row[0])


# Every instant a write stamps from the write clock (valid_from/valid_to can be the caller's).
_WRITE_INSTANTS = """
SELECT greatest((SELECT max(tx_from) FROM anatid_memories), (SELECT max(tx_to) FROM anatid_memories),
                (SELECT max(tx_from) FROM anatid_edges), (SELECT max(tx_to) FROM anatid_edges),
                (SELECT max(created_at) FROM anatid_entities), (SELECT max(recorded_at) FROM anatid_episodes),
                (SELECT max(happened_at) FROM anatid_audit))
"""


def last_write_instant(con: duckdb.DuckDBPyConnection):
    """The latest write instant in the file (naive UTC), None in an empty file."""
    return con.execute(_WRITE_INSTANTS).fetchone()[0]
