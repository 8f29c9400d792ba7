"""The graph index: a base generation per tenant plus a journal written with every write.

Tables (sql/derived_graph.sql): `anatid_graph_generations` holds one serialized base per
tenant (src/graph_generation.hpp), `anatid_graph_journal` its marker row and every
write since that base was built. The journal hooks below append rows in the writing
transaction, so the next read (native or not) sees the write with nothing rebuilt;
`maintain(...)` builds a new base from the canonical tables, publishes it and deletes
the journal rows it absorbed, in one transaction.

What a base may trust: a relates edge or a memory whose visibility can change with
the passing of time alone (a future valid_from, a set valid_to) is left out of the
base and written back to the journal with its interval, which every read evaluates
at its own instant. Everything else changes only through a write, hence a journal row.
"""
from __future__ import annotations

import time
from datetime import datetime, timedelta

from ..schema import new_nonce
from ..verbs import journal

FORMAT_VERSION = 1  # src/graph_generation.cpp kFormatVersion
TABLES = ("anatid_graph_generations", "anatid_graph_journal")

OP_BASE, OP_EDGE, OP_EDGE_CLOSED, OP_ABOUT, OP_CLOSED, OP_ERASED = 0, 1, 2, 3, 4, 5


def has_tables(store, cur=None) -> bool:
    """Whether this file has the graph index tables (files made before it do not)."""
    known = getattr(store, "_graph_index_tables", None)
    if known is None:
        cur = cur or store.read()
        n = cur.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                        "AND schema_name = current_schema() AND table_name IN (SELECT unnest($t))",
                        {"t": list(TABLES)}).fetchone()[0]
        known = store._graph_index_tables = (n == len(TABLES))
    return known


def unkeyed(store, cur) -> bool:
    """Whether this file's graph generations predate their nonce column (a read-write open
    adds it, so only a read-only handle sees this): native graph reads refuse them, since
    no cache key tells them from another file's (anatid.schema.legacy_graph_generations)."""
    known = getattr(store, "_graph_unkeyed", None)
    if known is None:
        from ..schema import legacy_graph_generations
        known = store._graph_unkeyed = bool(store.read_only) and legacy_graph_generations(cur or store.read())
    return known


# ---- journal hooks (run inside the writing transaction) --------------------------------

# Every journal row is written through this: `rows` must have the columns tenant_id,
# seq, op, a, b, a_key, b_key, kind, valid_from, valid_to; entry is their text encoding
# (src/graph_codec.hpp: integers in decimal, strings "<bytes>:<text>", empty is NULL).
_INSERT = """
INSERT INTO anatid_graph_journal (tenant_id, seq, op, entry)
SELECT tenant_id, seq, op, concat(
    op, '|', seq, '|', coalesce(CAST(a AS VARCHAR), ''), '|', coalesce(CAST(b AS VARCHAR), ''), '|',
    coalesce(CAST(epoch_us(valid_from) AS VARCHAR), ''), '|', coalesce(CAST(epoch_us(valid_to) AS VARCHAR), ''), '|',
    coalesce(strlen(a_key) || ':' || a_key, ''), '|', coalesce(strlen(b_key) || ':' || b_key, ''), '|',
    coalesce(strlen(kind) || ':' || kind, ''))
FROM ({rows})
"""


def _journal_sql(rows: str) -> str:
    return _INSERT.format(rows=rows)


# Small lookups, not joins against the big tables: list_contains filters each table's
# scan (a join against unnest() planned far slower), and the BETWEEN lets DuckDB skip
# the memories' row groups by their zone maps (the memories were just written).
_ABOUT_ROWS = _journal_sql("""
WITH mem AS (
    SELECT memory_id, kind, valid_from, valid_to FROM anatid_memories
    WHERE tenant_id = $tenant AND tx_to IS NULL AND memory_id BETWEEN $lo AND $hi
      AND list_contains($mids, memory_id)),
ent AS (
    SELECT entity_id, name_key FROM anatid_entities
    WHERE tenant_id = $tenant AND list_contains($eids, entity_id))
SELECT CAST($tenant AS BIGINT) AS tenant_id, CAST($seq AS BIGINT) AS seq, CAST(3 AS TINYINT) AS op,
       p.m AS a, p.e AS b, CAST(NULL AS VARCHAR) AS a_key, ent.name_key AS b_key, mem.kind,
       mem.valid_from, mem.valid_to
FROM (SELECT unnest(CAST($mids AS BIGINT[])) AS m, unnest(CAST($eids AS BIGINT[])) AS e) p
JOIN mem ON mem.memory_id = p.m JOIN ent ON ent.entity_id = p.e""")

