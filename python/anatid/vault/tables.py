"""The vault package's own tables. Created on first use with CREATE TABLE IF
NOT EXISTS; canonical facts stay in anatid's tables, these only remember what
was ingested from where, and what the rulers measured."""
from __future__ import annotations

import re

DDL = """
CREATE TABLE IF NOT EXISTS anatid_vault_meta (
    tenant_id BIGINT  NOT NULL,
    key       VARCHAR NOT NULL,
    value     VARCHAR NOT NULL
);

-- One row per note path ever ingested. memory_ids and chunk_hashes are the
-- believed chunks in order, and a deleted note keeps its row with deleted_at set.
CREATE TABLE IF NOT EXISTS anatid_vault_files (
    tenant_id     BIGINT    NOT NULL,
    path          VARCHAR   NOT NULL,
    content_hash  VARCHAR   NOT NULL,
    title         VARCHAR   NOT NULL,
    entity        VARCHAR   NOT NULL,
    kind          VARCHAR   NOT NULL,
    memory_ids    BIGINT[]  NOT NULL,
    chunk_hashes  VARCHAR[] NOT NULL,
    links         VARCHAR[] NOT NULL,
    superseded_by VARCHAR,
    ingested_at   TIMESTAMP NOT NULL,
    deleted_at    TIMESTAMP
);

-- One row per query of `anatid ask --ab`: what the graph added and promoted.
CREATE TABLE IF NOT EXISTS anatid_ab_recall (
    tenant_id          BIGINT    NOT NULL,
    asked_at           TIMESTAMP NOT NULL,
    query              VARCHAR   NOT NULL,
    k                  INTEGER   NOT NULL,
    graph_mode         VARCHAR   NOT NULL,
    gated              BOOLEAN   NOT NULL,
    vector_top         VARCHAR[] NOT NULL,
    graph_top          VARCHAR[] NOT NULL,
    graph_added        INTEGER   NOT NULL,   -- candidates only the graph step brought
    new_in_top         INTEGER   NOT NULL,   -- graph top-k notes absent from vector top-k
    promoted_via_graph INTEGER   NOT NULL,   -- of those, notes vector retrieval never saw
    notes              VARCHAR
);

-- One row per (run, mode, class) of `anatid eval run`.
CREATE TABLE IF NOT EXISTS anatid_eval_runs (
    run_id        VARCHAR   NOT NULL,
    ran_at        TIMESTAMP NOT NULL,
    gold          VARCHAR   NOT NULL,
    gold_sha256   VARCHAR   NOT NULL,
    embedder      VARCHAR   NOT NULL,
    mode          VARCHAR   NOT NULL,
    query_class   VARCHAR   NOT NULL,
    n             INTEGER   NOT NULL,
    k             INTEGER   NOT NULL,
    recall_at_k   DOUBLE    NOT NULL,
    mrr           DOUBLE    NOT NULL,
    ndcg_at_k     DOUBLE    NOT NULL,
    above_outdated DOUBLE
);

-- The per-turn ledger of `anatid hook stop`.
CREATE TABLE IF NOT EXISTS anatid_turns (
    session_id      VARCHAR,
    transcript_path VARCHAR   NOT NULL,
    turn_at         VARCHAR,
    recorded_at     TIMESTAMP NOT NULL,
    ask             VARCHAR,
    summary         VARCHAR,
    files           VARCHAR[] NOT NULL,
    tools           VARCHAR[] NOT NULL,
    commands        VARCHAR[] NOT NULL
);

-- How far each transcript has been read, in bytes of complete lines.
CREATE TABLE IF NOT EXISTS anatid_turn_offsets (
    transcript_path VARCHAR NOT NULL,
    byte_offset     BIGINT  NOT NULL
);
"""


def ensure(cur) -> None:
    """Create the vault tables a file lacks. A file that has them all is left alone, so
    read-only handles (e.g. `anatid eval run --no-record`) can use it."""
    names = re.findall(r"CREATE TABLE IF NOT EXISTS (anatid_[a-z_]+)", DDL)
    have = cur.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                       "AND schema_name = current_schema() AND list_contains($names, table_name)",
                       {"names": names}).fetchone()[0]
    if have == len(names):
        return
    for stmt in DDL.split(";"):
        if stmt.strip():
            cur.execute(stmt)


def get_meta(cur, tenant: int, key: str) -> str | None:
    row = cur.execute("SELECT value FROM anatid_vault_meta WHERE tenant_id = $t AND key = $k",
                      {"t": tenant, "k": key}).fetchone()
    return None if row is None else row[0]


def set_meta(cur, tenant: int, key: str, value: str) -> None:
    cur.execute("DELETE FROM anatid_vault_meta WHERE tenant_id = $t AND key = $k", {"t": tenant, "k": key})
    cur.execute("INSERT INTO anatid_vault_meta VALUES ($t, $k, $v)", {"t": tenant, "k": key, "v": value})
