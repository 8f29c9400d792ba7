"""The rows of a group of remembers (anatid.group_commit) in one transaction.

A handful of memories (one per concurrent caller) is written with bound lists, one
statement per table as remember() runs for one memory: the same rows, the same journal
hooks (their `known` form, many memories at once). A large group goes through
remember_many's set-based path instead, whose fixed cost (registering numpy relations)
only pays off past a few dozen memories.
"""
from __future__ import annotations

from .. import text, validate
from ..errors import ValidationError
from ..models import Memory
from ._rows import memory_from_row
from .entities import ensure_entities_named
from .memories import _ensure_dim, require_valid_to_after, vector_norms
from . import journal

BULK_FROM = 32   # memories per group from which remember_many's set-based path is cheaper

_MEMORIES = """
INSERT INTO anatid_memories (memory_id, version, tenant_id, content, kind, confidence, strength, writer,
                             valid_from, valid_to, tx_from, tx_to, supersedes, superseded_by, last_used_at)
SELECT unnest(CAST($ids AS BIGINT[])), 1, $tenant, unnest(CAST($contents AS VARCHAR[])),
       unnest(CAST($kinds AS VARCHAR[])), unnest(CAST($confidences AS DOUBLE[])), 1.0,
       unnest(CAST($writers AS VARCHAR[])), unnest(CAST($vfs AS TIMESTAMP[])), unnest(CAST($vts AS TIMESTAMP[])),
       $now, NULL, NULL, NULL, NULL
"""

_ABOUT = """
INSERT INTO anatid_edges (edge_id, tenant_id, kind, src_id, dst_id, rel_kind, weight,
                          valid_from, valid_to, tx_from, tx_to)
SELECT unnest(CAST($edge_ids AS BIGINT[])), $tenant, 'about', unnest(CAST($mids AS BIGINT[])),
       unnest(CAST($eids AS BIGINT[])), NULL, 1.0, unnest(CAST($vfs AS TIMESTAMP[])), NULL, $now, NULL
"""

_EMBEDDINGS = """
INSERT INTO anatid_embeddings (memory_id, tenant_id, embedding, norm)
SELECT unnest(CAST($ids AS BIGINT[])), $tenant, unnest(CAST($vectors AS FLOAT[][])), unnest(CAST($norms AS DOUBLE[]))
"""

_POSTINGS = """
INSERT INTO anatid_postings (tenant_id, memory_id, term, tf)
SELECT $tenant, unnest(CAST($ids AS BIGINT[])), unnest(CAST($terms AS VARCHAR[])), unnest(CAST($tfs AS INTEGER[]))
"""

_TEXT_DOCS = """
INSERT INTO anatid_text_docs (tenant_id, memory_id, doc_len)
SELECT $tenant, unnest(CAST($ids AS BIGINT[])), unnest(CAST($lens AS INTEGER[]))
"""


def remember_group(store, calls: list[tuple]) -> list[Memory]:
    """Several remembers' validated arguments (content, names, kind, confidence, vec, writer,
    valid_from, valid_to, episode) written in one transaction, one Memory per call. Raises
    when any of them cannot be written: anatid.group_commit then runs each alone."""
    dims = {len(c[4]) for c in calls if c[4] is not None}
    if len(dims) > 1:   # a fresh file's first embeddings disagree: alone, the later ones are refused
        raise ValidationError("embedding", f"lengths {sorted(dims)} in one group", "one length")
    prepared = [(content, names, [validate.name_key(n) for n in names], kind, confidence, vec, writer, vf, vt,
                 episode) for content, names, kind, confidence, vec, writer, vf, vt, episode in calls]
    stored: dict[str, str] = {}
    dim_before = store.embedding_dim
    try:
        with store.write() as cur:
            t = store.write_instant(None)
            for a in prepared:
                if a[7] is None and a[8] is not None:
                    require_valid_to_after(a[8], t)
            _ensure_dim(store, cur, next((a[5] for a in prepared if a[5] is not None), None))
            if len(prepared) >= BULK_FROM:
                from .bulk import bulk_insert
                ids = bulk_insert(store, cur, prepared, t, stored_names=stored)
            else:
                ids = insert_few(store, cur, prepared, t, stored)
    except BaseException:
        store.embedding_dim = dim_before
        raise
    return [memory_from_row((mid, 1, store.tenant, a[0], a[3], a[4], 1.0, a[6], a[7] if a[7] is not None else t,
                             a[8], t, None, None, None), [stored[k] for k in a[2]])
            for mid, a in zip(ids, prepared)]