# The pair restated whole: one op-1 row per believed relates edge between x and y that
# is or will be valid, or one op-2 row when there is none.
_PAIR_ROWS = _journal_sql("""
WITH believed AS (
    SELECT valid_from, valid_to FROM anatid_edges
    WHERE tenant_id = $tenant AND kind = 'relates' AND tx_to IS NULL
      AND ((src_id = $x AND dst_id = $y) OR (src_id = $y AND dst_id = $x))
      AND (valid_to IS NULL OR valid_to > $now)),
keys AS (
    SELECT max(name_key) FILTER (WHERE entity_id = $x) AS ak, max(name_key) FILTER (WHERE entity_id = $y) AS bk
    FROM anatid_entities WHERE tenant_id = $tenant AND entity_id IN ($x, $y))
SELECT CAST($tenant AS BIGINT) AS tenant_id, CAST($seq AS BIGINT) AS seq, CAST(1 AS TINYINT) AS op,
       CAST($x AS BIGINT) AS a, CAST($y AS BIGINT) AS b, keys.ak AS a_key, keys.bk AS b_key,
       CAST(NULL AS VARCHAR) AS kind, believed.valid_from, believed.valid_to
FROM believed, keys
UNION ALL
SELECT $tenant, $seq, 2, $x, $y, keys.ak, keys.bk, NULL, NULL, NULL FROM keys
WHERE NOT EXISTS (SELECT 1 FROM believed)""")

_MEMORY_ROWS = _journal_sql("""
SELECT CAST($tenant AS BIGINT) AS tenant_id, CAST($seq AS BIGINT) AS seq, CAST($op AS TINYINT) AS op,
       unnest(CAST($ids AS BIGINT[])) AS a, CAST(NULL AS BIGINT) AS b, CAST(NULL AS VARCHAR) AS a_key,
       CAST(NULL AS VARCHAR) AS b_key, CAST(NULL AS VARCHAR) AS kind,
       CAST(NULL AS TIMESTAMP) AS valid_from, CAST(NULL AS TIMESTAMP) AS valid_to""")


# The same rows from values the writer already holds: no read of any table, and the
# entry encoded here (byte-for-byte what _INSERT's concat() makes: instants are naive UTC
# datetimes, so epoch microseconds are exact integer arithmetic).
_EPOCH = datetime(1970, 1, 1)
_US = timedelta(microseconds=1)
_ENTRIES_KNOWN = """
INSERT INTO anatid_graph_journal (tenant_id, seq, op, entry)
SELECT $tenant, $seq, $op, unnest(CAST($entries AS VARCHAR[]))
"""


def _text(v) -> str:
    return "" if v is None else f"{len(v.encode('utf-8'))}:{v}"


