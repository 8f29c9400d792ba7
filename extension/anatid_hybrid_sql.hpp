// The anatid.anatid_hybrid table macro: hybrid recall in one statement.
//
//   SELECT * FROM anatid.anatid_hybrid('is friday''s menu safe', tenant := 0, k := 10,
//                                      qvec := [...], seeds := ['Dinner'])
//
// It reads, in the caller's transaction: each base generation's id (and its BLOB parts
// only when this process has not parsed them: the CASE turns the join key into -1, and
// DuckDB's join-filter pushdown then skips the parts' row group), each journal (one
// row per write with the memory's state after it: postings, length, vector,
// validity; the latest row of a memory wins), and the graph arm (the walk of verbs/graph_sql.py). The native
// anatid_hybrid_rank scores, ranks and fuses; the top k are hydrated from
// anatid_memories. Tokenizing stays in SQL (python/anatid/text.py's pattern), so the
// SQL oracle and this path see the same terms. Current view only: the Python package
// answers as_of and kinds reads with the SQL oracle.
#pragma once

namespace anatid {

constexpr const char *kHybridMacroParameters =
    "(query, tenant := 0, k := 10, qvec := NULL, qnorm := NULL, seeds := NULL, depth := 50, wv := 1.0, "
    "wt := 1.0, wg := 1.0, valid_at := NULL, text_ceiling := 100000, vector_ceiling := 100000)";

constexpr const char *kHybridMacroBody = R"SQL(
WITH RECURSIVE
p AS (
    SELECT CAST(tenant AS BIGINT) AS t,
           coalesce(CAST(valid_at AS TIMESTAMP), make_timestamp(epoch_us(now()))) AS at_ts,
           epoch_us(coalesce(CAST(valid_at AS TIMESTAMP), make_timestamp(epoch_us(now())))) AS at_us,
           CASE WHEN trim(coalesce(CAST(query AS VARCHAR), '')) <> '' THEN
               list_sort(list_distinct(regexp_extract_all(lower(CAST(query AS VARCHAR)), '[\p{L}\p{M}\p{N}]+')))
           ELSE [] END AS terms,
           regexp_extract_all(lower(coalesce(CAST(query AS VARCHAR), '')), '[\p{L}\p{M}\p{N}]+') AS qtokens,
           CAST(qvec AS DOUBLE[]) AS qv,
           CAST(seeds AS VARCHAR[]) AS seed_names,
           greatest(CAST(depth AS BIGINT), CAST(k AS BIGINT)) AS d
),
tg AS (SELECT max(g.gen_id) AS gen, max(g.nonce) AS nonce FROM anatid_text_gen g, p
       WHERE g.tenant_id = p.t AND len(p.terms) > 0),
tparts AS (SELECT list(x.payload ORDER BY x.part) AS parts FROM tg JOIN anatid_text_gen_parts x
           ON x.gen_id = CASE WHEN tg.gen IS NULL OR anatid_hybrid_cached('text', tg.gen, tg.nonce) THEN -1 ELSE tg.gen END),
-- The journal: each memory's latest state since the generation, in one scan.
tlatest AS (SELECT j.memory_id, j.doc_len, j.vf, j.vt, j.postings FROM anatid_text_journal j, p
            WHERE j.tenant_id = p.t AND len(p.terms) > 0
            QUALIFY row_number() OVER (PARTITION BY j.memory_id ORDER BY j.seq DESC) = 1),
tin AS (SELECT list(memory_id) AS touched,
               list(memory_id) FILTER (WHERE doc_len IS NOT NULL) AS ids,
               list(doc_len) FILTER (WHERE doc_len IS NOT NULL) AS lens,
               list(vf) FILTER (WHERE doc_len IS NOT NULL) AS vf,
               list(vt) FILTER (WHERE doc_len IS NOT NULL) AS vt,
               list(postings) FILTER (WHERE doc_len IS NOT NULL) AS postings FROM tlatest),
-- Without a generation the journal must hold every document: counted, so that rows
-- written by plain SQL (no journal) are reported instead of silently missing.
tcount AS (SELECT count(*) AS n FROM anatid_text_docs d, p, tg
           WHERE d.tenant_id = p.t AND len(p.terms) > 0 AND tg.gen IS NULL),
vg AS (SELECT max(g.gen_id) AS gen, max(g.nonce) AS nonce FROM anatid_vector_gen g, p
       WHERE g.tenant_id = p.t AND p.qv IS NOT NULL),
vparts AS (SELECT list(x.payload ORDER BY x.part) AS parts FROM vg JOIN anatid_vector_gen_parts x
           ON x.gen_id = CASE WHEN vg.gen IS NULL OR anatid_hybrid_cached('vector', vg.gen, vg.nonce) THEN -1 ELSE vg.gen END),
vlatest AS (SELECT j.memory_id, j.vf, j.vt, j.norm, j.embedding FROM anatid_vector_journal j, p
            WHERE j.tenant_id = p.t AND p.qv IS NOT NULL
            QUALIFY row_number() OVER (PARTITION BY j.memory_id ORDER BY j.seq DESC) = 1),
vin AS (SELECT list(memory_id) AS touched,
               list(memory_id) FILTER (WHERE norm IS NOT NULL) AS ids,
               list(vf) FILTER (WHERE norm IS NOT NULL) AS vf,
               list(vt) FILTER (WHERE norm IS NOT NULL) AS vt,
               list(norm) FILTER (WHERE norm IS NOT NULL) AS norms,
               list(embedding) FILTER (WHERE norm IS NOT NULL) AS embs FROM vlatest),
vcount AS (SELECT count(*) AS n FROM anatid_embeddings e JOIN anatid_memories m ON m.memory_id = e.memory_id, p, vg
           WHERE e.tenant_id = p.t AND m.tx_to IS NULL AND p.qv IS NOT NULL AND vg.gen IS NULL),
seed_keys AS (SELECT lower(regexp_replace(trim(s), '\s+', ' ', 'g')) AS name_key
              FROM (SELECT unnest(p.seed_names) AS s FROM p)),
seed_ents AS (
    SELECT e.entity_id FROM anatid_entities e, p
    WHERE e.tenant_id = p.t AND p.seed_names IS NOT NULL AND e.name_key IN (SELECT name_key FROM seed_keys)
    UNION
    SELECT e.entity_id FROM anatid_entities e, p
    WHERE e.tenant_id = p.t AND p.seed_names IS NULL AND len(p.terms) > 0
      -- every name token must be a query token, so the name contains one: a cheap test first
      AND list_bool_or(list_transform(p.terms, lambda x: contains(e.name_key, x)))
      AND len(regexp_extract_all(lower(e.name), '[\p{L}\p{M}\p{N}]+')) > 0
      AND list_has_all(p.qtokens, regexp_extract_all(lower(e.name), '[\p{L}\p{M}\p{N}]+'))),
live AS (
    SELECT e.src_id AS a, e.dst_id AS b FROM anatid_edges e, p
    WHERE e.kind = 'relates' AND e.tenant_id = p.t AND e.tx_to IS NULL
      AND e.valid_from <= p.at_ts AND (e.valid_to IS NULL OR e.valid_to > p.at_ts)
    UNION ALL
    SELECT e.dst_id AS a, e.src_id AS b FROM anatid_edges e, p
    WHERE e.kind = 'relates' AND e.tenant_id = p.t AND e.tx_to IS NULL
      AND e.valid_from <= p.at_ts AND (e.valid_to IS NULL OR e.valid_to > p.at_ts)),
walk(entity_id, hop) AS (
    SELECT entity_id, 0 FROM seed_ents
    UNION
    SELECT live.b, walk.hop + 1 FROM walk JOIN live ON live.a = walk.entity_id WHERE walk.hop < 2),
reached AS (SELECT entity_id, min(hop) AS hop FROM walk GROUP BY entity_id),
about AS (
    SELECT a.src_id AS memory_id, min(r.hop) AS hop
    FROM anatid_edges a JOIN reached r ON a.dst_id = r.entity_id, p
    WHERE a.kind = 'about' AND a.tenant_id = p.t
    GROUP BY a.src_id),
garm AS (
    SELECT m.memory_id, about.hop FROM about JOIN anatid_memories m ON m.memory_id = about.memory_id, p
    WHERE m.tenant_id = p.t AND m.tx_to IS NULL
      AND m.valid_from <= p.at_ts AND (m.valid_to IS NULL OR m.valid_to > p.at_ts)
    ORDER BY about.hop ASC, m.memory_id DESC
    LIMIT (SELECT d FROM p)),
g_agg AS (SELECT list(memory_id ORDER BY hop ASC, memory_id DESC) AS ids,
                 list(hop ORDER BY hop ASC, memory_id DESC) AS hops FROM garm),
-- The one-row inputs are joined two at a time through MATERIALIZED CTEs: as one flat
-- 11-way cross product, DuckDB's join-order search alone cost about 22 ms per call.
r1 AS MATERIALIZED (SELECT p.*, tg.gen AS tgen, tg.nonce AS tnonce, tparts.parts AS tparts FROM p, tg, tparts),
r2 AS MATERIALIZED (SELECT r1.*, tin.touched AS t_touched, tin.ids AS d_ids, tin.lens AS d_lens, tin.vf AS d_vf,
                           tin.vt AS d_vt, tin.postings AS d_postings, tcount.n AS d_count
                    FROM r1, tin, tcount),
r3 AS MATERIALIZED (SELECT r2.*, vg.gen AS vgen, vg.nonce AS vnonce, vparts.parts AS vparts FROM r2, vg, vparts),
r4 AS MATERIALIZED (SELECT r3.*, vin.touched AS v_touched, vin.ids AS v_ids, vin.vf AS v_vf, vin.vt AS v_vt,
                           vin.norms AS v_norms, vin.embs AS v_embs, vcount.n AS v_count FROM r3, vin, vcount),
r5 AS MATERIALIZED (SELECT r4.*, g_agg.ids AS g_ids, g_agg.hops AS g_hops FROM r4, g_agg),
ranked AS (
    SELECT unnest(anatid_hybrid_rank(
        tgen, tnonce, tparts, terms, t_touched, d_ids, d_lens, d_vf, d_vt, d_postings,
        CASE WHEN tgen IS NULL THEN d_count END,
        vgen, vnonce, vparts, qv, coalesce(CAST(qnorm AS DOUBLE), sqrt(list_dot_product(qv, qv))), v_touched,
        v_ids, v_vf, v_vt, v_norms, CAST(v_embs AS FLOAT[][]), CASE WHEN vgen IS NULL THEN v_count END,
        g_ids, g_hops, at_us, d, CAST(k AS BIGINT), CAST(wv AS DOUBLE), CAST(wt AS DOUBLE), CAST(wg AS DOUBLE),
        CAST(text_ceiling AS BIGINT), CAST(vector_ceiling AS BIGINT))) AS h
    FROM r5)
SELECT h.memory_id AS memory_id, m.content AS content, m.kind AS kind, h.score AS score,
       h.rv AS rank_vector, h.rt AS rank_text, h.rg AS rank_graph, h.hop AS hop
FROM ranked JOIN anatid_memories m ON m.memory_id = h.memory_id AND m.tx_to IS NULL
ORDER BY h.score DESC, h.memory_id ASC
)SQL";

