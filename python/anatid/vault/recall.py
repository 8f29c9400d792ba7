"""Recall over an ingested vault, in three modes:

* `vector`: cosine of the query against every visible chunk, best chunk per note.
* `expand`: the graph as candidate generation. The 1-hop wikilink neighbours of
  the top `seeds` notes join the pool, and the pool is ordered by the reranker
  when one is given, else by cosine (so without a reranker it can only add
  notes below the vector list, never above it).
* `graph`: the graph gets a vote in the ordering. Personalised PageRank over
  the link graph, restarted at the top vector notes, is fused with the vector
  order by reciprocal rank fusion; the first `protect` vector positions keep
  their place.

Both graph modes also follow `superseded_by`: an outdated note's replacement takes
its place in the list. An entity gate switches the wikilink steps off for
name-shaped queries (a card for a tool or person links to everything), and any
failure of the graph step returns the vector result with a note saying why:
memory must never make the agent worse than no memory.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .. import validate
from ..predicates import visible
from . import tables
from .embed import Embedder, get_embedder
from .ingest import LINK_KINDS, VAULT_KINDS, WRITER_PREFIX, stored_embedder

MODES = ("vector", "expand", "graph")
RRF_K = 60.0

# A reranker scores (query, note text) pairs: higher is better. A cross-encoder fits here.
Reranker = Callable[[str, Sequence[str]], Sequence[float]]

_VECTOR_NOTES = """
WITH scored AS (
    SELECT m.writer, m.memory_id, m.content,
           CAST(list_dot_product(CAST(v.embedding AS DOUBLE[]), CAST($qvec AS DOUBLE[])) / (v.norm * $qnorm) AS FLOAT)
               AS score
    FROM anatid_embeddings v JOIN anatid_memories m ON m.memory_id = v.memory_id
    WHERE v.tenant_id = $tenant AND {memory_visible} AND m.kind IN (SELECT unnest($kinds))
      AND m.writer LIKE 'vault:%' {only}
)
SELECT substr(writer, {cut}) AS path, max(score) AS score, arg_max(content, score) AS best
FROM scored GROUP BY writer
ORDER BY score DESC, path ASC
LIMIT $depth
"""

_EDGES_TOUCHING = """
SELECT s.name_key, d.name_key, e.rel_kind
FROM anatid_edges e
JOIN anatid_entities s ON s.entity_id = e.src_id
JOIN anatid_entities d ON d.entity_id = e.dst_id
WHERE e.kind = 'relates' AND e.rel_kind IN (SELECT unnest($rel_kinds)) AND {edge_visible}
  AND (s.name_key IN (SELECT unnest($keys)) OR d.name_key IN (SELECT unnest($keys)))
