"""Set-based insert of many memories: a fixed number of statements whatever
the batch size (per-statement cost dominates DuckDB writes from Python)."""
from __future__ import annotations

import numpy as np

from .. import npbind, text, validate
from ..errors import NotFoundError
from .entities import ensure_entities
from .memories import vector_norm
from . import journal

_MEMORIES = """
INSERT INTO anatid_memories (memory_id, version, tenant_id, content, kind, confidence, strength, writer,
                             valid_from, valid_to, tx_from, tx_to, supersedes, superseded_by, last_used_at)
SELECT unnest($ids), 1, $tenant, unnest($contents), unnest($kinds), unnest($confidences), 1.0, unnest($writers),
       unnest($valid_froms), unnest($valid_tos), $now, NULL, NULL, NULL, NULL
"""

_ABOUT = """
INSERT INTO anatid_edges (edge_id, tenant_id, kind, src_id, dst_id, rel_kind, weight,
                          valid_from, valid_to, tx_from, tx_to)
SELECT unnest($edge_ids), $tenant, 'about', unnest($srcs), unnest($dsts), NULL, 1.0,
       unnest($valid_froms), NULL, $now, NULL
"""

_EMBEDDINGS = """
INSERT INTO anatid_embeddings (memory_id, tenant_id, embedding, norm)
SELECT unnest($ids), $tenant, unnest($vectors::FLOAT[][]), unnest($norms)
"""

_EPISODES = """
INSERT INTO anatid_episodes (episode_id, tenant_id, content, source, writer, recorded_at)
SELECT unnest($ids), $tenant, unnest($contents), NULL, unnest($writers), $now
"""

_EVIDENCE = "INSERT INTO anatid_evidence SELECT unnest($memory_ids), unnest($episode_ids), $tenant"

def bulk_insert(store, cur, prepared, now) -> list[int]:
    """prepared: [((content, names, kind, confidence, vec, writer, vf, vt), episode), ...]."""
    tenant = store.tenant
    ids = store.ids.take(len(prepared))
    contents = [a[0] for a, _ in prepared]
    all_names = []
    for a, _ in prepared:
        all_names.extend(a[1])
    entity_ids = ensure_entities(store, cur, validate.names(all_names, "entities"), now) if all_names else {}
    valid_froms = [a[6] if a[6] is not None else now for a, _ in prepared]
    cur.execute(_MEMORIES, {"ids": ids, "tenant": tenant, "contents": contents, "kinds": [a[2] for a, _ in prepared],
                            "confidences": [a[3] for a, _ in prepared], "writers": [a[5] for a, _ in prepared],
                            "valid_froms": valid_froms, "valid_tos": [a[7] for a, _ in prepared], "now": now})
    # Journal rows are written from the values in hand, never read back from the big tables.
    srcs, dsts, about_vf, about_known = [], [], [], []
    for mid, (a, _), vf in zip(ids, prepared, valid_froms):
        for n in a[1]:
            key = validate.name_key(n)
            srcs.append(mid)
            dsts.append(entity_ids[key])
            about_vf.append(vf)
            about_known.append((a[2], vf, a[7], key))
    if srcs:
        cur.execute(_ABOUT, {"edge_ids": store.ids.take(len(srcs)), "tenant": tenant, "srcs": srcs, "dsts": dsts,
                             "valid_froms": about_vf, "now": now})
        journal.about_added(store, cur, list(zip(srcs, dsts)), now, known=about_known)
    with_vec = [(mid, a, vf) for mid, (a, _), vf in zip(ids, prepared, valid_froms) if a[4] is not None]
    if with_vec:
        vec_ids = [mid for mid, _, _ in with_vec]
        vectors = [a[4] for _, a, _ in with_vec]
        norms = [vector_norm(v) for v in vectors]
        if npbind.uniform(vectors):
            with npbind.rows(cur, {"id": np.asarray(vec_ids, dtype=np.int64),
                                   "norm": np.asarray(norms, dtype=np.float64)}, vectors) as rel:
                cur.execute(f"INSERT INTO anatid_embeddings (memory_id, tenant_id, embedding, norm) "
                            f"SELECT id, $tenant, embedding, norm FROM {rel}", {"tenant": tenant})
        else:
            cur.execute(_EMBEDDINGS, {"ids": vec_ids, "tenant": tenant, "vectors": vectors, "norms": norms})
        journal.vector_changed(store, cur, vec_ids, now, known={
            mid: (vf, a[7], norm, a[4]) for (mid, a, vf), norm in zip(with_vec, norms)})
    _evidence(store, cur, ids, prepared, now)
    # The text journal reads these memories' rows back (postings never pass through Python):
    # every read is bounded to the new ids' range, which the zone maps make O(rows written).
    text.index_many(cur, tenant, ids, contents)
    journal.text_changed(store, cur, ids, now)
    return ids


def _evidence(store, cur, ids, prepared, now) -> None:
    new_texts, new_writers, links_m, links_e = [], [], [], []
    text_ids = store.ids.take(sum(1 for _, ep in prepared if isinstance(ep, str))) if prepared else []
    it = iter(text_ids)
    for mid, (a, ep) in zip(ids, prepared):
        if ep is None:
            continue
        if isinstance(ep, str):
            eid = next(it)
            new_texts.append(ep)
            new_writers.append(a[5])
        else:
            eid = validate.identifier(ep, "episode")
        links_m.append(mid)
        links_e.append(eid)
    if new_texts:
        cur.execute(_EPISODES, {"ids": text_ids, "tenant": store.tenant, "contents": new_texts,
                                "writers": new_writers, "now": now})
    if links_m:
        given = sorted(set(links_e) - set(text_ids))
        if given:
            found = cur.execute("SELECT count(*) FROM anatid_episodes WHERE tenant_id = $tenant "
                                "AND episode_id IN (SELECT unnest($ids))", {"tenant": store.tenant,
                                                                             "ids": given}).fetchone()[0]
            if found != len(given):
                raise NotFoundError(f"some episode ids of this batch do not exist in tenant {store.tenant}")
        cur.execute(_EVIDENCE, {"memory_ids": links_m, "episode_ids": links_e, "tenant": store.tenant})
