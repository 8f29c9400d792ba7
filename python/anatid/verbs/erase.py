"""Hard forget: remove a memory and everything that holds its text.

Afterwards the erased content appears in no table of the file: its versions,
ABOUT and SUPERSEDES edges, embedding, postings, evidence links, the episodes
only it used, and every derived-index row (through journal.memory_erased).
The audit trail keeps the id and the verb, never the content.
"""
from __future__ import annotations

from ..errors import NotFoundError
from . import journal

_STATEMENTS = (
    # episodes only this memory used
    """DELETE FROM anatid_episodes WHERE tenant_id = $tenant AND episode_id IN (
           SELECT episode_id FROM anatid_evidence WHERE tenant_id = $tenant AND memory_id = $id
           EXCEPT SELECT episode_id FROM anatid_evidence WHERE tenant_id = $tenant AND memory_id <> $id)""",
    "DELETE FROM anatid_evidence WHERE tenant_id = $tenant AND memory_id = $id",
    """DELETE FROM anatid_edges WHERE tenant_id = $tenant AND (
           (kind = 'about' AND src_id = $id) OR (kind = 'supersedes' AND (src_id = $id OR dst_id = $id)))""",
    "DELETE FROM anatid_embeddings WHERE tenant_id = $tenant AND memory_id = $id",
    "DELETE FROM anatid_postings WHERE tenant_id = $tenant AND memory_id = $id",
    "DELETE FROM anatid_text_docs WHERE tenant_id = $tenant AND memory_id = $id",
    "UPDATE anatid_memories SET supersedes = NULL WHERE tenant_id = $tenant AND supersedes = $id",
    "UPDATE anatid_memories SET superseded_by = NULL WHERE tenant_id = $tenant AND superseded_by = $id",
    "DELETE FROM anatid_memories WHERE tenant_id = $tenant AND memory_id = $id",
)


def erase_memory(store, cur, memory_id: int) -> None:
    p = {"tenant": store.tenant, "id": memory_id}
    if cur.execute("SELECT 1 FROM anatid_memories WHERE tenant_id = $tenant AND memory_id = $id LIMIT 1",
                   p).fetchone() is None:
        raise NotFoundError(f"memory {memory_id} does not exist in tenant {store.tenant}")
    journal.memory_erased(store, cur, memory_id)
    for sql in _STATEMENTS:
        cur.execute(sql, p)
