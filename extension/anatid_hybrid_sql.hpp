// The anatid.anatid_hybrid table macro: hybrid recall in one statement.
//
//   SELECT * FROM anatid.anatid_hybrid('is friday''s menu safe', tenant := 0, k := 10,
//                                      qvec := [...], seeds := ['Dinner'])
//
// It reads, in the caller's transaction: each base generation's id (and its BLOB parts
// only when this process has not parsed them: the CASE turns the join key into -1, and
// DuckDB's join-filter pushdown then skips the parts' row group), each journal (one
// row per write with the memory's state after it: postings, length, vector,
// validity; the latest row of a memory wins). The native anatid_hybrid_rank scores, ranks
// and fuses the text and vector arms; the graph stage (below, at `kn`) then runs recall()'s
// graph arm over that first stage through anatid_graph_recall; hits are hydrated from
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
           trim(coalesce(CAST(query AS VARCHAR), '')) <> '' AS text_ran,
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
-- The graph stage (python/anatid/verbs/graph_rank.py, contract in graph_rank_sql.py and
-- docs/architecture.md "The graph arm"): the text and vector arms first, fused (wg 0) to
-- `d` hits; their best FANOUT are the trusted hits; the episode neighbours of the ones
-- every first-stage arm found; then anatid_graph_recall ranks the graph arm and fuses
-- (src/graph_rank.cpp Rank, Fuse) on the graph generation, loaded from its BLOB when this
-- process has not parsed it. The knobs are graph_rank_sql.py's defaults.
kn AS (SELECT 3 AS fanout, 3 AS protect, 1.0::DOUBLE AS neighbour, true AS agreed_only, 1.0::DOUBLE AS named,
              1.0::DOUBLE AS expand, 0.05::DOUBLE AS hub_share, 20 AS hub_floor, 1.0::DOUBLE AS graph_share),
-- The one-row inputs are joined two at a time through MATERIALIZED CTEs: as one flat
-- 11-way cross product, DuckDB's join-order search alone cost about 22 ms per call.
r1 AS MATERIALIZED (SELECT p.*, tg.gen AS tgen, tg.nonce AS tnonce, tparts.parts AS tparts FROM p, tg, tparts),
r2 AS MATERIALIZED (SELECT r1.*, tin.touched AS t_touched, tin.ids AS d_ids, tin.lens AS d_lens, tin.vf AS d_vf,
                           tin.vt AS d_vt, tin.postings AS d_postings, tcount.n AS d_count
                    FROM r1, tin, tcount),
r3 AS MATERIALIZED (SELECT r2.*, vg.gen AS vgen, vg.nonce AS vnonce, vparts.parts AS vparts FROM r2, vg, vparts),
r4 AS MATERIALIZED (SELECT r3.*, vin.touched AS v_touched, vin.ids AS v_ids, vin.vf AS v_vf, vin.vt AS v_vt,
                           vin.norms AS v_norms, vin.embs AS v_embs, vcount.n AS v_count FROM r3, vin, vcount),
ranked AS (
    SELECT unnest(anatid_hybrid_rank(
        tgen, tnonce, tparts, terms, t_touched, d_ids, d_lens, d_vf, d_vt, d_postings,
        CASE WHEN tgen IS NULL THEN d_count END,
        vgen, vnonce, vparts, qv, coalesce(CAST(qnorm AS DOUBLE), sqrt(list_dot_product(qv, qv))), v_touched,
        v_ids, v_vf, v_vt, v_norms, CAST(v_embs AS FLOAT[][]), CASE WHEN vgen IS NULL THEN v_count END,
        CAST([] AS BIGINT[]), CAST([] AS INTEGER[]), at_us, d, d, CAST(wv AS DOUBLE), CAST(wt AS DOUBLE), 0.0::DOUBLE,
        CAST(text_ceiling AS BIGINT), CAST(vector_ceiling AS BIGINT))) AS h
    FROM r4),