"""

_FUNCTION_WORDS = {"how", "what", "why", "when", "where", "which", "who", "do", "does", "is", "are", "the", "a",
                   "an", "of", "to", "for", "about", "and", "or", "in", "on", "with", "should", "can", "i", "we"}


def looks_like_name(query: str, known: set[str] = frozenset()) -> bool:
    """A tool, person or note name rather than a theme: an exact entity name, or at most
    three capitalised / digit-bearing tokens with no question in them."""
    q = query.strip()
    if not q:
        return False
    if validate.name_key(q) in known:
        return True
    tokens = re.findall(r"[^\W_][\w.+#-]*", q)
    if not tokens or len(tokens) > 3 or "?" in q:
        return False
    if any(t.lower() in _FUNCTION_WORDS for t in tokens):
        return False
    return all(t[0].isupper() or any(c.isdigit() for c in t) or (t.isupper() and len(t) > 1) for t in tokens)


@dataclass
class NoteHit:
    path: str
    title: str
    score: float
    sources: tuple[str, ...]          # among 'vector', 'name', 'graph', 'successor'
    vector_rank: int | None = None
    graph_rank: int | None = None
    snippet: str = ""


@dataclass
class RecallResult:
    query: str
    mode: str
    hits: list[NoteHit]
    gated: bool = False
    vector_pool: list[str] = field(default_factory=list)
    graph_added: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        return [h.path for h in self.hits]


def personalized_pagerank(nodes: list[str], edges: list[tuple[str, str]], restart: dict[str, float], *,
                          damping: float = 0.5, iterations: int = 30) -> dict[str, float]:
    """PageRank restarted at `restart` (weights need not sum to 1) over the undirected graph."""
    index = {n: i for i, n in enumerate(nodes)}
    n = len(nodes)
    if n == 0:
        return {}
    src = np.array([index[a] for a, b in edges] + [index[b] for a, b in edges], dtype=np.int64)
    dst = np.array([index[b] for a, b in edges] + [index[a] for a, b in edges], dtype=np.int64)
    deg = np.bincount(src, minlength=n).astype(np.float64)
    p = np.zeros(n)
    for node, w in restart.items():
        if node in index:
            p[index[node]] += w
    if p.sum() <= 0:
        return {}
    p /= p.sum()
    r = p.copy()
    w = np.where(deg[src] > 0, 1.0 / np.maximum(deg[src], 1), 0.0)
    for _ in range(iterations):
        spread = np.zeros(n)
        np.add.at(spread, dst, r[src] * w)
        dangling = r[deg == 0].sum()
        r = (1 - damping) * p + damping * (spread + dangling * p)
    return {nodes[i]: float(r[i]) for i in range(n)}


class VaultRecall:
    """Ask an ingested vault. One instance per open Anatid handle."""

    def __init__(self, db, embedder: Embedder | str | None = None, *, reranker: Reranker | None = None,
                 seeds: int = 15, max_neighbours: int = 40, depth: int = 60, protect: int = 3,
                 damping: float = 0.5, temperature: float = 0.05, gate: bool = True):
        self.db = db
        cur = db.connection
        tables.ensure(cur)
        if embedder is None or isinstance(embedder, str):
            name = embedder or stored_embedder(db)
            if name is None:
                raise ValueError("this file has no ingested vault: run `anatid ingest VAULT --db FILE` first")
            embedder = get_embedder(name)
        self.embedder = embedder
        self.reranker = reranker
        self.seeds, self.max_neighbours, self.depth, self.protect = seeds, max_neighbours, depth, protect
        self.damping, self.temperature, self.gate = damping, temperature, gate
        self._fail_graph: Exception | None = None  # tests inject a failure of the graph step here

    # -- the steps ---------------------------------------------------------------------------------
    def _view(self, as_of):
        store = getattr(self.db, "_store", self.db)
        return store, store.view(as_of)

    def _catalogue(self):
        rows = self.db.connection.execute("SELECT path, title, entity FROM anatid_vault_files WHERE tenant_id = $t",
                                          {"t": self.db.tenant}).fetchall()
        titles = {p: t for p, t, _ in rows}
        by_key = {validate.name_key(e): p for p, _, e in rows}
        key_of = {p: validate.name_key(e) for p, _, e in rows}
        return titles, by_key, key_of

    def _vector(self, qvec: np.ndarray, as_of, only: list[str] | None = None):
        store, view = self._view(as_of)
        sql = _VECTOR_NOTES.format(memory_visible=visible("m", view), cut=len(WRITER_PREFIX) + 1,
                                   only="AND m.writer IN (SELECT unnest($only))" if only is not None else "")
        params = {**view.params(store.tenant), "qvec": qvec.astype(np.float64).tolist(),
                  "qnorm": float(np.linalg.norm(qvec)) or 1.0, "kinds": list(VAULT_KINDS),
                  "depth": self.depth if only is None else max(len(only), 1)}
        if only is not None:
            params["only"] = [WRITER_PREFIX + p for p in only]
        return [(p, float(s), best) for p, s, best in store.read().execute(sql, params).fetchall()]

    def _edges(self, keys: list[str], as_of, rel_kinds=("links_to",)):
        store, view = self._view(as_of)
        if not keys:
            return []
        sql = _EDGES_TOUCHING.format(edge_visible=visible("e", view))
        return store.read().execute(sql, {**view.params(store.tenant), "rel_kinds": list(rel_kinds),
                                          "keys": sorted(set(keys))}).fetchall()

    def _successors(self, paths: list[str], as_of, by_key, key_of) -> dict[str, str]:
        keys = [key_of[p] for p in paths if p in key_of]
        out = {}
        for a, b, _ in self._edges(keys, as_of, ("superseded_by",)):
            if a in by_key and b in by_key:
                out[by_key[a]] = by_key[b]
        return out

    # -- the modes ---------------------------------------------------------------------------------
    def ask(self, query: str, *, mode: str = "graph", k: int = 12, as_of=None,
            embedding: np.ndarray | None = None) -> RecallResult:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
        qvec = np.asarray(self.embedder.embed([query])[0] if embedding is None else embedding, dtype=np.float32)
        vec = self._vector(qvec, as_of)
        titles, by_key, key_of = self._catalogue()
        base = RecallResult(query, "vector", [
            NoteHit(p, titles.get(p, p), s, ("vector",), i + 1, None, best) for i, (p, s, best) in enumerate(vec)],
            vector_pool=[p for p, _, _ in vec])
        if mode == "vector":
            base.hits = base.hits[:k]
            return base
        try:
            if self._fail_graph is not None:
                raise self._fail_graph
            result = self._graph_step(query, qvec, mode, vec, base, as_of, titles, by_key, key_of)
        except Exception as exc:  # noqa: BLE001 - the policy: degrade to vector-only, say why
            base.mode = mode
            base.notes.append(f"graph step failed ({type(exc).__name__}: {exc}); vector-only result")
            base.hits = base.hits[:k]
            return base
        result.hits = result.hits[:k]
        return result

    def _graph_step(self, query, qvec, mode, vec, base, as_of, titles, by_key, key_of) -> RecallResult:
        gated = self.gate and looks_like_name(query, set(by_key))
        pool = {p: (s, best) for p, s, best in vec}
        order = [p for p, _, _ in vec]
        graph_rank: dict[str, int] = {}
        added: list[str] = []
        notes = []
        named = by_key.get(validate.name_key(query))
        if named is not None and self.gate:
            # the query is a note's exact name: that note leads (it may lie beyond the vector list)
            if named not in pool:
                got = self._vector(qvec, as_of, only=[named])
                pool[named] = (got[0][1], got[0][2]) if got else (0.0, "")
            order = [named] + [p for p in order if p != named]
        if gated:
            notes.append("entity gate: name-shaped query, wikilink expansion off")
        else:
            seeds = order[:self.seeds]
            seed_keys = [key_of[p] for p in seeds if p in key_of]
            hop1 = self._edges(seed_keys, as_of)
            neighbours = []
            for a, b, _ in hop1:
                for x in (a, b):
                    p = by_key.get(x)
                    if p is not None and p not in pool and p not in neighbours:
                        neighbours.append(p)
            if mode == "expand":
                added = neighbours[:self.max_neighbours]
                if added:
                    for p, s, best in self._vector(qvec, as_of, only=added):
                        pool[p] = (s, best)
                order = sorted(pool, key=lambda p: (-pool[p][0], p))
            else:
                nodes_keys = set(seed_keys)
                edges = []
                for a, b, _ in hop1:
                    nodes_keys.update((a, b))
                    edges.append((a, b))
                for a, b, _ in self._edges(sorted(nodes_keys - set(seed_keys)), as_of):
                    if (a, b) not in edges:
                        edges.append((a, b))
                        nodes_keys.update((a, b))
                # restart in proportion to how much better than the rest each seed matched:
                # a query that clearly names one note walks from that note
                top = pool[seeds[0]][0] if seeds else 0.0
                restart = {key_of[p]: float(np.exp((pool[p][0] - top) / self.temperature))
                           for p in seeds if p in key_of}
                ppr = personalized_pagerank(sorted(nodes_keys), edges, restart, damping=self.damping)
                # rank by what arrived over links, not by the restart mass a seed gives itself
                total = sum(restart.values()) or 1.0
                walked = {x: v - (1 - self.damping) * restart.get(x, 0.0) / total for x, v in ppr.items()}
                ranked = sorted((x for x in walked if x in by_key and walked[x] > 1e-12),
                                key=lambda x: (-walked[x], x))
                graph_rank = {by_key[x]: i + 1 for i, x in enumerate(ranked)}
                extra = [p for p in graph_rank if p not in pool]
                if extra:
                    for p, s, best in self._vector(qvec, as_of, only=extra):
                        pool[p] = (s, best)
                added = [p for p in extra if p in pool]
        if self.reranker is not None:
            scores = list(self.reranker(query, [pool[p][1] for p in order]))
            order = [p for _, p in sorted(zip([-float(s) for s in scores], order))]
        if graph_rank:
            base_rank = {p: i + 1 for i, p in enumerate(order)}
            protected = order[:self.protect]
            fused = {p: 1.0 / (RRF_K + base_rank[p]) if p in base_rank else 0.0 for p in pool}
            for p, r in graph_rank.items():
                if p in fused:
                    fused[p] += 1.0 / (RRF_K + r)
            rest = sorted((p for p in fused if p not in protected), key=lambda p: (-fused[p], p))
            order = protected + rest
        # superseded_by: the replacement takes the outdated note's place. The two swap when
        # both are listed; otherwise the outdated note moves to the end. Either way no other
        # note moves, so following supersessions costs the other questions nothing.
        succ = self._successors(order[:max(self.depth, 1)], as_of, by_key, key_of)
        promoted = []
        for old, new in sorted(succ.items()):
            if old not in order or (new in order and order.index(new) < order.index(old)):
                continue
            i = order.index(old)
            if new in order:
                j = order.index(new)
                order[i], order[j] = new, old
            else:
                if new not in pool:
                    got = self._vector(qvec, as_of, only=[new])
                    pool[new] = (got[0][1], got[0][2]) if got else (0.0, "")
                order[i] = new
                order.append(old)
            promoted.append(new)
        vranks = {p: i + 1 for i, p in enumerate(base.vector_pool)}
        hits = []
        for p in order:
            src = tuple(s for s, on in (("vector", p in vranks), ("name", p == named),
                                        ("graph", p in graph_rank or p in added),
                                        ("successor", p in promoted)) if on)
            hits.append(NoteHit(p, titles.get(p, p), pool[p][0], src, vranks.get(p), graph_rank.get(p), pool[p][1]))
        return RecallResult(query, mode, hits, gated=gated, vector_pool=base.vector_pool, graph_added=added,
                            notes=notes)
