"""The text index: per-tenant base generations of the postings plus a journal.

Every write that changes a memory's text or visibility appends the memory's new
state (length, validity, postings as one "term:tf ..." string) to `anatid_text_journal`
in its own transaction
(the journal hooks below), so the next read sees it with nothing rebuilt and reads
one table to fold the journal. `rebuild_fts_index()` folds the journal
into a new immutable generation (BLOB parts the extension parses once per
process) and empties the journal, in one transaction. A document scores the same
in either place: BM25 statistics are computed over the union at read time.

Generation layout (little-endian), one BLOB per part, in part order:
  0 header int64[4] = {magic, n_docs, n_terms, n_postings}
  1 memory ids int64[n]     2 doc lengths int32[n]
  3 valid_from int64[n] us  4 valid_to int64[n] us (INT64_MAX when open)
  5 term offsets int64[n_terms + 1] into part 6, the UTF-8 terms concatenated
  7 posting starts int64[n_terms + 1]
  8 posting document index int32[P]   9 posting tf int32[P]
  10 content offsets int64[n + 1] into part 11, the documents' UTF-8 content concatenated
  12 kind offsets int64[n + 1] into part 13, their kinds concatenated
(10-13: what the lean recall returns for a hit no write has touched since the build,
instead of reading anatid_memories; a generation without them is still read.)
"""
from __future__ import annotations

import os
from datetime import datetime, timedelta

import numpy as np

from ..verbs import journal

TEXT_MAGIC = 0x31305854414E41   # "ANATX01", src/bm25.hpp kTextMagic
OPEN_END = np.iinfo(np.int64).max

# The memory's state after the write: believed row, length, postings (NULL when gone).
# `postings` is one string, "term:tf term:tf ..." sorted by term (postings_text): tokens
# are runs of [\p{L}\p{M}\p{N}] (anatid.text.TOKEN_PATTERN), so a term never holds ' '
# or ':'. A reader scans one VARCHAR per row instead of materializing two lists
# (src/text_journal.hpp parses it; docs/indexes.md, "Text journal").
_JOURNAL = """
INSERT INTO anatid_text_journal (tenant_id, memory_id, seq, doc_len, vf, vt, postings)
SELECT $tenant, ids.id, $seq, CASE WHEN m.memory_id IS NOT NULL THEN d.doc_len END,
       epoch_us(m.valid_from), coalesce(epoch_us(m.valid_to), 9223372036854775807), pl.postings
FROM (SELECT unnest($ids) AS id) ids
LEFT JOIN (SELECT memory_id, valid_from, valid_to FROM anatid_memories
           WHERE tenant_id = $tenant AND tx_to IS NULL AND memory_id BETWEEN $lo AND $hi) m ON m.memory_id = ids.id
LEFT JOIN (SELECT memory_id, doc_len FROM anatid_text_docs
           WHERE tenant_id = $tenant AND memory_id BETWEEN $lo AND $hi) d ON d.memory_id = ids.id
LEFT JOIN (SELECT memory_id, string_agg(term || ':' || tf, ' ' ORDER BY term) AS postings
           FROM anatid_postings WHERE tenant_id = $tenant AND memory_id BETWEEN $lo AND $hi
             AND list_contains($ids, memory_id)
           GROUP BY memory_id) pl ON pl.memory_id = ids.id
"""
# (BETWEEN: rows are appended in id order, so the zone maps skip every row group
# outside the ids' range and the read costs about the rows of these memories.)

_DOCS = """
SELECT d.memory_id, d.doc_len, epoch_us(m.valid_from) AS vf,
       coalesce(epoch_us(m.valid_to), 9223372036854775807) AS vt, m.content, m.kind
FROM anatid_text_docs d JOIN anatid_memories m
  ON m.memory_id = d.memory_id AND m.tenant_id = d.tenant_id AND m.tx_to IS NULL
WHERE d.tenant_id = $tenant
ORDER BY d.memory_id
"""

_POSTINGS = """
SELECT p.term, p.memory_id, p.tf
FROM anatid_postings p SEMI JOIN anatid_memories m
  ON m.memory_id = p.memory_id AND m.tenant_id = p.tenant_id AND m.tx_to IS NULL
WHERE p.tenant_id = $tenant
ORDER BY p.term, p.memory_id
"""