-- the first stage, visible hits only, best first
fs AS MATERIALIZED (
    SELECT h.memory_id AS memory_id, h.score AS score, h.rv AS rv, h.rt AS rt, m.content AS content, m.kind AS kind,
           row_number() OVER (ORDER BY h.score DESC, h.memory_id ASC) AS pos
    FROM ranked JOIN anatid_memories m ON m.memory_id = h.memory_id AND m.tx_to IS NULL),
-- graph weighted 0, or nothing to seed it (no seeds and a blank query): the first stage is the answer
g AS (SELECT CAST(wg AS DOUBLE) <> 0 AND (p.seed_names IS NOT NULL OR p.text_ran) AS graph_on FROM p),
trusted AS (SELECT fs.memory_id, fs.pos AS r1 FROM fs, kn WHERE fs.pos <= kn.fanout),
-- episode neighbours only of trusted hits every first-stage arm found
agreed AS (
    SELECT fs.memory_id AS tid, fs.pos AS r1 FROM fs, kn, p, g
    WHERE g.graph_on AND fs.pos <= kn.fanout AND kn.neighbour > 0
      AND (NOT kn.agreed_only OR (p.qv IS NOT NULL AND p.text_ran AND fs.rv IS NOT NULL AND fs.rt IS NOT NULL))),
te AS (
    SELECT DISTINCT a.tid, a.r1, ev.episode_id
    FROM agreed a JOIN anatid_evidence ev ON ev.memory_id = a.tid AND ev.tenant_id = (SELECT t FROM p)),
sides AS (
    SELECT te.tid, te.r1,
           max(ev.memory_id) FILTER (WHERE ev.memory_id < te.tid) AS prev_id,
           min(ev.memory_id) FILTER (WHERE ev.memory_id > te.tid) AS next_id
    FROM te JOIN anatid_evidence ev ON ev.episode_id = te.episode_id AND ev.tenant_id = (SELECT t FROM p)
    JOIN anatid_memories m ON m.memory_id = ev.memory_id, p
    WHERE m.tenant_id = p.t AND m.tx_to IS NULL AND m.valid_from <= p.at_ts
      AND (m.valid_to IS NULL OR m.valid_to > p.at_ts)
    GROUP BY te.tid, te.r1, te.episode_id
    HAVING bool_or(ev.memory_id = te.tid)),
extras AS (
    SELECT nb.id, s.tid, s.r1 FROM sides s
    CROSS JOIN LATERAL (SELECT unnest([s.prev_id, s.next_id]) AS id) nb WHERE nb.id IS NOT NULL),
-- seeds: the caller's names (folded by the request), else entities all of whose name tokens the query holds
qseeds AS (
    SELECT list(DISTINCT e.name_key ORDER BY e.name_key) AS keys FROM anatid_entities e, p, g
    WHERE g.graph_on AND e.tenant_id = p.t AND p.seed_names IS NULL AND len(p.terms) > 0
      -- every name token must be a query token, so the name contains one: a cheap test first
      AND list_bool_or(list_transform(p.terms, lambda x: contains(e.name_key, x)))
      AND len(regexp_extract_all(lower(e.name), '[\p{L}\p{M}\p{N}]+')) > 0
      AND list_has_all(p.qtokens, regexp_extract_all(lower(e.name), '[\p{L}\p{M}\p{N}]+'))),
seedlist AS (
    SELECT CASE WHEN p.seed_names IS NOT NULL
                THEN list_transform(p.seed_names, lambda s: lower(regexp_replace(trim(s), '\s+', ' ', 'g')))
                ELSE coalesce(qseeds.keys, CAST([] AS VARCHAR[])) END AS keys
    FROM p, qseeds),
