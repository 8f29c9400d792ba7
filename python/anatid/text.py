"""The tokenizer and the BM25 constants, shared by every text path.

Tokens are maximal runs of letters, combining marks and digits of any script
after DuckDB's lower(). Accents are kept ("café" != "cafe"); scripts written
without spaces (CJK) yield one token per run, so a CJK sentence matches only
as a whole or by its space-separated runs. The pattern is SQL's; writes
tokenize ASCII text in Python with a pattern that is exactly SQL's on ASCII
(test_tokenizer_parity checks every ASCII character), so the SQL oracle and the
native engine see the very same terms.
"""
from __future__ import annotations

import re

TOKEN_PATTERN = r"[\p{L}\p{M}\p{N}]+"
BM25_K1 = 1.2
BM25_B = 0.75


def tokens_sql(expr: str) -> str:
    """SQL expression: the token list of text expression `expr`."""
    return f"regexp_extract_all(lower({expr}), '{TOKEN_PATTERN}')"


# Postings of one memory's current text; bound: $tenant, $memory_id, $content. The
# statement hands its postings back (RETURNING), so the doc length and the text journal
# row are written from them: the Unicode pattern is compiled once per write.
INSERT_POSTINGS = f"""
INSERT INTO anatid_postings (tenant_id, memory_id, term, tf)
SELECT $tenant, $memory_id, term, count(*)::INTEGER
FROM (SELECT unnest({tokens_sql('$content')}) AS term)
GROUP BY term
RETURNING term, tf
"""

INSERT_TEXT_DOC = "INSERT INTO anatid_text_docs (tenant_id, memory_id, doc_len) VALUES ($tenant, $id, $len)"

DELETE_POSTINGS = "DELETE FROM anatid_postings WHERE tenant_id = $tenant AND memory_id = $memory_id"
DELETE_TEXT_DOC = "DELETE FROM anatid_text_docs WHERE tenant_id = $tenant AND memory_id = $memory_id"


# On ASCII text the token pattern is exactly [a-z0-9]+ after lower(): ASCII has no
# combining marks, its letters and digits are its only \p{L} and \p{N}, and DuckDB's
# lower() and Python's agree on it. Such text (most of it) is tokenized here, with no
# Unicode pattern to compile (~2-4 ms per statement here); any other text goes to SQL.
# test_tokenizer_parity checks the two agree.
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")

INSERT_POSTINGS_VALUES = """
INSERT INTO anatid_postings (tenant_id, memory_id, term, tf)
SELECT $tenant, $memory_id, unnest(CAST($terms AS VARCHAR[])), unnest(CAST($tfs AS INTEGER[]))
"""


def ascii_tokens(content: str) -> list[str] | None:
    """The tokens of ASCII content in text order, or None when it is not ASCII."""
    return _ASCII_TOKEN.findall(content.lower()) if content.isascii() else None


def ascii_postings(content: str) -> list[tuple[str, int]] | None:
    """Sorted (term, tf) of ASCII content, or None when it is not ASCII."""
    tokens = ascii_tokens(content)
    if tokens is None:
        return None
    counts: dict[str, int] = {}
    for term in tokens:
        counts[term] = counts.get(term, 0) + 1
    return sorted(counts.items())


def index_text(cur, tenant: int, memory_id: int, content: str) -> tuple[int, list[str], list[int]]:
    """Postings then doc length of a memory that has none yet (unindex_text first);
    returns (doc_len, terms sorted, their tfs), what the text journal records."""
    rows = ascii_postings(content)
    if rows is None:
        rows = sorted(cur.execute(INSERT_POSTINGS, {"tenant": tenant, "memory_id": memory_id,
                                                    "content": content}).fetchall())
    elif rows:
        cur.execute(INSERT_POSTINGS_VALUES, {"tenant": tenant, "memory_id": memory_id,
                                             "terms": [t for t, _ in rows], "tfs": [tf for _, tf in rows]})
    doc_len = sum(tf for _, tf in rows)
    cur.execute(INSERT_TEXT_DOC, {"tenant": tenant, "id": memory_id, "len": doc_len})
    return doc_len, [t for t, _ in rows], [tf for _, tf in rows]


def unindex_text(cur, tenant: int, memory_id: int) -> None:
    p = {"tenant": tenant, "memory_id": memory_id}
    cur.execute(DELETE_POSTINGS, p)
    cur.execute(DELETE_TEXT_DOC, p)
