// The anatid.anatid_recall_2hop table macro: native graph recall in one statement.
//
//   SELECT * FROM anatid.anatid_recall_2hop(0, ['Ada'])                 -- 2 hops, 50 hits
//   SELECT * FROM anatid.anatid_recall_2hop(0, ['Ada', 'Paris'], hops := 3, max_hits := 10,
//                                           kinds := ['fact'], valid_at := TIMESTAMP '...')
//   -> memory_id BIGINT, hop INTEGER, score DOUBLE   (hop ascending, memory_id descending)
//
// One scan of the tenant's anatid_graph_journal entries (the base marker plus every
// write since the base was built) feeds the aggregate anatid_graph_recall in the
// caller's transaction. The generation BLOB is added as one more row only when this
// process has not parsed that generation (anatid_graph_resident, keyed by id and nonce);
// the CASE makes the join key -1 otherwise, and DuckDB's join-filter pushdown then skips
// the BLOB column.
#pragma once

namespace anatid {

constexpr const char *kRecall2HopMacroParameters =
    "(tenant, seeds, hops := 2, max_hits := 50, kinds := NULL, valid_at := NULL)";

constexpr const char *kRecall2HopMacroBody = R"SQL(
SELECT unnest(anatid_graph_recall(r.entry,
                                  anatid_graph_request(CAST(seeds AS VARCHAR[]), CAST(hops AS INTEGER),
                                                       CAST(max_hits AS BIGINT), CAST(kinds AS VARCHAR[]),
                                                       CAST(valid_at AS TIMESTAMP), true),
                                  r.blob), recursive := true)
FROM (SELECT j.entry, CAST(NULL AS BLOB) AS blob
      FROM anatid_graph_journal j WHERE j.tenant_id = CAST(tenant AS BIGINT)
      UNION ALL
      SELECT concat('9||', g.generation_id, '|', g.nonce, '|||||'), g.blob
      FROM (SELECT generation_id AS gen, nonce FROM anatid_graph_generations
            WHERE tenant_id = CAST(tenant AS BIGINT)) cur
      JOIN anatid_graph_generations g
        ON g.generation_id = CASE WHEN anatid_graph_resident(cur.gen, cur.nonce) THEN -1 ELSE cur.gen END) r
)SQL";

// Column-compatible TEMP stubs for CREATE-time binding (see MacroDef::stubs).
constexpr const char *kRecall2HopMacroStubs = R"SQL(
CREATE TEMP TABLE IF NOT EXISTS anatid_graph_journal (tenant_id BIGINT, seq BIGINT, op TINYINT, entry VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS anatid_graph_generations (generation_id BIGINT, tenant_id BIGINT,
    built_at TIMESTAMP, format_version INTEGER, entities BIGINT, edges BIGINT, memories BIGINT, bytes BIGINT,
    blob BLOB, nonce BIGINT)
)SQL";

} // namespace anatid
