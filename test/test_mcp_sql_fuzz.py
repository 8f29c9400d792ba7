"""The `sql` tool's allowlists under a seeded battery: every attack refused with an error naming
what it used, every ordinary read answered exactly as DuckDB answers it unguarded.

Attacks come from two tables crossed with seeded contexts (a forbidden expression inside a
select list, a filter, a CTE, a lambda, a window filter, an EXPLAIN ...; a forbidden relation
in a FROM, a join, a subquery, a recursive CTE ...) plus hand-written ones: the forged graph
generation, the path leaks of `pg_settings` / `duckdb_databases` / `pragma_database_list`, a
CTE that borrows a system view's name in another scope, a macro that shadows a built-in.
Reads are generated from seeded templates over seeded data and checked against the same
statement run directly on the connection, and where Python can say the answer on its own,
against that too.
"""
from __future__ import annotations

import random

import anyio
import pytest

from anatid import Anatid, AnatidError
from anatid.integrations.mcp import sql_allow, sql_guard
from test_mcp_support import error_text, payload, snapshot

SEED = 20261203
WORDS = ["coffee", "tea", "jazz", "rust", "python", "chess", "sailing", "opera", "tennis", "garden"]
PEOPLE = ["Ada", "Bob", "Cyd", "Dee", "Eve", "Fox"]
KINDS = ["fact", "preference", "event"]

# (forbidden expression, the name the refusal must mention)
FORBIDDEN_EXPRESSIONS = [
    ("anatid_graph_load(1, 2, NULL::BLOB)", "anatid_graph_load"),
    ("anatid_graph_build(0::TINYINT, 1, 2, 'x', 1, 0, TIMESTAMP '2026-01-01')", "anatid_graph_build"),
    ("anatid_ann_load(1, 2, NULL::BLOB)", "anatid_ann_load"),
    ("anatid_ann_build(1, 0, 0, 1.0, [1.0], 8, 32, 1)", "anatid_ann_build"),
    ("anatid_graph_cache_stats()", "anatid_graph_cache_stats"),
    ("anatid_graph_resident(1, 2)", "anatid_graph_resident"),
    ("anatid_ann_resident(1, 2)", "anatid_ann_resident"),
    ("anatid_ann_info(1)", "anatid_ann_info"),
    ("anatid_macro_status()", "anatid_macro_status"),
    ("anatid_graph_recall(NULL, NULL)", "anatid_graph_recall"),
    ("anatid_hybrid_recall(NULL, NULL)", "anatid_hybrid_recall"),
    ("anatid_graph_request(['ada'], 1, 10, NULL, NULL, false)", "anatid_graph_request"),
    ('"ANATID_GRAPH_LOAD"(1, 2, NULL)', "anatid_graph_load"),
    ("main.anatid_graph_load(1, 2, NULL)", "anatid_graph_load"),
    ("(1).anatid_graph_cache_stats()", "anatid_graph_cache_stats"),
    ("current_setting('temp_directory')", "current_setting"),
    ("system.main.current_setting('secret_directory')", "current_setting"),
    ("'temp_directory'.current_setting()", "current_setting"),
    ("getvariable('v')", "getvariable"),
    ("current_query()", "current_query"),
    ("json_serialize_sql('SELECT 1')", "json_serialize_sql"),
    ("json_deserialize_sql('{}')", "json_deserialize_sql"),
    ("nextval('s')", "nextval"),
    ("setseed(0.5)", "setseed"),
    ("write_log('x')", "write_log"),
    ("sleep_ms(1)", "sleep_ms"),
    ("pg_sleep(1)", "pg_sleep"),
    ("getenv('HOME')", "getenv"),
]

