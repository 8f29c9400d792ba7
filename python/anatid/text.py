"""The tokenizer and the BM25 constants, shared by every text path.

Tokens are maximal runs of letters, combining marks and digits of any script
after DuckDB's lower(). Accents are kept ("café" != "cafe"); scripts written
without spaces (CJK) yield one token per run, so a CJK sentence matches only
as a whole or by its space-separated runs. Tokenizing always happens in SQL,
so the SQL oracle and the native engine see the very same terms.
"""
from __future__ import annotations

TOKEN_PATTERN = r"[\p{L}\p{M}\p{N}]+"
BM25_K1 = 1.2
BM25_B = 0.75


def tokens_sql(expr: str) -> str:
    """SQL expression: the token list of text expression `expr`."""
    return f"regexp_extract_all(lower({expr}), '{TOKEN_PATTERN}')"


# Postings of one memory's current text; bound: $tenant, $memory_id, $content.
INSERT_POSTINGS = f"""
INSERT INTO anatid_postings (tenant_id, memory_id, term, tf)
SELECT $tenant, $memory_id, term, count(*)::INTEGER
FROM (SELECT unnest({tokens_sql('$content')}) AS term)
GROUP BY term
"""

# Summed from the postings just written rather than tokenized again: compiling the
# Unicode token pattern dominates a one-memory write (several ms per statement here).
INSERT_TEXT_DOC = """
INSERT INTO anatid_text_docs (tenant_id, memory_id, doc_len)
SELECT $tenant, $memory_id, coalesce(sum(tf), 0)::INTEGER
FROM anatid_postings WHERE tenant_id = $tenant AND memory_id = $memory_id
"""

DELETE_POSTINGS = "DELETE FROM anatid_postings WHERE tenant_id = $tenant AND memory_id = $memory_id"
DELETE_TEXT_DOC = "DELETE FROM anatid_text_docs WHERE tenant_id = $tenant AND memory_id = $memory_id"


def index_text(cur, tenant: int, memory_id: int, content: str) -> None:
    """Postings then doc length of a memory that has none yet (unindex_text first)."""
    cur.execute(INSERT_POSTINGS, {"tenant": tenant, "memory_id": memory_id, "content": content})
    cur.execute(INSERT_TEXT_DOC, {"tenant": tenant, "memory_id": memory_id})


def unindex_text(cur, tenant: int, memory_id: int) -> None:
    p = {"tenant": tenant, "memory_id": memory_id}
    cur.execute(DELETE_POSTINGS, p)
    cur.execute(DELETE_TEXT_DOC, p)
