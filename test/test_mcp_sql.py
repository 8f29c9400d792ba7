"""The `sql` tool cannot be escaped: an adversarial battery, every attempt refused, the file unchanged.

The battery runs twice: in process against `sql_guard.run_sql` (one test per attempt, so a
regression names the attempt), and through the real server over stdio with --enable-sql.
"""
from __future__ import annotations

import anyio
import pytest

from anatid import Anatid, AnatidError
from anatid.integrations.mcp import sql_guard
from test_mcp_support import error_text, snapshot

ZWSP = "\u200b"

# {tmp} is the test's directory: a refused COPY/EXPORT/ATTACH must leave nothing there.
ATTEMPTS = [
    # files and globs, by table function and by replacement scan
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/hostname')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM read_json('{tmp}/x.json')",
    "SELECT * FROM read_parquet('{tmp}/*.parquet')",
    "SELECT * FROM read_csv(['/etc/passwd', '/etc/hosts'])",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM '/etc/passwd.csv'",
    'SELECT * FROM "/etc/passwd.csv"',
    "SELECT * FROM anatid_memories, '/etc/hosts.csv'",
    "SELECT (SELECT count(*) FROM '/etc/passwd.csv')",
    "SELECT * FROM (SELECT * FROM '{tmp}/x.parquet') AS anatid_memories",
    "WITH x AS (SELECT * FROM read_csv('/etc/passwd')) SELECT * FROM x",
    "DESCRIBE '/etc/passwd.csv'",
    "SUMMARIZE '/etc/passwd.csv'",
    # the network
    "SELECT * FROM 'https://example.com/data.csv'",
    'SELECT * FROM "s3://bucket/memories.parquet"',
    "SELECT * FROM read_parquet('http://127.0.0.1:9/x.parquet')",
    # SQL inside SQL, environment, settings
    "SELECT * FROM query('DELETE FROM anatid_memories')",
    "SELECT * FROM query_table('anatid_memories')",
    "SELECT getenv('HOME')",
    "SELECT current_setting('enable_external_access')",
    "SELECT * FROM duckdb_settings()",
    # writes out, attach, extensions
    "COPY anatid_memories TO '{tmp}/out.csv'",
    "COPY (SELECT content FROM anatid_memories) TO '{tmp}/out.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{tmp}/export'",
    "ATTACH '{tmp}/other.db' AS other",
    "ATTACH ':memory:' AS scratch",
    "USE scratch",
    "DETACH scratch",
    "INSTALL httpfs",
    "LOAD httpfs",
    "FORCE INSTALL fts",
    # PRAGMA, SET, CALL, CHECKPOINT, transactions
    "PRAGMA database_list",
    "PRAGMA enable_profiling",
    "SET enable_external_access = true",
    "SET threads = 1",
    "RESET enable_external_access",
    "CALL pragma_version()",
    "CHECKPOINT",
    "FORCE CHECKPOINT",
    "SELECT * FROM checkpoint()",
    "VACUUM",
    "BEGIN TRANSACTION",
    "COMMIT",
    # plain writes and DDL
    "DELETE FROM anatid_memories",
    "UPDATE anatid_memories SET content = 'pwned'",
    "INSERT INTO anatid_entities SELECT * FROM anatid_entities",
    "DROP TABLE anatid_memories",
    "ALTER TABLE anatid_memories ADD COLUMN pwned INTEGER",
    "CREATE TABLE pwned AS SELECT 1",
    "CREATE TEMP TABLE pwned (a INTEGER)",
    "CREATE VIEW pwned AS SELECT 1",
    "CREATE SEQUENCE pwned",
    "TRUNCATE anatid_memories",
    # multiple statements and comments
    "SELECT 1; DROP TABLE anatid_memories",
    "SELECT 1; SELECT 2",
    "SELECT 1 -- harmless\n; DELETE FROM anatid_edges",
    "SELECT 1 /* ; */ ; DELETE FROM anatid_edges",
    "/* SELECT */ DELETE FROM anatid_memories",
    "-- SELECT\nDELETE FROM anatid_memories",
    # writes hidden in CTEs, EXPLAIN ANALYZE of writes
    "WITH d AS (DELETE FROM anatid_memories RETURNING *) SELECT * FROM d",
    "WITH u AS (UPDATE anatid_memories SET content = 'x' RETURNING *) SELECT count(*) FROM u",
    "WITH i AS (INSERT INTO anatid_meta VALUES ('k', 'v') RETURNING *) SELECT * FROM i",
    "EXPLAIN ANALYZE DELETE FROM anatid_memories",
    "EXPLAIN ANALYZE UPDATE anatid_memories SET strength = 0",
    "EXPLAIN ANALYZE /* select */ INSERT INTO anatid_meta VALUES ('k', 'v')",
    "EXPLAIN ANALYZE COPY anatid_memories TO '{tmp}/explained.csv'",
    "EXPLAIN SELECT * FROM read_csv('/etc/passwd')",
    "EXPLAIN ANALYZE SELECT * FROM '/etc/passwd.csv'",
    "EXPLAIN (FORMAT json) DELETE FROM anatid_memories",
    # odd quoting and Unicode
    f'SELECT * FROM "anatid_memories{ZWSP}"',
    'SELECT * FROM "ａｎａｔｉｄ_memories"',
    "SELECT * FROM $$/etc/passwd.csv$$",
    "SELECT * FROM e'/etc/passwd.csv'",
    "SELECT * FROM 'anatid_memories.csv'",
    "SELECT * FROM ＇/etc/passwd＇",
    "SELECT * FROM \"anatid\".\"main\".\"/etc/passwd.csv\"",
    "DELETE\u00a0FROM anatid_memories",
    "SELECT 'x\x00' ; DROP TABLE anatid_memories",
    # secrets and macros
    "CREATE SECRET leak (TYPE s3, KEY_ID 'a', SECRET 'b')",
    "CREATE PERSISTENT SECRET leak (TYPE s3, KEY_ID 'a', SECRET 'b')",
    "SELECT * FROM duckdb_secrets()",
    "SELECT which_secret('s3://bucket/x', 's3')",
    "CREATE MACRO pwned(x) AS x",
    "CREATE MACRO reader(p) AS TABLE SELECT * FROM read_csv(p)",
    "CREATE OR REPLACE TEMP MACRO pwned() AS 1",
    # state-changing scalar functions, the serializer itself, time travel, nothing at all
    "SELECT nextval('anatid_seq')",
    "SELECT setseed(0.5)",
    "SELECT json_serialize_sql('DELETE FROM anatid_memories')",
    "SELECT * FROM anatid_memories AT (VERSION => 1)",
    # process-wide caches and state (a forged generation answers context() for the server's life)
    "SELECT anatid_graph_load(generation_id, nonce, blob) FROM anatid_graph_generations",
    "SELECT anatid_graph_build(0::TINYINT, entity_id, NULL, name_key, 1, 0, now()) FROM anatid_entities",
    "SELECT anatid_ann_load(1, 2, NULL::BLOB)",
    "SELECT anatid_graph_cache_stats()",
    # paths and settings through the catalog's views
    "SELECT name, setting FROM pg_settings WHERE setting LIKE '/%'",
    "SELECT path FROM duckdb_databases",
    "SELECT file FROM pragma_database_list",
    "SELECT * FROM duckdb_tables()",
    "",
    "   ;  ",
    "SELECT FROM WHERE",
]