# The same rows from values the writer already holds (a believed memory whose postings it
# just wrote): no read of any table, so the cost is O(rows written).
_JOURNAL_KNOWN = """
INSERT INTO anatid_text_journal (tenant_id, memory_id, seq, doc_len, vf, vt, postings)
SELECT $tenant, id, $seq, doc_len, epoch_us(vf), coalesce(epoch_us(vt), 9223372036854775807), postings
FROM (SELECT unnest(CAST($ids AS BIGINT[])) AS id, unnest(CAST($lens AS INTEGER[])) AS doc_len,
             unnest(CAST($vfs AS TIMESTAMP[])) AS vf, unnest(CAST($vts AS TIMESTAMP[])) AS vt,
             unnest(CAST($postings AS VARCHAR[])) AS postings)
"""


# The same rows from a relation of the state after the write (journal.text_changed's rel:
# id, doc_len, vf, vt as TIMESTAMP, postings as postings_text writes it).
_JOURNAL_REL = """
INSERT INTO anatid_text_journal (tenant_id, memory_id, seq, doc_len, vf, vt, postings)
SELECT $tenant, id, $seq, doc_len, epoch_us(vf), coalesce(epoch_us(vt), 9223372036854775807), postings
FROM {rel}
"""


_JOURNAL_ONE = """
INSERT INTO anatid_text_journal (tenant_id, memory_id, seq, doc_len, vf, vt, postings)
VALUES ($tenant, $id, $seq, $len, $vf, $vt, $postings)
"""


def postings_text(terms, tfs) -> str | None:
    """The journal's postings string of sorted `terms` and their `tfs` (None: no postings)."""
    return " ".join(f"{t}:{tf}" for t, tf in zip(terms, tfs)) if terms else None


def postings_of_tokens(tokens) -> str | None:
    """The journal's postings string of a document's tokens (any order)."""
    counts: dict[str, int] = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    return " ".join(f"{t}:{n}" for t, n in sorted(counts.items())) if counts else None
_EPOCH = datetime(1970, 1, 1)
_US = timedelta(microseconds=1)


def _journal(store, cur, memory_ids, now=None, known=None, rel=None) -> None:
    if rel is not None:
        cur.execute(_JOURNAL_REL.format(rel=rel), {"tenant": store.tenant, "seq": store.ids.take()[0]})
        return
    ids = [memory_ids] if isinstance(memory_ids, int) else list(memory_ids)
    if len(ids) == 1 and known is not None:
        # one memory (remember): a VALUES row plans cheaper than unnest()s (~0.4 ms here)
        doc_len, vf, vt, terms, tfs = known[ids[0]]
        cur.execute(_JOURNAL_ONE, {"tenant": store.tenant, "id": ids[0], "seq": store.ids.take()[0],
                                   "len": doc_len, "vf": (vf - _EPOCH) // _US,
                                   "vt": int(OPEN_END) if vt is None else (vt - _EPOCH) // _US,
                                   "postings": postings_text(terms, tfs)})
        return
    if ids and known is not None:
        rows = [known[i] for i in ids]
        # no postings: NULL, as the join form writes it
        cur.execute(_JOURNAL_KNOWN, {"tenant": store.tenant, "seq": store.ids.take()[0], "ids": ids,
                                     "lens": [r[0] for r in rows], "vfs": [r[1] for r in rows],
                                     "vts": [r[2] for r in rows],
                                     "postings": [postings_text(r[3], r[4]) for r in rows]})
        return
    if ids:
        cur.execute(_JOURNAL, {"tenant": store.tenant, "ids": ids, "seq": store.ids.take()[0],
                               "lo": min(ids), "hi": max(ids)})


_ERASE = """
DELETE FROM anatid_{kind}_gen_parts WHERE gen_id IN (SELECT gen_id FROM anatid_{kind}_gen WHERE tenant_id = $tenant);
DELETE FROM anatid_{kind}_gen WHERE tenant_id = $tenant;
DELETE FROM anatid_{kind}_journal WHERE tenant_id = $tenant;
"""


def erase_from_index(store, cur, kind: str, memory_id: int, remaining_sql: str, rejournal) -> None:
    """A hard forget must leave no trace of the text, and a generation holds it: drop the
    tenant's generation and journal, then journal every remaining document afresh, so
    reads scan exactly until the next rebuild. Runs before the canonical rows go."""
    for statement in _ERASE.format(kind=kind).split(";"):
        if statement.strip():
            cur.execute(statement, {"tenant": store.tenant})
    rest = [r[0] for r in cur.execute(remaining_sql, {"tenant": store.tenant, "id": memory_id}).fetchall()]
    rejournal(store, cur, rest)


_REMAINING = "SELECT memory_id FROM anatid_text_docs WHERE tenant_id = $tenant AND memory_id <> $id"


journal.register("text_changed", _journal)
journal.register("memory_closed", _journal)
journal.register("memory_erased", lambda store, cur, memory_id: erase_from_index(
    store, cur, "text", memory_id, _REMAINING, _journal))


