"""The SQL oracle of hybrid recall: three arms fused by reciprocal rank fusion.

Contract, shared with the native engine (docs/architecture.md, "Recall"):
- every arm ranks its candidates by (score as FLOAT) descending, then
  memory_id ascending, and keeps the first $depth;
- vector: cosine = dot(e, q) / (norm(e) * norm(q)) over DOUBLE, stored norms;
- text: Okapi BM25, k1 = 1.2, b = 0.75, over the tenant's visible documents,
  idf = ln(1 + (N - df + 0.5) / (df + 0.5)), avgdl = sum(len) / N, distinct
  query terms, per-term contributions summed in term order;
- graph: graph_sql's order, from the seed entities;
- fusion: w_v/(60+r_v) + w_t/(60+r_t) + w_g/(60+r_g), added in that order, an
  absent arm adding 0; order by fused score descending, memory_id ascending.
"""
from __future__ import annotations

from ..errors import BruteForceCeilingError
from ..models import Hit, RecallHits
from ..predicates import TimeView, visible
from ..text import BM25_B, BM25_K1, tokens_sql
from .graph_sql import graph_recall_sql

ARMS = ("vector", "text", "graph")

# Seeds when the caller names none: entities all of whose name tokens occur in the query.
SEEDS_FROM_QUERY = f"""
SELECT entity_id FROM anatid_entities
WHERE tenant_id = $tenant AND len({tokens_sql('name')}) > 0
  AND list_has_all({tokens_sql('$query')}, {tokens_sql('name')})
"""

_VECTOR = """
vec_scored AS (
    SELECT m.memory_id,
           CAST(list_dot_product(CAST(v.embedding AS DOUBLE[]), CAST($qvec AS DOUBLE[])) / (v.norm * $qnorm) AS FLOAT)
               AS score
    FROM anatid_embeddings v JOIN anatid_memories m ON m.memory_id = v.memory_id
    WHERE v.tenant_id = $tenant AND {memory_visible} {kind_filter}
),
vec_arm AS (
    SELECT memory_id, row_number() OVER (ORDER BY score DESC, memory_id ASC) AS r FROM vec_scored
    QUALIFY r <= $depth
),"""

# Current view: the postings table. Historical view: tokenize visible rows on the fly.
_TEXT_DOCS_CURRENT = """
docs AS (
    SELECT d.memory_id, d.doc_len FROM anatid_text_docs d JOIN anatid_memories m ON m.memory_id = d.memory_id
    WHERE d.tenant_id = $tenant AND {memory_visible} {kind_filter}
),
hits AS (
    SELECT p.memory_id, p.term, p.tf FROM anatid_postings p
    WHERE p.tenant_id = $tenant AND p.term IN (SELECT term FROM qterms)
      AND p.memory_id IN (SELECT memory_id FROM docs)
),"""

_TEXT_DOCS_HISTORICAL = """
doc_tokens AS (
    SELECT m.memory_id, {tokens} AS toks FROM anatid_memories m WHERE {memory_visible} {kind_filter}
),
docs AS (SELECT memory_id, len(toks)::INTEGER AS doc_len FROM doc_tokens),
hits AS (
    SELECT memory_id, term, count(*)::INTEGER AS tf
    FROM (SELECT memory_id, unnest(toks) AS term FROM doc_tokens)
    WHERE term IN (SELECT term FROM qterms)
    GROUP BY memory_id, term
),"""

_TEXT_SCORE = f"""
qterms AS (SELECT DISTINCT unnest({tokens_sql('$query')}) AS term),
@DOCS@
stats AS (SELECT count(*)::DOUBLE AS n, sum(doc_len)::DOUBLE / count(*)::DOUBLE AS avgdl FROM docs),
df AS (SELECT term, count(*)::DOUBLE AS df FROM hits GROUP BY term),
contrib AS (
    SELECT h.memory_id, h.term,
           ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5))
             * (h.tf * ({BM25_K1} + 1)) / (h.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * d.doc_len / stats.avgdl)) AS c
    FROM hits h JOIN df USING (term) JOIN docs d USING (memory_id) CROSS JOIN stats
),
text_scored AS (SELECT memory_id, CAST(list_sum(list(c ORDER BY term)) AS FLOAT) AS score FROM contrib GROUP BY memory_id),
text_arm AS (
    SELECT memory_id, row_number() OVER (ORDER BY score DESC, memory_id ASC) AS r FROM text_scored
    QUALIFY r <= $depth
),"""

_GRAPH = """
graph_arm AS (
    SELECT memory_id, hop, row_number() OVER (ORDER BY hop ASC, memory_id DESC) AS r FROM ({graph}) g
),"""