-- fresh: neither a generation nor a base marker; the journal alone is the graph (mode 2)
-- when it holds every canonical row, which the statement checks (short otherwise)
gfresh AS (
    SELECT NOT EXISTS (SELECT 1 FROM anatid_graph_generations WHERE tenant_id = p.t)
           AND NOT EXISTS (SELECT 1 FROM anatid_graph_journal WHERE tenant_id = p.t AND op = 0) AS fresh FROM p, g
    WHERE g.graph_on),
-- the counts read tenant -1 (no tenant: they are 0 .. 2**63-1) unless the tenant is fresh,
-- each a join with that one-row CTE, so DuckDB's join-filter pushdown prunes every row group
-- of the scans when a generation answers (as correlated subqueries they were decorrelated
-- into a grouping of all 2M ABOUT edges at 1M, ~11 ms per call)
gt AS (SELECT CASE WHEN gfresh.fresh THEN p.t ELSE -1 END AS t FROM gfresh, p),
g_about AS (SELECT count(*) AS n FROM anatid_edges e, gt WHERE e.tenant_id = gt.t AND e.kind = 'about'),
g_about_j AS (SELECT count(*) AS n FROM anatid_graph_journal j, gt WHERE j.tenant_id = gt.t AND j.op = 3),
g_rel AS (SELECT count(DISTINCT (least(e.src_id, e.dst_id), greatest(e.src_id, e.dst_id))) AS n
          FROM anatid_edges e, gt WHERE e.tenant_id = gt.t AND e.kind = 'relates'),
g_rel_j AS (SELECT count(DISTINCT (least(a, b), greatest(a, b))) AS n FROM (
                SELECT TRY_CAST(split_part(j.entry, '|', 3) AS BIGINT) AS a,
                       TRY_CAST(split_part(j.entry, '|', 4) AS BIGINT) AS b
                FROM anatid_graph_journal j, gt WHERE j.tenant_id = gt.t AND j.op IN (1, 2))),
gshort AS (
    SELECT gfresh.fresh AND (g_about.n > g_about_j.n OR g_rel.n > g_rel_j.n) AS short
    FROM gfresh, g_about, g_about_j, g_rel, g_rel_j),
-- the request (src/graph_codec.hpp): hops|max_hits|valid_at_us|mode|n_seeds|seed...|n_kinds, then the rank block
req AS (
    SELECT concat('2|', p.d, '|', p.at_us, '|', CASE WHEN gfresh.fresh THEN '2' ELSE '0' END, '|', len(sl.keys),
                  CASE WHEN len(sl.keys) > 0 THEN '|' || array_to_string(list_transform(sl.keys,
                      lambda s: concat(octet_length(encode(s)), ':', s)), '|') ELSE '' END, '|-1',
                  '|', kn.named, '|', kn.expand, '|', kn.hub_share, '|', kn.hub_floor, '|',
                  CASE WHEN p.seed_names IS NOT NULL THEN '1' ELSE '0' END,
                  '|', (SELECT count(*) FROM trusted),
                  (SELECT coalesce(string_agg('|' || memory_id, '' ORDER BY r1), '') FROM trusted),
                  '|', (SELECT count(*) FROM extras),
                  (SELECT coalesce(string_agg(concat('|', id, '|', tid, '|', kn.neighbour / r1), '' ORDER BY tid, id), '')
                   FROM extras),
                  '|', CAST(wg AS DOUBLE) * kn.graph_share, '|', kn.protect, '|', CAST(k AS BIGINT),
                  '|', (SELECT count(*) FROM fs),
                  (SELECT coalesce(string_agg(concat('|', memory_id, '|', score), '' ORDER BY pos), '') FROM fs))
           AS request
    FROM p, kn, gfresh, seedlist sl
    WHERE NOT coalesce((SELECT short FROM gshort), false)
       OR error('anatid: this tenant has no graph generation and its graph journal lacks rows (written by plain '
                || 'SQL): run maintain_indexes() to build one')),