def insert_few(store, cur, prepared, now, stored: dict[str, str]) -> list[int]:
    """remember()'s rows for each of `prepared` (bulk_insert's tuples), inside the caller's
    transaction; fills `stored` with name_key -> stored name. Returns the memory ids."""
    from .bulk import _evidence
    tenant = store.tenant
    ids = store.ids.take(len(prepared))
    vfs = [a[7] if a[7] is not None else now for a in prepared]
    vts = [a[8] for a in prepared]
    cur.execute(_MEMORIES, {"ids": ids, "tenant": tenant, "contents": [a[0] for a in prepared],
                            "kinds": [a[3] for a in prepared], "confidences": [a[4] for a in prepared],
                            "writers": [a[6] for a in prepared], "vfs": vfs, "vts": vts, "now": now})

    names: dict[str, str] = {}
    for a in prepared:
        for name, key in zip(a[1], a[2]):
            names.setdefault(key, name)
    named = ensure_entities_named(store, cur, list(names.values()), now) if names else {}
    stored.update({k: name for k, (_, name) in named.items()})
    pairs, known_about, about_vfs = [], [], []
    for mid, a, vf, vt in zip(ids, prepared, vfs, vts):
        for key in a[2]:
            pairs.append((mid, named[key][0]))
            known_about.append((a[3], vf, vt, key))
            about_vfs.append(vf)
    if pairs:
        cur.execute(_ABOUT, {"edge_ids": store.ids.take(len(pairs)), "tenant": tenant, "mids": [m for m, _ in pairs],
                             "eids": [e for _, e in pairs], "vfs": about_vfs, "now": now})
        journal.about_added(store, cur, pairs, now, known=known_about)

    with_vec = [i for i, a in enumerate(prepared) if a[5] is not None]
    if with_vec:
        vectors = [prepared[i][5] for i in with_vec]
        norms = [float(x) for x in vector_norms(vectors)]   # row by row: remember's very norms
        vec_ids = [ids[i] for i in with_vec]
        cur.execute(_EMBEDDINGS, {"ids": vec_ids, "tenant": tenant, "vectors": vectors, "norms": norms})
        journal.vector_changed(store, cur, vec_ids, now, known={
            ids[i]: (vfs[i], vts[i], n, v) for i, n, v in zip(with_vec, norms, vectors)})

    known_text = {}
    p_ids, p_terms, p_tfs, d_ids, d_lens = [], [], [], [], []
    for mid, a, vf, vt in zip(ids, prepared, vfs, vts):
        rows = text.ascii_postings(a[0])
        if rows is None:   # other scripts: tokenized by SQL's pattern, one statement each
            doc_len, terms, tfs = text.index_text(cur, tenant, mid, a[0])
        else:
            terms, tfs = [t for t, _ in rows], [tf for _, tf in rows]
            doc_len = sum(tfs)
            p_ids += [mid] * len(rows)
            p_terms += terms
            p_tfs += tfs
            d_ids.append(mid)
            d_lens.append(doc_len)
        known_text[mid] = (doc_len, vf, vt, terms, tfs)
    if p_ids:
        cur.execute(_POSTINGS, {"tenant": tenant, "ids": p_ids, "terms": p_terms, "tfs": p_tfs})
    if d_ids:
        cur.execute(_TEXT_DOCS, {"tenant": tenant, "ids": d_ids, "lens": d_lens})
    journal.text_changed(store, cur, ids, now, known=known_text)
    _evidence(store, cur, ids, prepared, now)
    return ids