EXPRESSION_CONTEXTS = [
    "SELECT {e}",
    "SELECT count(*) FROM anatid_memories WHERE {e} IS NOT NULL",
    "SELECT (SELECT {e})",
    "WITH x AS (SELECT {e} AS v) SELECT * FROM x",
    "SELECT * FROM (SELECT {e} AS v) s",
    "SELECT content FROM anatid_memories ORDER BY {e}",
    "SELECT list_transform([1], x -> {e})",
    "SELECT CASE WHEN true THEN {e} END",
    "EXPLAIN SELECT {e}",
    "EXPLAIN ANALYZE SELECT {e}",
    "SELECT 1 UNION ALL SELECT {e}",
    "SELECT kind FROM anatid_memories GROUP BY kind HAVING {e} IS NULL",
    "SELECT sum(strength) FILTER (WHERE {e} IS NULL) FROM anatid_memories",
    "SELECT * FROM range(1) WHERE EXISTS (SELECT {e})",
    "SELECT coalesce(NULL, {e})",
    "SELECT [{e}]",
    "SELECT {{'k': {e}}}",
    "SELECT * FROM unnest([{e}])",
    "SELECT memory_id FROM anatid_memories QUALIFY row_number() OVER (ORDER BY {e}) = 1",
    "SELECT content || {e} FROM anatid_memories",
    "SELECT * FROM anatid_memories WHERE content LIKE '%' || {e} || '%'",
]

# (forbidden relation, the name the refusal must mention)
FORBIDDEN_RELATIONS = [
    ("pg_settings", "pg_settings"),
    ("pg_catalog.pg_settings", "pg_settings"),
    ('"pg_settings"', "pg_settings"),
    ("PG_SETTINGS", "pg_settings"),
    ("duckdb_databases", "duckdb_databases"),
    ("main.duckdb_databases", "duckdb_databases"),
    ("system.main.duckdb_databases", "duckdb_databases"),
    ("pragma_database_list", "pragma_database_list"),
    ("sqlite_master", "sqlite_master"),
    ("pg_database", "pg_database"),
    ("pg_catalog.pg_tables", "pg_tables"),
    ("information_schema.schemata", "schemata"),
    ("information_schema.views", "views"),
    ("temp.main.anatid_memories", "anatid_memories"),
    ("duckdb_settings()", "duckdb_settings"),
    ("duckdb_databases()", "duckdb_databases"),
    ("pragma_database_list()", "pragma_database_list"),
    ("pragma_storage_info('anatid_memories')", "pragma_storage_info"),
    ("duckdb_temporary_files()", "duckdb_temporary_files"),
    ("duckdb_extensions()", "duckdb_extensions"),
    ("duckdb_memory()", "duckdb_memory"),
    ("duckdb_functions()", "duckdb_functions"),
    ("duckdb_tables()", "duckdb_tables"),
    ("duckdb_variables()", "duckdb_variables"),
    ("read_csv('/etc/passwd')", "read_csv"),
    ("read_parquet('/tmp/x.parquet')", "read_parquet"),
    ("glob('/*')", "glob"),
    ("anatid_hybrid('coffee')", "anatid_hybrid"),
    ("anatid_recall_2hop(0, ['ada'])", "anatid_recall_2hop"),
    ("anatid_functions()", "anatid_functions"),
    ("'/etc/passwd.csv'", "/etc/passwd.csv"),
]

RELATION_CONTEXTS = [
    "SELECT * FROM {r}",
    "SELECT count(*) FROM {r}",
    "SELECT * FROM anatid_memories, {r}",
    "SELECT (SELECT count(*) FROM {r})",
    "WITH x AS (SELECT * FROM {r}) SELECT * FROM x",
    "SELECT * FROM anatid_memories WHERE memory_id IN (SELECT 1 FROM {r})",
    "SELECT * FROM anatid_memories m JOIN {r} ON true",
    "EXPLAIN SELECT * FROM {r}",
    "SELECT 1 UNION SELECT 1 FROM {r}",
    "SELECT * FROM (SELECT * FROM {r}) AS anatid_memories",
    "SELECT * FROM anatid_memories WHERE EXISTS (SELECT * FROM {r})",
    "FROM {r} SELECT *",
    "DESCRIBE SELECT * FROM {r}",
    "SUMMARIZE SELECT * FROM {r}",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r, {r} WHERE n < 2) SELECT * FROM r",
]