fused_list AS (
    SELECT anatid_graph_recall(r.entry, req.request, r.blob) AS hits
    FROM (SELECT j.entry, CAST(NULL AS BLOB) AS blob FROM anatid_graph_journal j WHERE j.tenant_id = (SELECT t FROM p)
          UNION ALL
          SELECT concat('9||', gg.generation_id, '|', gg.nonce, '|||||'), gg.blob
          FROM (SELECT generation_id AS gen, nonce FROM anatid_graph_generations
                WHERE tenant_id = (SELECT t FROM p)) cur
          JOIN anatid_graph_generations gg
            ON gg.generation_id = CASE WHEN anatid_graph_resident(cur.gen, cur.nonce) THEN -1 ELSE cur.gen END
          UNION ALL
          SELECT CAST(NULL AS VARCHAR), CAST(NULL AS BLOB)) r, req),
fused AS (
    SELECT struct_extract(u.f, 'memory_id') AS memory_id, struct_extract(u.f, 'hop') AS hop,
           struct_extract(u.f, 'score') AS score, u.pos
    -- hop -11 entries name seeds gated as hubs (hits.notes in Python): not hits
    FROM (SELECT unnest(list_filter(hits, lambda x: x.hop <> -11)) AS f,
                 generate_subscripts(list_filter(hits, lambda x: x.hop <> -11), 1) AS pos FROM fused_list
          WHERE coalesce(hits[1].hop NOT IN (-1, -2, -3), true)
             OR error('anatid: the graph generation of this tenant cannot be read (its base marker or nonce is '
                      || 'missing): run maintain_indexes(force := true)')) u),
graph_hits AS (
    SELECT fused.memory_id, coalesce(fs.content, m.content) AS content, coalesce(fs.kind, m.kind) AS kind,
           fused.score, fs.rv AS rank_vector, fs.rt AS rank_text,
           CASE WHEN fused.hop <> -10 THEN count(*) FILTER (WHERE fused.hop <> -10) OVER (ORDER BY fused.pos) END
               AS rank_graph,
           CASE WHEN fused.hop <> -10 THEN fused.hop END AS hop, fused.pos
    FROM fused LEFT JOIN fs ON fs.memory_id = fused.memory_id
    LEFT JOIN (SELECT m.memory_id, m.content, m.kind FROM anatid_memories m, p
               WHERE m.tenant_id = p.t AND m.tx_to IS NULL AND m.valid_from <= p.at_ts
                 AND (m.valid_to IS NULL OR m.valid_to > p.at_ts)
                 AND m.memory_id IN (SELECT memory_id FROM fused)) m
      ON m.memory_id = fused.memory_id
    WHERE fs.memory_id IS NOT NULL OR m.memory_id IS NOT NULL)
SELECT memory_id, content, kind, score, rank_vector, rank_text, rank_graph, hop FROM (
    SELECT memory_id, content, kind, score, rv AS rank_vector, rt AS rank_text, CAST(NULL AS BIGINT) AS rank_graph,
           CAST(NULL AS INTEGER) AS hop, pos
    FROM fs WHERE NOT (SELECT graph_on FROM g) AND pos <= CAST(k AS BIGINT)
    UNION ALL
    SELECT memory_id, content, kind, score, rank_vector, rank_text, rank_graph, hop, pos FROM graph_hits
    WHERE (SELECT graph_on FROM g))
ORDER BY pos
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
CREATE TEMP TABLE IF NOT EXISTS anatid_evidence (memory_id BIGINT, episode_id BIGINT, tenant_id BIGINT);
CREATE TEMP TABLE IF NOT EXISTS anatid_graph_journal (tenant_id BIGINT, seq BIGINT, op TINYINT, entry VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS anatid_graph_generations (generation_id BIGINT, tenant_id BIGINT,
    built_at TIMESTAMP, format_version INTEGER, entities BIGINT, edges BIGINT, memories BIGINT, bytes BIGINT,
    blob BLOB, nonce BIGINT);
)SQL";

} // namespace anatid
