// The anatid.anatid_recall_2hop table macro: native graph recall in one statement.
//
//   SELECT * FROM anatid.anatid_recall_2hop(0, ['Ada'])                 -- 2 hops, 50 hits
//   SELECT * FROM anatid.anatid_recall_2hop(0, ['Ada', 'Paris'], hops := 3, max_hits := 10,
//                                           kinds := ['fact'], valid_at := TIMESTAMP '...')
//   -> memory_id BIGINT, hop INTEGER, score DOUBLE   (hop ascending, memory_id descending)
//
// With a generation: one scan of the tenant's anatid_graph_journal entries (the base marker plus every
// write since the base was built) feeds the aggregate anatid_graph_recall in the
// caller's transaction. The generation BLOB is added as one more row only when this
// process has not parsed that generation (anatid_graph_resident, keyed by id and nonce);
// the CASE makes the join key -1 otherwise, and DuckDB's join-filter pushdown then skips
// the BLOB column. A tenant with neither a generation nor a base marker (a file that never
// ran maintain_indexes()) is answered by the SQL oracle's walk over the canonical tables,
// as anatid_hybrid's graph arm is, so a fresh file answers with the ids of recall_2hop().
#pragma once

namespace anatid {

constexpr const char *kRecall2HopMacroParameters =
    "(tenant, seeds, hops := 2, max_hits := 50, kinds := NULL, valid_at := NULL)";

constexpr const char *kRecall2HopMacroBody = R"SQL(
WITH RECURSIVE
q AS (SELECT CAST(tenant AS BIGINT) AS t, CAST(hops AS INTEGER) AS h, CAST(max_hits AS BIGINT) AS lim,
             CAST(kinds AS VARCHAR[]) AS kinds,
             coalesce(CAST(valid_at AS TIMESTAMP), make_timestamp(epoch_us(now()))) AS at_ts,
             -- validates hops and max_hits on both paths
             anatid_graph_request(CAST(seeds AS VARCHAR[]), CAST(hops AS INTEGER), CAST(max_hits AS BIGINT),
                                  CAST(kinds AS VARCHAR[]), CAST(valid_at AS TIMESTAMP), true) AS request,
             -- fresh: neither a generation nor a base marker naming one (that is a damaged state)
             NOT EXISTS (SELECT 1 FROM anatid_graph_generations WHERE tenant_id = CAST(tenant AS BIGINT))
             AND NOT EXISTS (SELECT 1 FROM anatid_graph_journal
                             WHERE tenant_id = CAST(tenant AS BIGINT) AND op = 0) AS fresh),
-- the tenant the walk reads, -1 (no tenant: they are 0 .. 2**63-1) unless fresh, so that the
-- scans' tenant filters prune every row group when a generation answers (a plain join on
-- an empty walk still read the tenant's memories: about 11 ms at 1M)
w AS (SELECT CASE WHEN q.fresh THEN q.t ELSE -1 END AS wt FROM q),
native AS (
    SELECT unnest(anatid_graph_recall(r.entry, q.request, r.blob), recursive := true)
    FROM (SELECT j.entry, CAST(NULL AS BLOB) AS blob
          FROM anatid_graph_journal j WHERE j.tenant_id = CAST(tenant AS BIGINT)
          UNION ALL
          SELECT concat('9||', g.generation_id, '|', g.nonce, '|||||'), g.blob
          FROM (SELECT generation_id AS gen, nonce FROM anatid_graph_generations
                WHERE tenant_id = CAST(tenant AS BIGINT)) cur
          JOIN anatid_graph_generations g
            ON g.generation_id = CASE WHEN anatid_graph_resident(cur.gen, cur.nonce) THEN -1 ELSE cur.gen END) r, q
    WHERE NOT q.fresh),
-- No generation yet (a file that never ran maintain_indexes()): the walk of the SQL oracle
-- (verbs/graph_sql.py) over the canonical tables, so rows written without a journal row
-- are found too. Seeds fold as the native request folds them (ASCII case, whitespace runs).
seed_ents AS (
    SELECT e.entity_id FROM anatid_entities e, q, w
    WHERE q.fresh AND e.tenant_id = w.wt AND e.name_key IN (
        SELECT translate(trim(regexp_replace(s, '[\t\n\v\f\r ]+', ' ', 'g')),
                         'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
        FROM (SELECT unnest(CAST(seeds AS VARCHAR[])) AS s))),
live AS (
    SELECT e.src_id AS a, e.dst_id AS b FROM anatid_edges e, q, w
    WHERE q.fresh AND e.kind = 'relates' AND e.tenant_id = w.wt AND e.tx_to IS NULL
      AND e.valid_from <= q.at_ts AND (e.valid_to IS NULL OR e.valid_to > q.at_ts)
    UNION ALL
    SELECT e.dst_id AS a, e.src_id AS b FROM anatid_edges e, q, w
    WHERE q.fresh AND e.kind = 'relates' AND e.tenant_id = w.wt AND e.tx_to IS NULL
      AND e.valid_from <= q.at_ts AND (e.valid_to IS NULL OR e.valid_to > q.at_ts)),
walk(entity_id, hop) AS (
    SELECT entity_id, 0 FROM seed_ents
    UNION
    SELECT live.b, walk.hop + 1 FROM walk JOIN live ON live.a = walk.entity_id WHERE walk.hop < (SELECT h FROM q)),
reached AS (SELECT entity_id, min(hop) AS hop FROM walk GROUP BY entity_id),
about AS (
    SELECT a.src_id AS memory_id, min(r.hop) AS hop
    FROM anatid_edges a JOIN reached r ON a.dst_id = r.entity_id, w
    WHERE a.kind = 'about' AND a.tenant_id = w.wt
    GROUP BY a.src_id),
walked AS (
    SELECT m.memory_id, CAST(about.hop AS INTEGER) AS hop, CAST(1 AS DOUBLE) / (1 + about.hop) AS score
    FROM about JOIN anatid_memories m ON m.memory_id = about.memory_id, q, w
    WHERE m.tenant_id = w.wt AND m.tx_to IS NULL
      AND m.valid_from <= q.at_ts AND (m.valid_to IS NULL OR m.valid_to > q.at_ts)
      AND (q.kinds IS NULL OR list_contains(q.kinds, m.kind))
    ORDER BY about.hop ASC, m.memory_id DESC
    LIMIT (SELECT lim FROM q))
SELECT memory_id, hop, score FROM native
UNION ALL
SELECT memory_id, hop, score FROM walked
ORDER BY hop ASC, memory_id DESC
)SQL";

// Column-compatible TEMP stubs for CREATE-time binding (see MacroDef::stubs).
constexpr const char *kRecall2HopMacroStubs = R"SQL(
CREATE TEMP TABLE IF NOT EXISTS anatid_memories (memory_id BIGINT, version INTEGER, tenant_id BIGINT,
    content VARCHAR, kind VARCHAR, valid_from TIMESTAMP, valid_to TIMESTAMP, tx_from TIMESTAMP, tx_to TIMESTAMP);
CREATE TEMP TABLE IF NOT EXISTS anatid_entities (entity_id BIGINT, tenant_id BIGINT, name VARCHAR, name_key VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS anatid_edges (edge_id BIGINT, tenant_id BIGINT, kind VARCHAR, src_id BIGINT,
    dst_id BIGINT, valid_from TIMESTAMP, valid_to TIMESTAMP, tx_from TIMESTAMP, tx_to TIMESTAMP);
CREATE TEMP TABLE IF NOT EXISTS anatid_graph_journal (tenant_id BIGINT, seq BIGINT, op TINYINT, entry VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS anatid_graph_generations (generation_id BIGINT, tenant_id BIGINT,
    built_at TIMESTAMP, format_version INTEGER, entities BIGINT, edges BIGINT, memories BIGINT, bytes BIGINT,
    blob BLOB, nonce BIGINT)
)SQL";

} // namespace anatid