def test_battery_is_large_enough():
    assert len(ATTEMPTS) >= 40 and len(set(ATTEMPTS)) == len(ATTEMPTS)


@pytest.fixture(scope="module")
def hardened(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sql")
    (tmp / "x.json").write_text('{"a": 1}')
    db = Anatid.open(str(tmp / "m.anatid"))
    old = db.remember("Ada prefers dark roast coffee", entities=["Ada", "coffee"], episode="standup")
    db.supersede(old.memory_id, "Ada switched to decaf")
    db.relate("Ada", "Kestrel", rel_kind="leads")
    sql_guard.harden(db.connection)
    yield db, tmp, snapshot(db.connection)
    db.close()


@pytest.mark.parametrize("attempt", ATTEMPTS)
def test_every_attempt_is_refused_in_process(hardened, attempt):
    db, tmp, before = hardened
    with pytest.raises(AnatidError):
        sql_guard.run_sql(db.connection, attempt.replace("{tmp}", str(tmp)))
    assert snapshot(db.connection) == before
    assert {p.name for p in tmp.iterdir()} - {"m.anatid", "m.anatid.wal"} == {"x.json"}


ALLOWED = [
    ("SELECT kind, count(*) AS n FROM anatid_memories GROUP BY kind", 1),
    ("SELECT memory_id, superseded_by FROM anatid_memories WHERE superseded_by IS NOT NULL", 1),
    ("WITH c AS (SELECT * FROM anatid_memories WHERE tx_to IS NULL) SELECT count(*) FROM c", 1),
    ("SELECT verb, subject_id FROM anatid_audit ORDER BY happened_at", 1),
    ("EXPLAIN SELECT * FROM anatid_edges", None),
    ("EXPLAIN ANALYZE SELECT count(*) FROM anatid_edges", None),
    ("SELECT * FROM range(3)", 3),
    ("DESCRIBE anatid_memories", None),
    ("SHOW TABLES", None),
    ("SELECT table_name FROM information_schema.tables", None),
    ("SELECT content FROM anatid_memories WHERE content LIKE '%decaf%'", 1),
    ("SELECT strength + confidence, upper(kind) || ':' || content FROM anatid_memories", 2),
    ("SELECT count(*) FROM anatid_edges WHERE weight * 2 >= 2 AND kind <> 'about'", 1),
]


@pytest.mark.parametrize("query,rows", ALLOWED)
def test_reads_still_work_and_ids_leave_as_strings(hardened, query, rows):
    db, _tmp, before = hardened
    out = sql_guard.run_sql(db.connection, query).to_wire()
    if rows is not None:
        assert out["row_count"] == rows
    for col in ("memory_id", "superseded_by", "subject_id"):
        if col in out["columns"]:
            i = out["columns"].index(col)
            assert all(isinstance(r[i], str) and r[i].isdigit() for r in out["rows"])
    assert snapshot(db.connection) == before


def test_row_cap_and_timeout(hardened):
    db, _tmp, _before = hardened
    capped = sql_guard.run_sql(db.connection, "SELECT * FROM range(100)", max_rows=7)
    assert len(capped.rows) == 7 and capped.truncated
    with pytest.raises(sql_guard.SqlTimeout, match="timeout"):
        sql_guard.run_sql(db.connection, "SELECT count(*) FROM range(1000000000000) a", timeout_s=0.2)


def test_external_access_stays_off(hardened):
    db, _tmp, _before = hardened
    assert db.connection.execute("SELECT current_setting('enable_external_access')").fetchone()[0] is False


def test_battery_over_stdio_refused_and_file_unchanged(tmp_path):
    pytest.importorskip("mcp", reason='the MCP tests need the mcp package: pip install "anatid[mcp]"')
    from test_mcp_support import mcp_session
    path = tmp_path / "m.anatid"
    with Anatid.open(str(path)) as db:
        old = db.remember("Ada prefers dark roast coffee", entities=["Ada"], episode="standup")
        db.supersede(old.memory_id, "Ada switched to decaf")
        before = snapshot(db.connection)
    out = tmp_path / "out"
    out.mkdir()

    async def go():
        async with mcp_session(path, "--enable-sql") as s:
            texts = []
            for attempt in ATTEMPTS:
                texts.append(error_text(await s.call_tool("sql", {"query": attempt.replace("{tmp}", str(out))})))
            ok = await s.call_tool("sql", {"query": "SELECT memory_id FROM anatid_memories ORDER BY tx_from"})
            return texts, ok
    texts, ok = anyio.run(go)
    assert all(t.startswith("Error executing tool sql:") for t in texts)
    ids = [r[0] for r in ok.structured_content["rows"]]
    assert len(ids) == 2 and all(isinstance(i, str) and int(i) > 2**53 for i in ids)
    assert list(out.iterdir()) == []
    with Anatid.open(str(path), read_only=True) as db:
        assert snapshot(db.connection) == before


# Defense in depth: each lower layer holds on its own when the ones above are bypassed.
WRITES_PAST_LAYER_2 = [
    "DELETE FROM anatid_memories",
    "UPDATE anatid_memories SET content = 'pwned'",
    "INSERT INTO anatid_meta VALUES ('k', 'v')",
    "CREATE TABLE pwned AS SELECT 1",
    "DROP TABLE anatid_edges",
    "WITH d AS (DELETE FROM anatid_memories RETURNING *) SELECT * FROM d",
    "EXPLAIN ANALYZE DELETE FROM anatid_memories",
]

FILES_PAST_LAYER_2 = [
    "SELECT * FROM '/etc/passwd.csv'",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "COPY anatid_memories TO '{tmp}/out.csv'",
    "ATTACH '{tmp}/other.db' AS other",
    "LOAD httpfs",
]


@pytest.mark.parametrize("attempt", WRITES_PAST_LAYER_2)
def test_read_only_transaction_alone_refuses_writes(hardened, attempt):
    db, _tmp, before = hardened
    with pytest.raises(sql_guard.SqlRefused, match="read-only"):
        sql_guard.execute_read_only(db.connection, attempt)
    assert snapshot(db.connection) == before


@pytest.mark.parametrize("attempt", FILES_PAST_LAYER_2)
def test_external_access_off_alone_refuses_files(hardened, attempt):
    db, tmp, before = hardened
    with pytest.raises(sql_guard.SqlRefused, match="disabled"):
        sql_guard.execute_read_only(db.connection, attempt.replace("{tmp}", str(tmp)))
    assert snapshot(db.connection) == before
    assert {p.name for p in tmp.iterdir()} - {"m.anatid", "m.anatid.wal"} == {"x.json"}
