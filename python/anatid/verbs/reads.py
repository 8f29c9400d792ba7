"""Read verbs: get, context / recall_2hop, recall, provenance.

Each builds SQL with bound parameters and runs it; the native engines (when
loaded) answer the same questions through anatid.engines with the same ids
in the same order.
"""
from __future__ import annotations

import numpy as np

from .. import validate
from ..errors import NotFoundError, ValidationError
from ..models import Provenance, RecallHits
from ._rows import MEMORY_COLUMNS, episode_from_row, memory_from_row
from ..predicates import believed_at
from .graph_sql import MAX_HOPS
from .memories import about_entities
from .recall_sql import ARMS

DEFAULT_DEPTH = 50
MAX_K = 1000


def get(store, memory_id, *, as_of=None):
    """The latest version of a memory (whatever its state), or with as_of the
    version the memory believed at that instant."""
    memory_id = validate.identifier(memory_id, "memory_id")
    cur = store.read()
    if as_of is None:
        row = cur.execute(f"""SELECT {MEMORY_COLUMNS} FROM anatid_memories
                              WHERE tenant_id = $tenant AND memory_id = $id ORDER BY version DESC LIMIT 1""",
                          {"tenant": store.tenant, "id": memory_id}).fetchone()
    else:
        view = store.view(as_of)
        row = cur.execute(f"""SELECT {MEMORY_COLUMNS} FROM anatid_memories m
                              WHERE {believed_at("m", view)} AND m.memory_id = $id
                              ORDER BY version DESC LIMIT 1""",
                          {"tenant": store.tenant, "tx_at": view.tx_at, "id": memory_id}).fetchone()
    if row is None:
        when = "" if as_of is None else f" as of {as_of}"
        raise NotFoundError(f"memory {memory_id} does not exist in tenant {store.tenant}{when}")
    return memory_from_row(row, about_entities(store, cur, memory_id))


def _seed_keys(seed) -> list[str]:
    names = validate.names(seed, "seed")
    if not names:
        raise ValidationError("seed", "no entity name given", "an entity name or a list of names")
    return [validate.name_key(n) for n in names]


def context(store, entity, *, hops: int = 0, kinds=None, limit: int = 50, as_of=None) -> RecallHits:
    """Memories filed under `entity` and, with hops > 0, under entities within `hops` edges."""
    keys = _seed_keys(entity)
    if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= MAX_HOPS:
        raise ValidationError("hops", f"{validate.shown(hops)} is out of range", f"an integer from 0 to {MAX_HOPS}")
    limit = validate.positive_int(limit, "limit", maximum=100_000)
    kinds = validate.kinds(kinds)
    view = store.view(as_of)
    cur = store.read()
    from ..engines import graph_engine
    hits = graph_engine(store).recall(cur, view, keys, hops, kinds, limit)
    # Hits prove the entity exists; only an empty answer pays for the lookup (a scan).
    if not hits and cur.execute("SELECT count(*) FROM anatid_entities WHERE tenant_id = $tenant "
                                "AND list_contains($keys, name_key)",
                                {"tenant": store.tenant, "keys": keys}).fetchone()[0] == 0:
        raise NotFoundError(f"no entity named {entity!r} in tenant {store.tenant}")
    return hits


def recall_2hop(store, seed, *, kinds=None, limit: int = 50, as_of=None) -> RecallHits:
    return context(store, seed, hops=2, kinds=kinds, limit=limit, as_of=as_of)


def _weights(weights) -> tuple[float, float, float]:
    if weights is None:
        return (1.0, 1.0, 1.0)
    # dict's own keys()/get(): a dict subclass's overrides never run inside the check
    if not isinstance(weights, dict) or not set(dict.keys(weights)) <= set(ARMS):
        raise ValidationError("weights", f"{validate.shown(weights)} is not a dict of arm weights",
                              "a dict with keys among 'vector', 'text', 'graph'")
    return tuple(validate.finite_number(dict.get(weights, a, 1.0), f"weights[{a!r}]", low=0.0, high=1e6)
                 for a in ARMS)


