"""The graph arm of hybrid recall: relevance-ranked expansion, then protective fusion.

The SQL oracle of src/graph_rank.cpp (Rank, then Fuse), run after the text and vector
arms (by whichever engine answered them) with their fused list as input. NEIGHBOURS is
shared by both engines; _GRAPH_ARM and FUSE are what the native ranker must equal (ids,
order, scores), which test_hybrid_differential.py and test_convo_ruler.py check.

Contract (docs/architecture.md, "The graph arm"):
- first stage: the text+vector fusion, best first, with its fused scores s1; the first
  $fanout of it are the *trusted* hits, hit h at position r trusting 1/r;
- entity mass: an entity the caller names (seed_entity) or the query names (every token
  of its name is a query term) gets 1 at hop 0 and 0.5**j at relates hop j <= 2; an
  entity filed under a trusted hit gets the sum of its trusting hits' 1/r. A *hub*,
  an entity filed under more than max($hub_floor, $hub_share * visible memories)
  visible memories, gets no mass unless the caller named it (a speaker's name is on
  every one of their turns: it says nothing about which turn answers);
- an entity with mass m passes m * ln(1 + N / deg) to each of its $depth newest
  visible memories (N: the tenant's visible memories, deg: the entity's);
- episode neighbours: the visible memories written just before and just after a
  trusted hit in the same episode (memory_id order within the episode) get
  NEIGHBOUR * 1/r, for the trusted hits that every first-stage arm found (with one
  arm, none: NEIGHBOUR_AGREED);
- a candidate's graph score is the sum of what it got, added in (source kind, source
  id) order; the arm ranks candidates by score descending, hop ascending, memory_id
  descending and keeps $depth. hop: 0 for a memory about a named entity, j through j
  relates hops, 1 through a trusted hit;
- fusion: s1 + $wg / (60 + graph rank), $wg being the caller's graph weight times
  GRAPH_SHARE; the first $protect positions of the first
  stage keep their place, the rest follow by fused score descending, memory_id
  ascending; $k hits.
"""
from __future__ import annotations

from ..predicates import TimeView, visible

# Episode neighbours of the trusted hits (both engines run this statement): for each
# trusted hit, the visible memory just before and just after it in each of its episodes
# (one grouped pass over the episodes' members; test_graph_neighbours.py checks it
# against a brute force over the canonical rows).
NEIGHBOURS = """
WITH trusted AS (
    SELECT unnest($trusted)::BIGINT AS memory_id, generate_subscripts($trusted, 1)::BIGINT AS r1
),
te AS (
    SELECT DISTINCT t.memory_id AS tid, t.r1, ev.episode_id
    FROM trusted t JOIN anatid_evidence ev ON ev.memory_id = t.memory_id AND ev.tenant_id = $tenant
),
sides AS (
    SELECT te.tid, te.r1,
           max(ev.memory_id) FILTER (WHERE ev.memory_id < te.tid) AS prev_id,
           arg_max(m.kind, ev.memory_id) FILTER (WHERE ev.memory_id < te.tid) AS prev_kind,
           min(ev.memory_id) FILTER (WHERE ev.memory_id > te.tid) AS next_id,
           arg_min(m.kind, ev.memory_id) FILTER (WHERE ev.memory_id > te.tid) AS next_kind
    FROM te JOIN anatid_evidence ev ON ev.episode_id = te.episode_id AND ev.tenant_id = $tenant
    JOIN anatid_memories m ON m.memory_id = ev.memory_id AND {memory_visible}
    GROUP BY te.tid, te.r1, te.episode_id
    HAVING bool_or(ev.memory_id = te.tid)
)
SELECT nb.id, s.tid, $neighbour / s.r1
FROM sides s
CROSS JOIN LATERAL (SELECT unnest([s.prev_id, s.next_id]) AS id, unnest([s.prev_kind, s.next_kind]) AS kind) nb
WHERE nb.id IS NOT NULL {nb_kind_filter}
ORDER BY s.tid, nb.id
"""