// Column-compatible TEMP stubs of what the body reads (see MacroDef::stubs).
constexpr const char *kHybridMacroStubs = R"SQL(
CREATE TEMP TABLE IF NOT EXISTS anatid_memories (memory_id BIGINT, version INTEGER, tenant_id BIGINT,
    content VARCHAR, kind VARCHAR, valid_from TIMESTAMP, valid_to TIMESTAMP, tx_from TIMESTAMP, tx_to TIMESTAMP);
CREATE TEMP TABLE IF NOT EXISTS anatid_entities (entity_id BIGINT, tenant_id BIGINT, name VARCHAR, name_key VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS anatid_edges (edge_id BIGINT, tenant_id BIGINT, kind VARCHAR, src_id BIGINT,
    dst_id BIGINT, valid_from TIMESTAMP, valid_to TIMESTAMP, tx_from TIMESTAMP, tx_to TIMESTAMP);
CREATE TEMP TABLE IF NOT EXISTS anatid_embeddings (memory_id BIGINT, tenant_id BIGINT, embedding FLOAT[], norm DOUBLE);
CREATE TEMP TABLE IF NOT EXISTS anatid_postings (tenant_id BIGINT, memory_id BIGINT, term VARCHAR, tf INTEGER);
CREATE TEMP TABLE IF NOT EXISTS anatid_text_docs (tenant_id BIGINT, memory_id BIGINT, doc_len INTEGER);
CREATE TEMP TABLE IF NOT EXISTS anatid_text_gen (tenant_id BIGINT, gen_id BIGINT, nonce BIGINT);
CREATE TEMP TABLE IF NOT EXISTS anatid_text_gen_parts (gen_id BIGINT, part INTEGER, payload BLOB);
CREATE TEMP TABLE IF NOT EXISTS anatid_text_journal (tenant_id BIGINT, memory_id BIGINT, seq BIGINT,
    doc_len INTEGER, vf BIGINT, vt BIGINT, postings VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS anatid_vector_gen (tenant_id BIGINT, gen_id BIGINT, nonce BIGINT);
CREATE TEMP TABLE IF NOT EXISTS anatid_vector_gen_parts (gen_id BIGINT, part INTEGER, payload BLOB);
CREATE TEMP TABLE IF NOT EXISTS anatid_vector_journal (tenant_id BIGINT, memory_id BIGINT, seq BIGINT,
    vf BIGINT, vt BIGINT, norm DOUBLE, embedding FLOAT[]);
)SQL";

} // namespace anatid