def recall(store, query: str, *, embedding=None, seed_entity=None, k: int = 10, as_of=None, kinds=None,
           weights=None, allow_slow: bool = False, depth: int = DEFAULT_DEPTH) -> RecallHits:
    """Hybrid recall: cosine, BM25 and 2-hop graph arms fused by reciprocal rank fusion."""
    if type(query) is not str:
        if not isinstance(query, str):
            raise ValidationError("query", f"expected a string, got {type(query).__name__}", "text (may be empty)")
        query = str.__str__(query)  # a str subclass as the plain str it holds
    if "\x00" in query:
        raise ValidationError("query", "contains a NUL character", "text without NUL bytes")
    validate.encodable(query, "query")
    if not isinstance(allow_slow, bool):
        raise ValidationError("allow_slow", f"expected a bool, got {type(allow_slow).__name__}", "True or False")
    k = validate.positive_int(k, "k", maximum=MAX_K)
    depth = max(validate.positive_int(depth, "depth", maximum=10_000), k)
    kinds = validate.kinds(kinds)
    wv, wt, wg = _weights(weights)
    vec = None if embedding is None else validate.embedding(embedding, store.embedding_dim)
    seed_keys = None if seed_entity is None else _seed_keys(seed_entity)
    view = store.view(as_of)
    cur = store.read()
    notes: list[str] = []
    use_vector = vec is not None
    use_text = bool(query.strip())
    use_graph = seed_keys is not None or use_text
    if not (use_vector or use_text or use_graph):
        raise ValidationError("query", "is blank and no embedding or seed_entity was given",
                              "a query, an embedding or a seed_entity")
    # The text and vector arms' statement (the graph stage takes seed_keys and the query
    # as arguments, not as statement parameters).
    params = {**view.params(store.tenant), "depth": depth, "k": k, "wv": wv, "wt": wt, "wg": 0.0}
    if use_vector:
        params["qvec"] = vec
        params["qnorm"] = float(np.linalg.norm(np.asarray(vec, dtype=np.float64)))
    if use_text:
        params["query"] = query
    if kinds:
        params["kinds"] = kinds
    from ..engines import hybrid_engine
    engine = hybrid_engine(store)
    if not use_graph or wg == 0:   # graph weighted 0 is graph off
        return engine.recall(cur, view, params, use_vector=use_vector, use_text=use_text, use_graph=False,
                             seeds_given=seed_keys is not None, kinds=kinds, notes=notes, allow_slow=allow_slow)
    # The graph arm expands from what the text and vector arms found: their fusion's best
    # `depth` first (k = depth: both engines take max(depth, k) candidates per arm, so a
    # larger k would widen the native arms and not the oracle's), then the graph stage.
    if use_vector or use_text:
        # the native engine runs the graph stage in its first-stage statement when it can
        # (then the answer's arms end with "graph"); else with_graph_arm runs it below
        stage = {"wg": wg, "k": k, "seeds_given": seed_keys is not None, "seed_keys": seed_keys}
        first = engine.recall(cur, view, {**params, "k": depth}, use_vector=use_vector,
                              use_text=use_text, use_graph=False, seeds_given=False, kinds=kinds, notes=notes,
                              allow_slow=allow_slow, **({"graph_stage": stage} if engine.name == "native" else {}))
        if first.arms[-1:] == ("graph",):
            return first
    else:
        first = RecallHits([], arms=(), notes=tuple(notes), engine="sql")
    from .graph_rank import with_graph_arm
    return with_graph_arm(store, cur, view, first, k=k, depth=depth, wg=wg, seed_keys=seed_keys, kinds=kinds,
                          query=query if use_text else None)


def provenance(store, memory_id):
    """The supersession chain (oldest first), its episodes, writers and audit rows."""
    memory_id = validate.identifier(memory_id, "memory_id")
    cur = store.read()
    p = {"tenant": store.tenant, "id": memory_id}
    if cur.execute("SELECT 1 FROM anatid_memories WHERE tenant_id = $tenant AND memory_id = $id LIMIT 1",
                   p).fetchone() is None:
        raise NotFoundError(f"memory {memory_id} does not exist in tenant {store.tenant}")
    chain_ids = cur.execute("""
        WITH RECURSIVE back(memory_id, depth) AS (
            SELECT $id::BIGINT, 0
            UNION
            SELECT m.supersedes, back.depth + 1 FROM back JOIN anatid_memories m
              ON m.memory_id = back.memory_id AND m.tenant_id = $tenant
            WHERE m.supersedes IS NOT NULL AND back.depth < 10000
        )
        SELECT memory_id FROM back GROUP BY memory_id ORDER BY max(depth) DESC""", p).fetchall()
    ids = [int(r[0]) for r in chain_ids]
    rows = cur.execute(f"""SELECT {MEMORY_COLUMNS} FROM anatid_memories
                           WHERE tenant_id = $tenant AND memory_id IN (SELECT unnest($ids))
                           ORDER BY tx_from, memory_id, version""", {"tenant": store.tenant, "ids": ids}).fetchall()
    chain = tuple(memory_from_row(r) for r in rows)
    episodes = tuple(episode_from_row(r) for r in cur.execute("""
        SELECT DISTINCT ep.episode_id, ep.tenant_id, ep.content, ep.source, ep.writer, ep.recorded_at
        FROM anatid_evidence ev JOIN anatid_episodes ep ON ep.episode_id = ev.episode_id
        WHERE ev.tenant_id = $tenant AND ev.memory_id IN (SELECT unnest($ids))
        ORDER BY ep.recorded_at, ep.episode_id""", {"tenant": store.tenant, "ids": ids}).fetchall())
    audit = tuple({"audit_id": str(a), "at": at, "verb": verb, "writer": w, "subject_id": str(s), "detail": d}
                  for a, at, verb, w, s, d in cur.execute("""
        SELECT audit_id, happened_at, verb, writer, subject_id, detail FROM anatid_audit
        WHERE tenant_id = $tenant AND subject_id IN (SELECT unnest($ids)) ORDER BY happened_at, audit_id""",
                                                          {"tenant": store.tenant, "ids": ids}).fetchall())
    writers = []
    for w in [m.writer for m in chain] + [e.writer for e in episodes] + [a["writer"] for a in audit]:
        if w is not None and w not in writers:
            writers.append(w)
    return Provenance(memory_id, chain, episodes, tuple(writers), audit)