# The graph arm's ranking in SQL: the oracle of src/graph_rank.cpp (same contract, same
# summation order). Returns (memory_id, hop) best first.
_GRAPH_ARM = """
WITH RECURSIVE
trusted AS (
    SELECT unnest($trusted)::BIGINT AS memory_id, generate_subscripts($trusted, 1)::BIGINT AS r1
),
named AS ({seeds}),
live AS (
    SELECT e.src_id AS a, e.dst_id AS b FROM anatid_edges e WHERE e.kind = 'relates' AND {edge_visible}
    UNION ALL
    SELECT e.dst_id AS a, e.src_id AS b FROM anatid_edges e WHERE e.kind = 'relates' AND {edge_visible}
),
walk(entity_id, hop) AS (
    SELECT entity_id, 0 FROM named
    UNION
    SELECT live.b, walk.hop + 1 FROM walk JOIN live ON live.a = walk.entity_id WHERE walk.hop < 2
),
reached AS (SELECT entity_id, min(hop) AS hop FROM walk GROUP BY entity_id),
trusted_about AS (
    SELECT DISTINCT t.memory_id AS h, t.r1, a.dst_id AS entity_id
    FROM trusted t JOIN anatid_edges a ON a.src_id = t.memory_id AND a.kind = 'about' AND a.tenant_id = $tenant
),
vis AS (SELECT m.memory_id, m.kind FROM anatid_memories m WHERE {memory_visible}),
about_vis AS (
    SELECT DISTINCT a.dst_id AS entity_id, a.src_id AS memory_id, vis.kind
    FROM anatid_edges a JOIN vis ON vis.memory_id = a.src_id
    WHERE a.kind = 'about' AND a.tenant_id = $tenant
),
n_vis AS (SELECT count(DISTINCT memory_id)::DOUBLE AS n FROM about_vis),
touched AS (SELECT entity_id FROM reached UNION SELECT entity_id FROM trusted_about),
filed AS (SELECT * FROM about_vis WHERE entity_id IN (SELECT entity_id FROM touched)),
deg AS (
    SELECT f.entity_id, count(*)::DOUBLE AS deg,
           count(*) > greatest($hub_floor, $hub_share * any_value(n_vis.n)) AS hub
    FROM filed f CROSS JOIN n_vis GROUP BY f.entity_id
),
mass AS (
    SELECT entity_id, 0 AS src_kind, hop, $named * 0.5 ** hop AS m FROM reached
    UNION ALL
    SELECT entity_id, 1, 1, $expand * list_sum(list(1.0::DOUBLE / r1 ORDER BY h)) FROM trusted_about
    GROUP BY entity_id
),
gated AS (
    SELECT ms.entity_id, ms.src_kind, ms.hop, ms.m * ln(1 + n_vis.n / d.deg) AS per_memory
    FROM mass ms JOIN deg d USING (entity_id) CROSS JOIN n_vis
    WHERE NOT d.hub OR (ms.src_kind = 0 AND $named_ungated)
),
newest AS (
    SELECT entity_id, memory_id, kind FROM filed
    QUALIFY row_number() OVER (PARTITION BY entity_id ORDER BY memory_id DESC) <= $depth
),
contrib AS (
    SELECT n.memory_id, g.src_kind, g.entity_id AS src_id, g.hop, g.per_memory AS c
    FROM gated g JOIN newest n USING (entity_id)
    WHERE true {kind_filter}
    UNION ALL
    SELECT unnest($extra_ids)::BIGINT, 2, unnest($extra_src)::BIGINT, 1, unnest($extra_c)::DOUBLE
),
graph_scored AS (
    SELECT memory_id, list_sum(list(c ORDER BY src_kind, src_id)) AS gscore, min(hop) AS hop
    FROM contrib GROUP BY memory_id
)
SELECT memory_id, hop FROM graph_scored WHERE gscore > 0
ORDER BY gscore DESC, hop ASC, memory_id DESC
LIMIT $depth
"""

