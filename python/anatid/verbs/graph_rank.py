"""Hybrid recall's graph arm, after the text and vector arms (native or SQL):

1. the episode neighbours of the trusted hits (graph_rank_sql.NEIGHBOURS; both engines);
2. the graph arm's ranking and the three-arm fusion with its protected head: the native
   engine's (src/graph_rank.cpp Rank then Fuse, through the graph generation and its
   journal, registered by anatid.native_graph) when it can answer, else the SQL oracle
   (graph_rank_sql._GRAPH_ARM, then graph_rank_sql.FUSE); same contract, same ids in
   order, same scores.
"""
from __future__ import annotations

from .. import engines
from ..models import Hit, RecallHits
from ..predicates import visible
from . import graph_rank_sql as g
from .graph_sql import SEEDS_BY_KEYS
from .recall_sql import SEEDS_FROM_QUERY

# a fused hit that the graph arm did not find (src/graph_recall.hpp, kHopNotGraph)
HOP_NOT_GRAPH = -10

_NO_SEEDS = "SELECT NULL::BIGINT AS entity_id WHERE false"


def rank_request(depth: int, trusted: list[int], extras, *, seeds_given: bool) -> dict:
    """What both graph-arm rankers take: the knobs, the trusted hits, the extras."""
    return {"trusted": trusted, "extra_ids": [int(r[0]) for r in extras], "extra_src": [int(r[1]) for r in extras],
            "extra_c": [float(r[2]) for r in extras], "named": g.NAMED, "expand": g.EXPAND,
            "hub_share": g.HUB_SHARE, "hub_floor": g.HUB_FLOOR, "named_ungated": bool(seeds_given),
            "depth": depth}


def graph_arm_oracle(store, cur, view, rank: dict, *, seed_keys, query, kinds,
                     notes: list | None = None) -> list[tuple[int, int]]:
    """(memory_id, hop) best first, by the SQL oracle of src/graph_rank.cpp; `notes` gets a
    note per named seed gated as a hub (what the native ranker says)."""
    seeds_sql = SEEDS_BY_KEYS if seed_keys is not None else SEEDS_FROM_QUERY if query is not None else _NO_SEEDS
    p = {**view.params(store.tenant), **rank}
    if seed_keys is not None:
        p["seed_keys"] = seed_keys
    elif query is not None:
        p["query"] = query
    if kinds:
        p["kinds"] = kinds
    ranked = [(int(m), int(h)) for m, h in cur.execute(g.graph_arm_sql(view, seeds_sql=seeds_sql,
                                                                        with_kinds=bool(kinds)), p).fetchall()]
    if notes is not None and query is not None and seed_keys is None:   # seeds the caller names are never gated
        notes.extend(g.gated_seed_note(key, share) for key, share in cur.execute(
            g.graph_arm_sql(view, seeds_sql=seeds_sql, with_kinds=bool(kinds), gated_seeds=True), p).fetchall())
    return ranked


# The id range lets the scan skip row groups by their zone maps (memory ids only grow), which
# helps when the hits cluster (a trusted hit's episode neighbours); the table has no index.
_HYDRATE = """
SELECT m.memory_id, m.content, m.kind FROM anatid_memories m
WHERE m.memory_id IN (SELECT unnest($ids)) AND m.memory_id BETWEEN $lo AND $hi AND {memory_visible}"""


def with_graph_arm(store, cur, view, first: RecallHits, *, k: int, depth: int, wg: float, seed_keys, kinds,
                   query: str | None, protect: int | None = None, fanout: int | None = None) -> RecallHits:
    """`first`: the text+vector fusion (best first, up to `depth` hits); `query`: the text
    whose named entities seed the arm (None: no query seeds); `protect`, `fanout`: how many
    first-stage positions keep their place and how many are trusted (None: PROTECT, FANOUT;
    vault recall passes its own). Returns the k hits of the three-arm fusion."""
    fanout = g.FANOUT if fanout is None else int(fanout)
    trusted = [h.memory_id for h in first[:fanout]]
    # Episode neighbours only of trusted hits that every first-stage arm found: a hit one
    # arm alone ranks high is often a greeting or filler turn, and its neighbours are too.
    agreed = [h.memory_id for h in first[:fanout]
              if not g.NEIGHBOUR_AGREED or (len(first.arms) > 1 and set(first.arms) <= set(h.sources))]
    extras = []
    if agreed and g.NEIGHBOUR > 0:
        p = {**view.params(store.tenant), "trusted": agreed, "neighbour": 1.0}
        if kinds:
            p["kinds"] = kinds
        position = {m: i + 1 for i, m in enumerate(trusted)}   # trust 1/r by the hit's place in `first`
        extras = [(nb, src, g.NEIGHBOUR / position[src])
                  for nb, src, _ in cur.execute(g.neighbours_sql(view, with_kinds=bool(kinds)), p).fetchall()]
    rank = rank_request(depth, trusted, extras, seeds_given=seed_keys is not None)
    fusion = {"first_ids": [h.memory_id for h in first], "first_scores": [float(h.score) for h in first],
              "protect": g.PROTECT if protect is None else int(protect), "wg": wg * g.GRAPH_SHARE, "k": k}
    notes = list(first.notes)
    by_id = {h.memory_id: h for h in first}
    # the native ranker fuses too (src/graph_rank.cpp, Fuse): only graph-only hits need their rows
    # and the text generation vouches for most graph-only hits' rows (`rows`)
    rows: dict = {}
    fused = engines.graph_arm(store, cur, view, {**rank, "fusion": fusion}, seed_keys=seed_keys, query=query,
                              kinds=kinds, notes=notes, content=rows)
    if fused is not None:
        engine = "native" if not first.arms else first.engine
        rows.pop(None, None)     # whether the tenant has a text generation: not needed here
        missing = [m for m, _, _ in fused if m not in by_id and m not in rows]
        if missing:
            hp = {**view.params(store.tenant), "ids": missing, "lo": min(missing), "hi": max(missing)}
            rows.update((int(m), (c, k)) for m, c, k in cur.execute(
                _HYDRATE.format(memory_visible=visible("m", view)), hp).fetchall())
        out = []
        for mid, hop, score in fused:
            if mid in by_id:
                content, kind = by_id[mid].content, by_id[mid].kind
            elif mid in rows:
                content, kind = rows[mid]
            else:
                continue     # not visible: the oracle's fusion drops it the same way
            out.append((mid, content, kind, score, None if hop == HOP_NOT_GRAPH else hop))
    else:
        engine = first.engine if first.arms else "sql"
        ranked = graph_arm_oracle(store, cur, view, rank, seed_keys=seed_keys, query=query, kinds=kinds, notes=notes)
        fp = {**view.params(store.tenant), **fusion, "graph_ids": [m for m, _ in ranked],
              "graph_hops": [h for _, h in ranked]}
        out = [(int(mid), content, kind, score, None if rg is None else hop)
               for mid, content, kind, score, rg, hop in cur.execute(g.fuse_sql(view), fp).fetchall()]
    hits = []
    for mid, content, kind, score, hop in out:
        prior = by_id.get(int(mid))
        # a first stage answered by the macro names its own (weightless) graph arm: not ours
        sources = (tuple(a for a in prior.sources if a != "graph") if prior is not None else ()) + \
            (("graph",) if hop is not None else ())
        hits.append(Hit(int(mid), content, kind, float(score), sources, None if hop is None else int(hop)))
    return RecallHits(hits, bm25_stale=first.bm25_stale, arms=tuple(first.arms) + ("graph",), notes=tuple(notes),
                      engine=engine)