# The original findings, verbatim, and tricks no table above generates.
HAND_ATTACKS = [
    ("""SELECT anatid_graph_load(g.generation_id, g.nonce,
          (SELECT anatid_graph_build(r.k, r.x, r.y, r.txt, g.generation_id, g.tenant_id, g.built_at) FROM (
             SELECT CAST(0 AS TINYINT) AS k, entity_id AS x, CAST(NULL AS BIGINT) AS y, name_key AS txt
             FROM anatid_entities) r))
        FROM anatid_graph_generations g""", "anatid_graph_load"),
    ("SELECT name, setting FROM pg_settings WHERE setting LIKE '/%'", "pg_settings"),
    ("SELECT path FROM duckdb_databases", "duckdb_databases"),
    ("SELECT file FROM pragma_database_list", "pragma_database_list"),
    ("SELECT * FROM (WITH duckdb_databases AS (SELECT 1 AS path) SELECT 1) a, (SELECT path FROM duckdb_databases) b",
     "duckdb_databases"),
    ("WITH pg_settings AS (SELECT 'x' AS name) SELECT * FROM pg_settings", "pg_settings"),
    ("WITH x AS (SELECT * FROM pg_settings) SELECT * FROM x", "pg_settings"),
    ("SELECT sum(strength) EXPORT_STATE FROM anatid_memories", "sum"),
    ("SELECT range(1000000000)", "range"),
    ("SELECT * FROM anatid_memories WHERE content IN (SELECT setting FROM pg_settings)", "pg_settings"),
    ("SELECT list_transform([1], x -> (SELECT count(*) FROM duckdb_databases()))", "duckdb_databases"),
    ("SELECT * FROM anatid_memories PIVOT (count(*) FOR kind IN (SELECT name FROM pg_settings))", "pg_settings"),
    ("SELECT max(anatid_graph_cache_stats()) OVER () FROM anatid_memories", "anatid_graph_cache_stats"),
    ("SELECT anatid_graph_cache_stats() AS anatid_version", "anatid_graph_cache_stats"),
]


def _sample(rng, items, k):
    return rng.sample(items, min(k, len(items)))


def generated_attacks() -> list[tuple[str, str]]:
    rng = random.Random(SEED)
    out = []
    for expr, name in FORBIDDEN_EXPRESSIONS:
        out += [(c.format(e=expr), name) for c in _sample(rng, EXPRESSION_CONTEXTS, 5)]
    for rel, name in FORBIDDEN_RELATIONS:
        out += [(c.format(r=rel), name) for c in _sample(rng, RELATION_CONTEXTS, 5)]
    return out


ATTACKS = HAND_ATTACKS + generated_attacks()