_EMPTY_ARM = "{name} AS (SELECT NULL::BIGINT AS memory_id, NULL::BIGINT AS r{extra} WHERE false),"

_FUSE = """
fused AS (
    SELECT coalesce(v.memory_id, t.memory_id, g.memory_id) AS memory_id, v.r AS rv, t.r AS rt, g.r AS rg, g.hop
    FROM vec_arm v FULL OUTER JOIN text_arm t ON t.memory_id = v.memory_id
    FULL OUTER JOIN graph_arm g ON g.memory_id = coalesce(v.memory_id, t.memory_id)
),
scored AS (
    SELECT memory_id, rv, rt, rg, hop,
           coalesce($wv / (60.0 + rv), 0.0) + coalesce($wt / (60.0 + rt), 0.0) + coalesce($wg / (60.0 + rg), 0.0)
               AS score
    FROM fused
)
SELECT s.memory_id, m.content, m.kind, s.score, s.rv, s.rt, s.rg, s.hop
FROM scored s JOIN anatid_memories m ON m.memory_id = s.memory_id AND {memory_visible}
ORDER BY s.score DESC, s.memory_id ASC
LIMIT $k
"""


def hybrid_sql(view: TimeView, *, use_vector: bool, use_text: bool, use_graph: bool, seeds_given: bool,
               with_kinds: bool) -> str:
    kind_filter = "AND m.kind IN (SELECT unnest($kinds))" if with_kinds else ""
    mv = visible("m", view)
    parts = ["WITH RECURSIVE"]
    parts.append(_VECTOR.format(memory_visible=mv, kind_filter=kind_filter) if use_vector
                 else _EMPTY_ARM.format(name="vec_arm", extra=""))
    if use_text:
        docs = (_TEXT_DOCS_HISTORICAL.format(tokens=tokens_sql("m.content"), memory_visible=mv,
                                             kind_filter=kind_filter)
                if view.historical else _TEXT_DOCS_CURRENT.format(memory_visible=mv, kind_filter=kind_filter))
        parts.append(_TEXT_SCORE.replace("@DOCS@", docs))
    else:
        parts.append(_EMPTY_ARM.format(name="text_arm", extra=""))
    if use_graph:
        from .graph_sql import SEEDS_BY_KEYS
        graph = graph_recall_sql(view, seeds_sql=SEEDS_BY_KEYS if seeds_given else SEEDS_FROM_QUERY,
                                 with_kinds=with_kinds)
        # graph_recall_sql starts its own WITH RECURSIVE; nest it as a subquery
        parts.append(_GRAPH.format(graph=graph.replace("$limit", "$depth")))
    else:
        parts.append(_EMPTY_ARM.format(name="graph_arm", extra=", NULL::INTEGER AS hop"))
    parts.append(_FUSE.format(memory_visible=mv))
    return "\n".join(parts)


def hybrid_oracle(store, cur, view, params, *, use_vector, use_text, use_graph, seeds_given, kinds,
                  notes, allow_slow: bool = False) -> RecallHits:
    """Hybrid recall by the SQL oracle (hybrid_sql): the SQL engine's answer, and the native one's twin."""
    # The native engine checks the ceiling against its vector generation's row count;
    # the oracle counts the tenant's embeddings.
    if use_vector and not allow_slow:
        n = cur.execute("SELECT count(*) FROM anatid_embeddings WHERE tenant_id = $tenant",
                        {"tenant": store.tenant}).fetchone()[0]
        from ..store import BRUTE_FORCE_CEILING
        if n > BRUTE_FORCE_CEILING:
            raise BruteForceCeilingError(
                f"an exact vector scan would cover {n} rows, above BRUTE_FORCE_CEILING={BRUTE_FORCE_CEILING}: "
                "pass allow_slow=True, or build a vector index with maintain_indexes()")
    sql = hybrid_sql(view, use_vector=use_vector, use_text=use_text, use_graph=use_graph,
                     seeds_given=seeds_given, with_kinds=bool(kinds))
    rows = cur.execute(sql, params).fetchall()
    hits = []
    for mid, content, kind, score, rv, rt, rg, hop in rows:
        sources = tuple(a for a, r in zip(ARMS, (rv, rt, rg)) if r is not None)
        hits.append(Hit(int(mid), content, kind, float(score), sources, None if hop is None else int(hop)))
    arms = tuple(a for a, used in zip(ARMS, (use_vector, use_text, use_graph)) if used)
    return RecallHits(hits, bm25_stale=False, arms=arms, notes=tuple(notes), engine="sql")
