"""stats(): what is in the file and how it is being served."""
from __future__ import annotations


def stats(store) -> dict:
    cur = store.read()
    p = {"tenant": store.tenant}
    counts = cur.execute("""
        SELECT
          (SELECT count(*) FROM anatid_entities WHERE tenant_id = $tenant),
          (SELECT count(DISTINCT memory_id) FROM anatid_memories WHERE tenant_id = $tenant),
          (SELECT count(*) FROM anatid_memories WHERE tenant_id = $tenant AND tx_to IS NULL AND valid_to IS NULL),
          (SELECT count(*) FROM anatid_edges WHERE tenant_id = $tenant AND kind = 'relates'
                                              AND tx_to IS NULL AND valid_to IS NULL),
          (SELECT count(*) FROM anatid_episodes WHERE tenant_id = $tenant),
          (SELECT count(*) FROM anatid_embeddings WHERE tenant_id = $tenant),
          (SELECT count(DISTINCT tenant_id) FROM anatid_memories)""", p).fetchone()
    native = store.native
    out = {
        "path": store.path,
        "tenant": store.tenant,
        "schema_version": store.schema_version,
        "embedding_dim": store.embedding_dim,
        "entities": counts[0],
        "memories": counts[1],
        "current_memories": counts[2],
        "open_relations": counts[3],
        "episodes": counts[4],
        "embeddings": counts[5],
        "tenants_in_file": counts[6],
        "native": {"loaded": native.loaded, "reason": native.reason, "path": native.path,
                   "version": native.version},
        "read_only": store.read_only,
    }
    from . import engines
    extra = getattr(engines, "stats_hooks", [])
    for hook in extra:
        out.update(hook(store))
    return out