# -- ordinary reads --------------------------------------------------------------------------------
# Hand-written: the everyday questions, operators and LIKE among them.
HAND_READS = [
    "SELECT kind, count(*) AS n FROM anatid_memories GROUP BY kind ORDER BY kind",
    "SELECT content FROM anatid_memories WHERE content LIKE '%coffee%' ORDER BY content",
    "SELECT content FROM anatid_memories WHERE content ILIKE 'ada%' ORDER BY content",
    "SELECT content FROM anatid_memories WHERE content NOT LIKE '%a%' ORDER BY content",
    "SELECT memory_id, strength + confidence AS s FROM anatid_memories ORDER BY memory_id",
    "SELECT upper(kind) || ': ' || content AS line FROM anatid_memories ORDER BY line",
    "SELECT 2 ** 10, 7 // 2, 7 % 3, 6 & 3, 6 | 1, ~1, 1 << 3, -5, 10 / 4, 3 * 4 - 1",
    "SELECT count(*) FROM anatid_memories WHERE tx_to IS NULL AND valid_to IS NULL",
    "SELECT memory_id, superseded_by FROM anatid_memories WHERE superseded_by IS NOT NULL ORDER BY memory_id",
    "SELECT verb, count(*) FROM anatid_audit GROUP BY verb ORDER BY verb",
    "SELECT e.name, count(*) AS n FROM anatid_edges a JOIN anatid_entities e ON e.entity_id = a.dst_id "
    "WHERE a.kind = 'about' GROUP BY e.name ORDER BY n DESC, e.name",
    "WITH cur AS (SELECT * FROM anatid_memories WHERE tx_to IS NULL) SELECT kind, avg(strength) FROM cur "
    "GROUP BY kind ORDER BY kind",
    "SELECT a.name, b.name, r.rel_kind FROM anatid_edges r JOIN anatid_entities a ON a.entity_id = r.src_id "
    "JOIN anatid_entities b ON b.entity_id = r.dst_id WHERE r.kind = 'relates' ORDER BY ALL",
    "SELECT memory_id, row_number() OVER (PARTITION BY kind ORDER BY memory_id) AS rn FROM anatid_memories "
    "ORDER BY memory_id",
    "SELECT kind, list(content ORDER BY content) FROM anatid_memories GROUP BY kind ORDER BY kind",
    "SELECT content.upper() FROM anatid_memories ORDER BY 1",
    "SELECT CASE WHEN strength > 1 THEN 'strong' ELSE 'plain' END AS s, count(*) FROM anatid_memories "
    "GROUP BY s ORDER BY s",
    "SELECT coalesce(superseded_by, 0) > 0 AS replaced, count(*) FROM anatid_memories GROUP BY ALL ORDER BY ALL",
    "SELECT content FROM anatid_memories WHERE content SIMILAR TO '.*(tea|jazz).*' ORDER BY content",
    "SELECT content FROM anatid_memories WHERE content GLOB '*chess*' ORDER BY content",
    "SELECT content FROM anatid_memories WHERE regexp_matches(content, 'o{2}') ORDER BY content",
    "SELECT content FROM anatid_memories WHERE starts_with(content, 'Bob') AND content ^@ 'Bob' ORDER BY 1",
    "SELECT name FROM anatid_entities WHERE name IN ('Ada', 'Bob', 'nobody') ORDER BY name",
    "SELECT name FROM anatid_entities e WHERE EXISTS (SELECT 1 FROM anatid_edges a WHERE a.dst_id = e.entity_id) "
    "ORDER BY name",
    "SELECT x, x * x FROM unnest([1, 2, 3]) t(x) ORDER BY x",
    "SELECT i FROM range(10) t(i) WHERE i % 3 = 0 ORDER BY i",
    "SELECT json_extract_string(json_object('k', kind), '$.k') AS k FROM anatid_memories ORDER BY k",
    "SELECT kind FROM anatid_memories UNION SELECT 'extra' ORDER BY 1",
    "SELECT strftime(tx_from, '%Y') = strftime(tx_from, '%Y') FROM anatid_memories LIMIT 1",
    "SELECT date_trunc('day', tx_from) <= tx_from FROM anatid_memories LIMIT 1",
    "SELECT [x * 2 FOR x IN [1, 2, 3] IF x > 1]",
    "SELECT {'a': 1, 'b': 'two'}.b, [10, 20, 30][2], 'hello'[2:3]",
    "SELECT anatid_version() IS NOT NULL",
    "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'anatid\\_%' ESCAPE '\\' ORDER BY 1",
    "SELECT column_name FROM information_schema.columns WHERE table_name = 'anatid_memories' ORDER BY 1",
    "SELECT * FROM anatid_memories m WHERE m.kind = 'fact' ORDER BY memory_id LIMIT 3",
    "SELECT m.* EXCLUDE (content) FROM anatid_memories m ORDER BY memory_id LIMIT 2",
    "SELECT count(DISTINCT kind), min(strength), max(confidence), string_agg(DISTINCT kind, ',' ORDER BY kind) "
    "FROM anatid_memories",
    "SELECT kind, count(*) FILTER (WHERE content LIKE '%e%') FROM anatid_memories GROUP BY kind ORDER BY kind",
    "SELECT length(content) BETWEEN 5 AND 40, count(*) FROM anatid_memories GROUP BY ALL ORDER BY ALL",
    "SELECT name IS DISTINCT FROM 'Ada' AS d, count(*) FROM anatid_entities GROUP BY ALL ORDER BY ALL",
    "SELECT greatest(1, 5, 3), least(2, 0), abs(-4), round(2.567, 1), nullif(1, 1), concat('a', 1)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT sum(n) FROM r",
    "FROM anatid_entities SELECT name ORDER BY name",
    "SELECT current_date <= current_timestamp + INTERVAL 1 DAY, localtimestamp IS NOT NULL, today() <= now()",
    "SELECT content COLLATE nocase AS c FROM anatid_memories ORDER BY c LIMIT 3",
]