def _us(t) -> str:
    return "" if t is None else str((t - _EPOCH) // _US)


def encode_entry(op, seq, a, b, valid_from, valid_to, a_key, b_key, kind) -> str:
    return "|".join((str(op), str(seq), "" if a is None else str(a), "" if b is None else str(b),
                     _us(valid_from), _us(valid_to), _text(a_key), _text(b_key), _text(kind)))


# The same rows from a relation of the state after the write (journal.about_added's rel).
_ABOUT_FROM_REL = """SELECT CAST($tenant AS BIGINT) AS tenant_id, CAST($seq AS BIGINT) AS seq,
       CAST(3 AS TINYINT) AS op, a, b, CAST(NULL AS VARCHAR) AS a_key, b_key, kind, valid_from, valid_to
FROM {rel}"""


def _about_added(store, cur, pairs, now, known=None, rel=None) -> None:
    if rel is not None:
        if has_tables(store, cur):
            cur.execute(_journal_sql(_ABOUT_FROM_REL.format(rel=rel)), {"tenant": store.tenant,
                                                                         "seq": store.ids.take()[0]})
        return
    if not pairs or not has_tables(store, cur):
        return
    mids = [int(m) for m, _ in pairs]
    if known is not None:
        seq = store.ids.take()[0]
        cur.execute(_ENTRIES_KNOWN, {"tenant": store.tenant, "seq": seq, "op": OP_ABOUT, "entries": [
            encode_entry(OP_ABOUT, seq, m, int(e), vf, vt, None, key, kind)
            for (m, e), (kind, vf, vt, key) in zip(zip(mids, (e for _, e in pairs)), known)]})
        return
    cur.execute(_ABOUT_ROWS, {"tenant": store.tenant, "seq": store.ids.take()[0], "mids": mids,
                              "eids": [int(e) for _, e in pairs], "lo": min(mids), "hi": max(mids)})


def _relation_changed(store, cur, src_id, dst_id, now) -> None:
    if not has_tables(store, cur):
        return
    cur.execute(_PAIR_ROWS, {"tenant": store.tenant, "seq": store.ids.take()[0], "x": int(src_id),
                             "y": int(dst_id), "now": now})


# _PAIR_ROWS for many (x, y) pairs in one statement (one seq for them all).
_PAIRS_ROWS = _journal_sql("""
WITH req AS (
    SELECT DISTINCT x, y FROM (SELECT unnest(CAST($xs AS BIGINT[])) AS x, unnest(CAST($ys AS BIGINT[])) AS y)),
believed AS (
    SELECT r.x, r.y, e.valid_from, e.valid_to FROM req r JOIN (
        SELECT src_id, dst_id, valid_from, valid_to FROM anatid_edges
        WHERE tenant_id = $tenant AND kind = 'relates' AND tx_to IS NULL
          AND (valid_to IS NULL OR valid_to > $now)
          AND list_contains($ents, src_id) AND list_contains($ents, dst_id)) e
      ON (e.src_id = r.x AND e.dst_id = r.y) OR (e.src_id = r.y AND e.dst_id = r.x)),
keys AS (
    SELECT entity_id, name_key FROM anatid_entities WHERE tenant_id = $tenant AND list_contains($ents, entity_id))
SELECT CAST($tenant AS BIGINT) AS tenant_id, CAST($seq AS BIGINT) AS seq, CAST(1 AS TINYINT) AS op,
       b.x AS a, b.y AS b, kx.name_key AS a_key, ky.name_key AS b_key,
       CAST(NULL AS VARCHAR) AS kind, b.valid_from, b.valid_to
FROM believed b LEFT JOIN keys kx ON kx.entity_id = b.x LEFT JOIN keys ky ON ky.entity_id = b.y
UNION ALL
SELECT $tenant, $seq, 2, r.x, r.y, kx.name_key, ky.name_key, NULL, NULL, NULL
FROM req r LEFT JOIN keys kx ON kx.entity_id = r.x LEFT JOIN keys ky ON ky.entity_id = r.y
WHERE NOT EXISTS (SELECT 1 FROM believed b WHERE b.x = r.x AND b.y = r.y)""")


def _relations_changed(store, cur, pairs, now) -> None:
    if not pairs or not has_tables(store, cur):
        return
    xs, ys = [int(x) for x, _ in pairs], [int(y) for _, y in pairs]
    cur.execute(_PAIRS_ROWS, {"tenant": store.tenant, "seq": store.ids.take()[0], "xs": xs, "ys": ys,
                              "ents": sorted(set(xs) | set(ys)), "now": now})


def _memory_closed(store, cur, memory_ids, now) -> None:
    if memory_ids and has_tables(store, cur):
        cur.execute(_MEMORY_ROWS, {"tenant": store.tenant, "seq": store.ids.take()[0], "op": OP_CLOSED,
                                   "ids": [int(m) for m in memory_ids]})


def _memory_erased(store, cur, memory_id) -> None:
    if has_tables(store, cur):
        cur.execute(_MEMORY_ROWS, {"tenant": store.tenant, "seq": store.ids.take()[0], "op": OP_ERASED,
                                   "ids": [int(memory_id)]})


journal.register("about_added", _about_added)
journal.register("relation_changed", _relation_changed)
journal.register("relations_changed", _relations_changed)
journal.register("memory_closed", _memory_closed)
journal.register("memory_erased", _memory_erased)


# ---- building and publishing a generation ----------------------------------------------

# Rows for anatid_graph_build, every listed tenant at once (grouped by tenant).
_BUILD = """
WITH t AS (SELECT unnest($tenants) AS tenant_id, unnest($gens) AS gen)
SELECT t.tenant_id, t.gen, anatid_graph_build(r.k, r.x, r.y, r.txt, t.gen, t.tenant_id, $built_at) AS blob,
       count(*) FILTER (WHERE r.k = 0) AS entities, count(*) FILTER (WHERE r.k = 1) AS edges,
       count(DISTINCT r.x) FILTER (WHERE r.k = 2) AS memories
FROM t LEFT JOIN (
    SELECT tenant_id, CAST(0 AS TINYINT) AS k, entity_id AS x, CAST(NULL AS BIGINT) AS y, name_key AS txt
    FROM anatid_entities WHERE tenant_id IN (SELECT unnest($tenants))
    UNION ALL
    SELECT tenant_id, CAST(1 AS TINYINT), src_id, dst_id, NULL FROM anatid_edges
    WHERE tenant_id IN (SELECT unnest($tenants)) AND kind = 'relates' AND tx_to IS NULL
      AND valid_to IS NULL AND valid_from <= $built_at
    UNION ALL
    SELECT a.tenant_id, CAST(2 AS TINYINT), a.src_id, a.dst_id, m.kind
    FROM anatid_edges a JOIN anatid_memories m ON m.memory_id = a.src_id AND m.tenant_id = a.tenant_id
    WHERE a.tenant_id IN (SELECT unnest($tenants)) AND a.kind = 'about' AND m.tx_to IS NULL
      AND m.valid_to IS NULL AND m.valid_from <= $built_at
) r ON r.tenant_id = t.tenant_id
GROUP BY t.tenant_id, t.gen
"""

# The base marker names the generation and its nonce (b): the native cache key.
_MARKERS = _journal_sql("""
SELECT unnest(CAST($tenants AS BIGINT[])) AS tenant_id, CAST($seq AS BIGINT) AS seq, CAST(0 AS TINYINT) AS op,
       unnest(CAST($gens AS BIGINT[])) AS a, unnest(CAST($nonces AS BIGINT[])) AS b, CAST(NULL AS VARCHAR) AS a_key,
       CAST(NULL AS VARCHAR) AS b_key, CAST(NULL AS VARCHAR) AS kind,
       CAST(NULL AS TIMESTAMP) AS valid_from, CAST(NULL AS TIMESTAMP) AS valid_to""")

# What the base leaves out because time alone can change it, back into the journal.
_VOLATILE_ABOUT = _journal_sql("""
SELECT a.tenant_id, CAST($seq AS BIGINT) AS seq, CAST(3 AS TINYINT) AS op, a.src_id AS a, a.dst_id AS b,
       CAST(NULL AS VARCHAR) AS a_key, e.name_key AS b_key, m.kind, m.valid_from, m.valid_to
FROM anatid_edges a
JOIN anatid_memories m ON m.memory_id = a.src_id AND m.tenant_id = a.tenant_id
JOIN anatid_entities e ON e.entity_id = a.dst_id AND e.tenant_id = a.tenant_id
WHERE a.tenant_id IN (SELECT unnest($tenants)) AND a.kind = 'about' AND m.tx_to IS NULL
  AND (m.valid_from > $built_at OR (m.valid_to IS NOT NULL AND m.valid_to > $built_at))""")

_VOLATILE_PAIRS = _journal_sql("""
WITH pairs AS (
    SELECT DISTINCT tenant_id, least(src_id, dst_id) AS x, greatest(src_id, dst_id) AS y FROM anatid_edges
    WHERE tenant_id IN (SELECT unnest($tenants)) AND kind = 'relates' AND tx_to IS NULL
      AND (valid_from > $built_at OR (valid_to IS NOT NULL AND valid_to > $built_at)))
SELECT p.tenant_id, CAST($seq AS BIGINT) AS seq, CAST(1 AS TINYINT) AS op, p.x AS a, p.y AS b,
       ex.name_key AS a_key, ey.name_key AS b_key, CAST(NULL AS VARCHAR) AS kind, e.valid_from, e.valid_to
FROM pairs p
JOIN anatid_edges e ON e.tenant_id = p.tenant_id AND e.kind = 'relates' AND e.tx_to IS NULL
     AND least(e.src_id, e.dst_id) = p.x AND greatest(e.src_id, e.dst_id) = p.y
     AND (e.valid_to IS NULL OR e.valid_to > $built_at)
JOIN anatid_entities ex ON ex.entity_id = p.x
JOIN anatid_entities ey ON ey.entity_id = p.y""")


def tenants_in_file(cur) -> list[int]:
    rows = cur.execute("SELECT tenant_id FROM anatid_entities UNION SELECT tenant_id FROM anatid_memories "
                       "ORDER BY 1").fetchall()
    return [int(r[0]) for r in rows]


def maintain(store, *, all_tenants: bool = False, only=None) -> dict:
    """Build, publish and load a new base generation for the handle's tenant (or every
    tenant in the file, or the tenants listed in `only`), absorbing the journal rows this
    transaction sees. One transaction."""
    from ..errors import AnatidError
    if not store.native.loaded:
        # nothing could read a generation; reads stay on the SQL oracle, which is correct
        return {"index": "graph", "skipped": f"the native extension is not loaded: {store.native.reason}"}
    started = time.perf_counter()
    with store.write() as cur:
        if not has_tables(store, cur):
            raise AnatidError("this file has no graph index tables (it predates them); "
                              "create them with the statements of anatid/sql/derived_graph.sql")
        built_at = store.write_instant(None)
        tenants = tenants_in_file(cur) if all_tenants else [store.tenant]
        if all_tenants and store.tenant not in tenants:
            tenants.append(store.tenant)
        if only is not None:          # maintain_indexes(): the tenants that are due
            tenants = sorted({int(t) for t in only})
        gens = store.ids.take(len(tenants))
        # ids are unique per file only: the nonce keeps another file's equal id out of our cache entry
        nonces = [new_nonce() for _ in gens]
        p = {"tenants": tenants, "built_at": built_at}
        absorbed = cur.execute("SELECT count(*) FROM anatid_graph_journal WHERE tenant_id IN (SELECT unnest($tenants)) "
                               "AND op <> 0", {"tenants": tenants}).fetchone()[0]
        cur.execute("DELETE FROM anatid_graph_journal WHERE tenant_id IN (SELECT unnest($tenants))",
                    {"tenants": tenants})
        cur.execute("DELETE FROM anatid_graph_generations WHERE tenant_id IN (SELECT unnest($tenants))",
                    {"tenants": tenants})
        cur.execute(f"""
            INSERT INTO anatid_graph_generations (generation_id, tenant_id, built_at, format_version, entities,
                                                  edges, memories, bytes, blob, nonce)
            SELECT b.gen, b.tenant_id, $built_at, {FORMAT_VERSION}, b.entities, b.edges, b.memories,
                   octet_length(b.blob), b.blob, n.nonce
            FROM ({_BUILD}) b
            JOIN (SELECT unnest(CAST($gens AS BIGINT[])) AS gen, unnest(CAST($nonces AS BIGINT[])) AS nonce) n
              ON n.gen = b.gen""", {**p, "gens": gens, "nonces": nonces})
        cur.execute(_MARKERS, {"tenants": tenants, "gens": gens, "nonces": nonces, "seq": store.ids.take()[0]})
        cur.execute(_VOLATILE_ABOUT, {**p, "seq": store.ids.take()[0]})
        cur.execute(_VOLATILE_PAIRS, {**p, "seq": store.ids.take()[0]})
        rows = cur.execute("SELECT tenant_id, generation_id, entities, edges, memories, bytes "
                           "FROM anatid_graph_generations WHERE tenant_id IN (SELECT unnest($tenants)) "
                           "ORDER BY tenant_id", {"tenants": tenants}).fetchall()
        # parse them now, so the first read after maintenance does not pay for it
        cur.execute("SELECT anatid_graph_load(generation_id, nonce, blob) FROM anatid_graph_generations "
                    "WHERE generation_id IN (SELECT unnest($gens))", {"gens": gens}).fetchall()
    return {"index": "graph", "tenants": [
        {"tenant": int(t), "generation_id": str(g), "entities": int(e), "edges": int(d), "memories": int(m),
         "bytes": int(b)} for t, g, e, d, m, b in rows],
        "journal_rows_absorbed": int(absorbed), "seconds": round(time.perf_counter() - started, 3)}


def status(store, cur) -> dict:
    """The tenant's generation and journal, for stats()."""
    if not has_tables(store, cur):
        return {"tables": False}
    gen = cur.execute("SELECT generation_id, built_at, bytes FROM anatid_graph_generations WHERE tenant_id = $t",
                      {"t": store.tenant}).fetchone()
    pending = cur.execute("SELECT count(*) FROM anatid_graph_journal WHERE tenant_id = $t AND op <> 0",
                          {"t": store.tenant}).fetchone()[0]
    return {"tables": True, "generation_id": None if gen is None else str(gen[0]),
            "built_at": None if gen is None else gen[1], "bytes": None if gen is None else int(gen[2]),
            "journal_rows": int(pending)}
