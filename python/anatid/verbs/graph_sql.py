"""The SQL oracle of graph recall (recall_2hop, context, the graph arm).

Contract, shared with the native engine: from the seed entities, walk open
RELATES edges in both directions up to `hops` steps (breadth first, so each
entity gets its shortest distance); every visible memory ABOUT a reached
entity is a hit at the smallest distance of its entities. Order: hop
ascending, then memory_id descending (ids grow with time, so newest first).
Score = 1 / (1 + hop).
"""
from __future__ import annotations

from ..models import Hit, RecallHits
from ..predicates import TimeView, visible

MAX_HOPS = 4

_TEMPLATE = """
WITH RECURSIVE
seeds AS ({seeds}),
live AS (
    SELECT e.src_id AS a, e.dst_id AS b FROM anatid_edges e WHERE e.kind = 'relates' AND {edge_visible}
    UNION ALL
    SELECT e.dst_id AS a, e.src_id AS b FROM anatid_edges e WHERE e.kind = 'relates' AND {edge_visible}
),
walk(entity_id, hop) AS (
    SELECT entity_id, 0 FROM seeds
    UNION
    SELECT live.b, walk.hop + 1 FROM walk JOIN live ON live.a = walk.entity_id WHERE walk.hop < $hops
),
reached AS (SELECT entity_id, min(hop) AS hop FROM walk GROUP BY entity_id),
about AS (
    SELECT a.src_id AS memory_id, min(r.hop) AS hop
    FROM anatid_edges a JOIN reached r ON a.dst_id = r.entity_id
    WHERE a.kind = 'about' AND a.tenant_id = $tenant
    GROUP BY a.src_id
)
SELECT m.memory_id, m.content, m.kind, about.hop
FROM about JOIN anatid_memories m ON m.memory_id = about.memory_id
WHERE {memory_visible} {kind_filter}
ORDER BY about.hop ASC, m.memory_id DESC
LIMIT $limit
"""

SEEDS_BY_KEYS = "SELECT entity_id FROM anatid_entities WHERE tenant_id = $tenant AND name_key IN (SELECT unnest($seed_keys))"


def graph_recall_sql(view: TimeView, *, seeds_sql: str = SEEDS_BY_KEYS, with_kinds: bool = False) -> str:
    return _TEMPLATE.format(
        seeds=seeds_sql,
        edge_visible=visible("e", view),
        memory_visible=visible("m", view),
        kind_filter="AND m.kind IN (SELECT unnest($kinds))" if with_kinds else "",
    )


def graph_recall_oracle(store, cur, view, keys, hops, kinds, limit, notes=()) -> RecallHits:
    """Graph recall by the SQL oracle: the SQL engine's answer, and what the native one is checked against."""
    params = {**view.params(store.tenant), "seed_keys": keys, "hops": hops, "limit": limit}
    if kinds:
        params["kinds"] = kinds
    rows = cur.execute(graph_recall_sql(view, with_kinds=bool(kinds)), params).fetchall()
    hits = [Hit(int(mid), content, kind, 1.0 / (1 + hop), ("graph",), int(hop)) for mid, content, kind, hop in rows]
    return RecallHits(hits, arms=("graph",), engine="sql", notes=tuple(notes))