READ_TEMPLATES = [
    "SELECT DISTINCT content FROM anatid_memories WHERE content LIKE '%{w}%' ORDER BY content",
    "SELECT count(*) FROM anatid_memories WHERE content ILIKE '%{W}%' OR content LIKE '{p}%'",
    "SELECT memory_id, round(strength * {a} + confidence / {b}, 3) FROM anatid_memories ORDER BY memory_id",
    "SELECT kind, count(*) FROM anatid_memories WHERE strength {op} {x} GROUP BY kind ORDER BY kind",
    "SELECT name FROM anatid_entities WHERE name ILIKE '{q}%' ORDER BY name",
    "SELECT count(*) FROM anatid_edges WHERE weight {op} {x}",
    "SELECT memory_id % {k} AS r, count(*) FROM anatid_memories GROUP BY r ORDER BY r",
    "SELECT content || ' #' || {k} FROM anatid_memories WHERE content NOT LIKE '%{w}%' ORDER BY 1",
    "SELECT left(content, {k}) || '...' AS c FROM anatid_memories WHERE kind = '{kind}' ORDER BY c",
    "SELECT i, i * {a} - {k} FROM range({k}) t(i) ORDER BY i",
    "SELECT {a} + {b} * {k}, ({a} - {b}) / {k}, {k} % 3, {a} ** 2",
    "WITH w AS (SELECT content FROM anatid_memories WHERE content LIKE '%{w}%') SELECT count(*) FROM w",
    "SELECT kind, sum(strength) OVER (PARTITION BY kind) FROM anatid_memories WHERE content LIKE '%{w}%' "
    "ORDER BY ALL",
    "SELECT replace(content, '{w}', upper('{w}')) FROM anatid_memories WHERE contains(content, '{w}') ORDER BY 1",
    "SELECT list_sort(list(DISTINCT kind)) FROM anatid_memories WHERE content LIKE '%{w}%' OR kind = '{kind}'",
]


def generated_reads() -> list[str]:
    rng = random.Random(SEED + 1)
    out = []
    for template in READ_TEMPLATES:
        for _ in range(5):
            w = rng.choice(WORDS)
            out.append(template.format(w=w, W=w.upper(), p=rng.choice(PEOPLE), q=rng.choice(PEOPLE)[:2].lower(),
                                       a=rng.randint(1, 9), b=rng.randint(1, 9), k=rng.randint(2, 7),
                                       x=rng.choice([0.5, 1, 1.5, 2]), op=rng.choice(["<", "<=", ">", ">=", "=", "<>"]),
                                       kind=rng.choice(KINDS)))
    return list(dict.fromkeys(out))


READS = HAND_READS + generated_reads()


def test_battery_is_large_and_covers_both_sides():
    assert len(set(ATTACKS)) == len(ATTACKS) and len(set(READS)) == len(READS)
    assert len(ATTACKS) + len(READS) >= 150 and len(ATTACKS) >= 100 and len(READS) >= 80


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    """Seeded memories (contents kept for Python's own answers), hardened like the server."""
    rng = random.Random(SEED + 2)
    path = tmp_path_factory.mktemp("fuzz") / "m.anatid"
    db = Anatid.open(str(path))
    contents, ids = [], []
    for i in range(30):
        who, other = rng.sample(PEOPLE, 2)
        text = f"{who} likes {rng.choice(WORDS)} and {rng.choice(WORDS)} #{i}"
        ids.append(db.remember(text, entities=[who, other], kind=rng.choice(KINDS)).memory_id)
        contents.append(text)
    for i in rng.sample(range(30), 5):
        text = f"{PEOPLE[i % 6]} switched to {rng.choice(WORDS)} #{i}b"
        db.supersede(ids[i], text)
        contents.append(text)
    for i in rng.sample(range(30), 6):
        db.reinforce(ids[i], rng.choice([0.5, 1.0, 2.0]))
    for _ in range(8):
        db.relate(*rng.sample(PEOPLE, 2), rel_kind=rng.choice(["knows", "leads"]),
                  weight=rng.choice([0.5, 1.0, 2.0]))
    db.maintain_indexes()
    sql_guard.harden(db.connection)
    yield db, str(path), contents, snapshot(db.connection)
    db.close()