def _bytes(a: np.ndarray, dtype) -> bytes:
    return np.ascontiguousarray(a, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()


def build_parts(cur, tenant: int) -> tuple[list[bytes], int]:
    """The parts of a generation of `tenant`'s current postings, and its document count."""
    docs = cur.execute(_DOCS, {"tenant": tenant}).fetchnumpy()
    ids = np.asarray(docs["memory_id"], dtype=np.int64)
    posts = cur.execute(_POSTINGS, {"tenant": tenant}).fetchnumpy()
    terms = [str(t) for t in posts["term"]]
    post_ids = np.asarray(posts["memory_id"], dtype=np.int64)
    tfs = np.asarray(posts["tf"], dtype=np.int32)
    # terms arrive sorted: each run of equal terms is one posting list
    starts = [0]
    dictionary: list[bytes] = []
    for i, term in enumerate(terms):
        if i == 0 or term != terms[i - 1]:
            if i:
                starts.append(i)
            dictionary.append(term.encode("utf-8"))
    starts.append(len(terms))
    if not terms:
        starts = [0]
    lengths = np.fromiter((len(t) for t in dictionary), dtype=np.int64, count=len(dictionary))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    doc_index = np.searchsorted(ids, post_ids).astype(np.int32)
    header = np.array([TEXT_MAGIC, len(ids), len(dictionary), len(terms)], dtype=np.int64)
    content_off, content = _strings(docs["content"])
    kind_off, kinds = _strings(docs["kind"])
    parts = [_bytes(header, np.int64), _bytes(ids, np.int64), _bytes(docs["doc_len"], np.int32),
             _bytes(docs["vf"], np.int64), _bytes(docs["vt"], np.int64), _bytes(offsets, np.int64),
             b"".join(dictionary), _bytes(np.asarray(starts, dtype=np.int64), np.int64),
             _bytes(doc_index, np.int32), _bytes(tfs, np.int32),
             _bytes(content_off, np.int64), content, _bytes(kind_off, np.int64), kinds]
    return parts, len(ids)


def _strings(values) -> tuple[np.ndarray, bytes]:
    encoded = [str(v).encode("utf-8") for v in values]
    lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), b"".join(encoded)


def replace_generation(store, cur, kind: str, parts: list[bytes], count: int, now, tenant: int | None = None) -> int:
    """Write a new generation of `kind` ('text' or 'vector') for `tenant` (default: the
    store's), drop the previous one and empty the journal (the caller's transaction)."""
    gen_id = store.ids.take()[0]
    nonce = int.from_bytes(os.urandom(8), "little", signed=True)
    p = {"tenant": store.tenant if tenant is None else tenant}
    cur.execute(f"DELETE FROM anatid_{kind}_gen_parts WHERE gen_id IN "
                f"(SELECT gen_id FROM anatid_{kind}_gen WHERE tenant_id = $tenant)", p)
    cur.execute(f"DELETE FROM anatid_{kind}_gen WHERE tenant_id = $tenant", p)
    cur.execute(f"DELETE FROM anatid_{kind}_journal WHERE tenant_id = $tenant", p)
    cur.execute(f"INSERT INTO anatid_{kind}_gen VALUES ($tenant, $gen, $nonce, $now, $n)",
                {**p, "gen": gen_id, "nonce": nonce, "now": now, "n": count})
    cur.execute(f"INSERT INTO anatid_{kind}_gen_parts SELECT $gen, unnest(range(len($parts))), unnest($parts)",
                {"gen": gen_id, "parts": parts})
    return gen_id


def tenants(store, cur, all_tenants: bool) -> list[int]:
    if not all_tenants:
        return [store.tenant]
    return [int(r[0]) for r in cur.execute("SELECT DISTINCT tenant_id FROM anatid_memories ORDER BY 1").fetchall()]


def maintain(store, *, all_tenants: bool = False) -> dict:
    """Fold the text journal of one tenant (or every tenant) into new base generations,
    one transaction for all of them."""
    report = {}
    with store.write() as cur:
        now = store.write_instant(None)
        for t in tenants(store, cur, all_tenants):
            parts, n = build_parts(cur, t)
            report[t] = {"generation": replace_generation(store, cur, "text", parts, n, now, t), "documents": n}
    return report


def rebuild_fts_index(db) -> dict:
    """Fold the text journal of this handle's tenant into a new base generation."""
    store = getattr(db, "_store", db)
    return maintain(store)[store.tenant]


def journal_rows(cur, tenant: int) -> int:
    return cur.execute("SELECT count(*) FROM anatid_text_journal WHERE tenant_id = $tenant",
                       {"tenant": tenant}).fetchone()[0]
