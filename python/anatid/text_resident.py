"""The tenant's text generation made resident in this process, for reads that hydrate hits
from it without running the text arm (a vector-only recall, recall_2hop with content).

The text generation holds each document's content and kind at build time, so a hit no
write has touched since needs no read of anatid_memories (no index on memory_id: ~2.4 ms
at 1M). A text recall or the anatid_hybrid macro parses it; a workload that never runs
either would not, so a read that found most of its hits without content parses it once
here, through the macro with a one-word query (~60 ms at 100k documents, once per
generation and process: the memory a text recall would use). The check costs one small
statement and runs only then; the generation's stored bytes are checked first, as before
any parse by the macro.
"""
from __future__ import annotations

# the macro as the Python engine calls it (anatid_hybrid_sql.hpp)
HYBRID_CALL = """
SELECT memory_id, content, kind, score, rank_vector, rank_text, rank_graph, hop
FROM anatid.anatid_hybrid($query, tenant := $tenant, k := $k, qvec := $qvec, qnorm := $qnorm, seeds := $seeds,
                          depth := $depth, wv := $wv, wt := $wt, wg := $wg, valid_at := $valid_at,
                          text_ceiling := $text_ceiling, vector_ceiling := $vector_ceiling)
"""

_TEXT_RESIDENT = ("SELECT anatid_hybrid_cached('text', gen_id, nonce) FROM anatid_text_gen "
                  "WHERE tenant_id = $tenant")


def load_text_generation(store, cur, tenant) -> None:
    """Parse the tenant's text generation into the process cache unless it is there (or the
    tenant has none, or its stored bytes fail their check)."""
    from .indexes import health
    row = cur.execute(_TEXT_RESIDENT, {"tenant": tenant}).fetchone()
    if row is not None and not row[0] and health.guard_hybrid(store, cur, tenant, text=True, vector=False) is None:
        cur.execute(HYBRID_CALL, {"query": "a", "tenant": tenant, "k": 1, "qvec": None, "qnorm": None,
                                  "seeds": [], "depth": 1, "wv": 0.0, "wt": 1.0, "wg": 0.0, "valid_at": None,
                                  "text_ceiling": None, "vector_ceiling": None}).fetchall()