@pytest.mark.parametrize("attack,name", ATTACKS)
def test_every_attack_is_refused_naming_what_it_used(memory, attack, name):
    db, path, _contents, before = memory
    with pytest.raises(sql_guard.SqlRefused) as err:
        sql_guard.run_sql(db.connection, attack)
    message = str(err.value)
    assert name.lower() in message.lower(), message
    assert path not in message
    assert snapshot(db.connection) == before


@pytest.mark.parametrize("query", READS)
def test_every_read_is_answered_as_duckdb_answers_it(memory, query):
    db, _path, _contents, before = memory
    if "anatid_version" in query and not db.native.loaded:
        pytest.skip("anatid_version() is the extension's: not registered without it (ANATID_NATIVE=0)")
    got = sql_guard.run_sql(db.connection, query)
    want = db.connection.execute(query).fetchall()
    assert got.rows == [list(r) for r in want] and not got.truncated
    assert snapshot(db.connection) == before


@pytest.mark.parametrize("word", WORDS)
def test_like_reads_match_python(memory, word):
    db, _path, contents, _before = memory
    got = sql_guard.run_sql(db.connection, f"SELECT DISTINCT content FROM anatid_memories "
                                           f"WHERE content LIKE '%{word}%' ORDER BY content")
    assert [r[0] for r in got.rows] == sorted({c for c in contents if word in c})


def test_operators_match_python(memory):
    db, _path, contents, _before = memory
    got = sql_guard.run_sql(db.connection, "SELECT 2 ** 10, 7 // 2, 7 % 3, 6 & 3, 6 | 1, 1 << 3, 'a' || 'b', "
                                           "10 / 4, -(3 + 4) * 2, 'Bob' ^@ 'Bo', 'x' ~~ '_'")
    assert got.rows == [[1024.0, 3, 1, 2, 7, 8, "ab", 2.5, -14, True, True]]
    n = sql_guard.run_sql(db.connection, "SELECT count(DISTINCT content) FROM anatid_memories "
                                         "WHERE content ILIKE 'ADA%' OR content || '!' LIKE '%#1!'")
    assert n.rows == [[len({c for c in contents if c.lower().startswith("ada") or c.endswith("#1")})]]


def test_allowlists_name_only_builtins_of_this_duckdb(memory):
    db, _path, _contents, _before = memory
    builtin = {r[0].lower() for r in db.connection.execute(
        "SELECT function_name FROM duckdb_functions() WHERE internal").fetchall()}
    # Names the parser produces or rewrites that no catalog entry carries (comparisons are
    # COMPARISON nodes in DuckDB 1.x, functions in 2.x; `if` and `overlay` are 2.x built-ins).
    parser_level = {"->", "coalesce", "ifnull", "grouping", "grouping_id", "current_time", "current_timestamp",
                    "localtime", "localtimestamp", "!=", "<", "<=", "=", ">", ">=", "if", "overlay"}
    listed = sql_allow.SCALARS | sql_allow.AGGREGATES | sql_allow.WINDOWS | sql_allow.OPERATORS
    assert sorted(listed - builtin - parser_level) == []
    assert not any(n.startswith("anatid_") for n in sql_allow.FUNCTIONS - sql_allow.ANATID_ALLOWED)
    assert not (sql_allow.FUNCTIONS & {"current_setting", "getvariable", "json_serialize_sql", "query",
                                       "nextval", "setseed", "range", "generate_series", "current_query"})