# The three-arm fusion (both engines run this statement): s1 + wg / (60 + graph rank);
# the first $protect positions of the first stage keep their place.
FUSE = """
WITH first AS (
    SELECT unnest($first_ids)::BIGINT AS memory_id, unnest($first_scores)::DOUBLE AS s1,
           generate_subscripts($first_ids, 1)::BIGINT AS r1
),
graph_arm AS (
    SELECT unnest($graph_ids)::BIGINT AS memory_id, unnest($graph_hops)::INTEGER AS hop,
           generate_subscripts($graph_ids, 1)::BIGINT AS rg
),
fused AS (
    SELECT coalesce(f.memory_id, g.memory_id) AS memory_id, f.r1, g.rg, g.hop,
           coalesce(f.s1, 0.0) + coalesce($wg / (60.0 + g.rg), 0.0) AS score
    FROM first f FULL OUTER JOIN graph_arm g ON g.memory_id = f.memory_id
),
placed AS (
    SELECT memory_id, rg, hop, score, CASE WHEN r1 <= $protect THEN r1 ELSE $protect + 1 END AS tier
    FROM fused
),
top AS (SELECT * FROM placed ORDER BY tier ASC, score DESC, memory_id ASC LIMIT $k)
SELECT t.memory_id, m.content, m.kind, t.score, t.rg, t.hop
FROM top t JOIN anatid_memories m ON m.memory_id = t.memory_id AND {memory_visible}
ORDER BY t.tier ASC, t.score DESC, t.memory_id ASC
"""

# Defaults, chosen on the conversational ruler (docs/quality.md, "The graph arm"). The
# anatid.anatid_hybrid macro carries the same values (extension/anatid_hybrid_sql.hpp, CTE
# kn); test_convo_ruler.py's macro-equals-recall tests fail when the two drift apart.
FANOUT = 3
PROTECT = 3
NEIGHBOUR = 1.0
NEIGHBOUR_AGREED = True   # neighbours only of trusted hits every first-stage arm found
NAMED = 1.0
EXPAND = 1.0
HUB_SHARE = 0.05
HUB_FLOOR = 20
GRAPH_SHARE = 1.0


def gated_seed_note(key: str, share: float) -> str:
    """hits.notes for a seed the graph arm gated as a hub (both engines say it the same way)."""
    return (f"graph arm: {key!r} is filed under {share:.0%} of the visible memories (a hub), so it seeded "
            "nothing; seed_entity= starts from it anyway")


def neighbours_sql(view: TimeView, *, with_kinds: bool) -> str:
    return NEIGHBOURS.format(memory_visible=visible("m", view),
                             nb_kind_filter="AND nb.kind IN (SELECT unnest($kinds))" if with_kinds else "")


# The named seeds the arm gated as hubs (hits.notes says so), from the same CTEs: name_key
# and share of the visible memories, in name_key order (the native ranker's seed order).
_GATED_SEEDS = _GRAPH_ARM[:_GRAPH_ARM.index("SELECT memory_id, hop FROM graph_scored")] + """\
SELECT e.name_key, d.deg / n_vis.n FROM reached r JOIN deg d USING (entity_id) CROSS JOIN n_vis
JOIN anatid_entities e ON e.entity_id = r.entity_id
WHERE r.hop = 0 AND d.hub AND NOT $named_ungated
ORDER BY e.name_key
"""


def graph_arm_sql(view: TimeView, *, seeds_sql: str, with_kinds: bool, gated_seeds: bool = False) -> str:
    return (_GATED_SEEDS if gated_seeds else _GRAPH_ARM).format(seeds=seeds_sql, edge_visible=visible("e", view), memory_visible=visible("m", view),
                             kind_filter="AND n.kind IN (SELECT unnest($kinds))" if with_kinds else "")


def fuse_sql(view: TimeView) -> str:
    return FUSE.format(memory_visible=visible("m", view))