def test_macros_shadowing_builtins_neither_run_nor_blind_the_guard(tmp_path):
    """A file can define macros named like built-ins (an unqualified call then runs the macro),
    and views named like its tables (whose bodies call what they like): both are refused.
    The query's own calls of such names are refused, and the guard's catalog reads (which name
    system.main.* in full) see the real parse tree and relations, not the macros' answers."""
    db = Anatid.open(str(tmp_path / "m.anatid"))
    try:
        db.remember("Ada prefers tea", entities=["Ada"])
        con = db.connection
        con.execute("CREATE MACRO lower(x) AS current_setting('temp_directory')")
        con.execute("CREATE MACRO current_database() AS 'nowhere'")
        con.execute("CREATE MACRO json_serialize_sql(q) AS "
                    "(SELECT system.main.json_serialize_sql('SELECT 1'))")
        con.execute("CREATE MACRO duckdb_tables() AS TABLE "
                    "SELECT 'pg_settings' AS table_name, current_database() AS database_name, 'main' AS schema_name, "
                    "false AS temporary, false AS internal")
        con.execute("CREATE VIEW anatid_settings AS SELECT system.main.current_setting('temp_directory') AS v")
        sql_guard.harden(con)
        with pytest.raises(sql_guard.SqlRefused, match="'anatid_settings' is a view"):
            sql_guard.run_sql(con, "SELECT * FROM anatid_settings")
        with pytest.raises(sql_guard.SqlRefused, match="'lower' is redefined"):
            sql_guard.run_sql(con, "SELECT lower(content) FROM anatid_memories")
        for attack, name in [("SELECT name, setting FROM pg_settings", "pg_settings"),
                             ("SELECT anatid_graph_cache_stats()", "anatid_graph_cache_stats")]:
            with pytest.raises(sql_guard.SqlRefused, match=name):
                sql_guard.run_sql(con, attack)
        assert sql_guard.run_sql(con, "SELECT upper(content) FROM anatid_memories "
                                      "WHERE content LIKE 'Ada%'").rows == [["ADA PREFERS TEA"]]
    finally:
        db.close()


def test_a_forged_generation_cannot_be_planted_over_stdio(tmp_path):
    """The finding end to end: a fresh --read-only --enable-sql server, whose generation is not
    yet resident, is asked to load a forged one; context() must still answer from the file."""
    pytest.importorskip("mcp", reason='the MCP tests need the mcp package: pip install "anatid[mcp]"')
    from test_mcp_support import mcp_session
    path = tmp_path / "m.anatid"
    with Anatid.open(str(path)) as db:
        db.remember("Ada prefers tea", entities=["Ada"])
        db.remember("Bob likes jazz", entities=["Bob"])
        db.maintain_indexes()
        before = snapshot(db.connection)
    forge = """SELECT anatid_graph_load(g.generation_id, g.nonce,
      (SELECT anatid_graph_build(r.k, r.x, r.y, r.txt, g.generation_id, g.tenant_id, g.built_at) FROM (
         SELECT CAST(0 AS TINYINT) AS k, e.entity_id AS x, CAST(NULL AS BIGINT) AS y, e.name_key AS txt
         FROM anatid_entities e
         UNION ALL
         SELECT CAST(2 AS TINYINT), b.src_id, (SELECT entity_id FROM anatid_entities WHERE name_key = 'ada'), m.kind
         FROM anatid_edges b JOIN anatid_memories m ON m.memory_id = b.src_id WHERE b.kind = 'about') r))
    FROM anatid_graph_generations g"""

    async def go():
        async with mcp_session(path, "--read-only", "--enable-sql") as s:
            refused = error_text(await s.call_tool("sql", {"query": forge}))
            leaks = [error_text(await s.call_tool("sql", {"query": q})) for q in (
                "SELECT name, setting FROM pg_settings WHERE setting LIKE '/%'",
                "SELECT path FROM duckdb_databases", "SELECT file FROM pragma_database_list")]
            ok = payload(await s.call_tool("sql", {"query": "SELECT count(*) AS n FROM anatid_memories "
                                                            "WHERE content LIKE '%a%' AND 1 + 1 = 2"}))
            ctx = payload(await s.call_tool("context", {"entity": "Ada"}))
            return refused, leaks, ok, ctx
    refused, leaks, ok, ctx = anyio.run(go)
    assert "anatid_graph_load" in refused
    assert all(str(tmp_path) not in t and "is a DuckDB catalog or system relation" in t for t in leaks)
    assert ok["rows"] == [[2]]
    assert [h["content"] for h in ctx["hits"]] == ["Ada prefers tea"]
    with Anatid.open(str(path), read_only=True) as db:
        assert snapshot(db.connection) == before


def test_errors_are_typed(memory):
    db, _path, _contents, _before = memory
    with pytest.raises(AnatidError):
        sql_guard.run_sql(db.connection, "SELECT anatid_graph_cache_stats()")
