"""Recall over an ingested vault, in three modes:

* `vector`: cosine of the query against every visible chunk, best chunk per note.
* `expand`: the graph as candidate generation. The 1-hop wikilink neighbours of
  the top `seeds` notes join the pool, and the pool is ordered by the reranker
  when one is given, else by cosine (so without a reranker it can only add
  notes below the vector list, never above it).
* `graph`: the graph gets a vote in the ordering, by the one graph ranking that
  recall() and anatid_hybrid run (verbs/graph_rank.with_graph_arm: src/graph_rank.cpp,
  or its SQL oracle). The first stage is the vector order of notes (each as its best
  chunk); the walk starts at the top notes' entities and follows the wikilinks two
  hops; its order is fused with the vector order, the first `protect` positions
  keeping their place; the fused chunks map back to notes by each note's best placed
  chunk.

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
from ..models import Hit, RecallHits
from ..predicates import visible
from ..verbs.graph_rank import with_graph_arm
from . import tables
from .embed import Embedder, get_embedder
from .ingest import NOTE_KIND, VAULT_KINDS, WRITER_PREFIX, stored_embedder

MODES = ("vector", "expand", "graph")
RRF_K = 60.0
# The graph mode's knobs on top of the one graph ranking (verbs/graph_rank.with_graph_arm),
# passed per call; recall()'s defaults in graph_rank_sql stay as the conversational ruler chose.
# SEED_MARGIN: a top note seeds the walk over wikilinks when its cosine is within this of the
# best one (the old PageRank's restart temperature: a clear match walks from that note alone).
# FANOUT: trusted hits; with one first-stage arm, trusting positions 2 and 3 only re-votes
# the vector order (on the hand-made vault it lifted an unlinked note over linked ones), so
# only the best note is trusted, and it is a seed anyway. On the vault ruler (docs/quality.md,
# run_eval with VaultRecall(db, seed_margin=..., fanout=...)), bridge Recall@12 for margin
# 0.05 / 0 / 0.1 at fanout 1 was 0.542 / 0.559 / 0.510, and 0.529 at fanout 3: 0.05 is kept
# as the old temperature rather than the ruler's best, which seeds the query's own note alone.
SEED_MARGIN = 0.05
FANOUT = 1

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
SELECT substr(writer, {cut}) AS path, max(score) AS score, arg_max(content, score) AS best,
       arg_max(memory_id, score) AS best_id
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


class VaultRecall:
    """Ask an ingested vault. One instance per open Anatid handle."""

    def __init__(self, db, embedder: Embedder | str | None = None, *, reranker: Reranker | None = None,
                 seeds: int = 15, max_neighbours: int = 40, depth: int = 60, protect: int = 3,
                 seed_margin: float = SEED_MARGIN, fanout: int = FANOUT, gate: bool = True):
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
        self.seed_margin, self.fanout, self.gate = seed_margin, fanout, gate
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
        return [(p, float(s), best, int(mid)) for p, s, best, mid in store.read().execute(sql, params).fetchall()]

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

    def _rerank(self, query, order, pool):
        if self.reranker is None:
            return order
        scores = list(self.reranker(query, [pool[p][1] for p in order]))
        return [p for _, p in sorted(zip([-float(s) for s in scores], order))]

    def _one_ranking(self, order, pool, chunk_of, key_of, as_of) -> tuple[list[str], dict[str, int]]:
        """The graph arm recall() runs (verbs/graph_rank.with_graph_arm: src/graph_rank.cpp, or
        its SQL oracle), over the vault: the first stage is the notes in `order`, each as its
        best chunk, scored 1 / (60 + rank) as a one-arm reciprocal rank fusion; the seeds are
        the entities of the top notes that matched about as well as the best one (SEED_MARGIN
        below it in cosine: a clear match walks from that note alone); relates edges are the
        wikilinks (and superseded_by). The fused chunks map back to notes by each note's best
        placed chunk. Returns the note order and each graph-found note's place among them."""
        store, view = self._view(as_of)
        cur = store.read()
        first_notes = [p for p in order if p in chunk_of]
        first = RecallHits([Hit(chunk_of[p], pool[p][1], NOTE_KIND, 1.0 / (RRF_K + i + 1), ("vector",))
                            for i, p in enumerate(first_notes)], arms=("vector",), engine="sql")
        top = pool[first_notes[0]][0] if first_notes else 0.0
        seeds = [key_of[p] for p in first_notes[:self.seeds] if p in key_of and pool[p][0] >= top - self.seed_margin]
        fused = with_graph_arm(store, cur, view, first, k=len(first) + self.depth, depth=self.depth, wg=1.0,
                               seed_keys=seeds, kinds=list(VAULT_KINDS), query=None, protect=self.protect,
                               fanout=self.fanout)
        ids = [h.memory_id for h in fused]
        writer = dict(cur.execute("SELECT DISTINCT memory_id, writer FROM anatid_memories WHERE tenant_id = $t "
                                  "AND memory_id IN (SELECT unnest($ids))", {"t": store.tenant, "ids": ids}).fetchall())
        out: list[str] = []
        graph_rank: dict[str, int] = {}
        for h in fused:
            w = writer.get(h.memory_id) or ""
            if not w.startswith(WRITER_PREFIX):
                continue
            p = w[len(WRITER_PREFIX):]
            if p not in out:
                out.append(p)
                if "graph" in h.sources:
                    graph_rank[p] = len(graph_rank) + 1
        return out, graph_rank

    # -- the modes ---------------------------------------------------------------------------------
    def ask(self, query: str, *, mode: str = "graph", k: int = 12, as_of=None,
            embedding: np.ndarray | None = None) -> RecallResult:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
        qvec = np.asarray(self.embedder.embed([query])[0] if embedding is None else embedding, dtype=np.float32)
        vec = self._vector(qvec, as_of)
        titles, by_key, key_of = self._catalogue()
        base = RecallResult(query, "vector", [
            NoteHit(p, titles.get(p, p), s, ("vector",), i + 1, None, best) for i, (p, s, best, _) in enumerate(vec)],
            vector_pool=[p for p, _, _, _ in vec])
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
        pool = {p: (s, best) for p, s, best, _ in vec}
        chunk_of = {p: mid for p, _, _, mid in vec}     # each note's best chunk: its memory in the first stage
        order = [p for p, _, _, _ in vec]
        graph_rank: dict[str, int] = {}
        added: list[str] = []
        notes = []
        named = by_key.get(validate.name_key(query))
        if named is not None and self.gate:
            # the query is a note's exact name: that note leads (it may lie beyond the vector list)
            if named not in pool:
                got = self._vector(qvec, as_of, only=[named])
                pool[named] = (got[0][1], got[0][2]) if got else (0.0, "")
                if got:
                    chunk_of[named] = got[0][3]
            order = [named] + [p for p in order if p != named]
        if gated:
            order = self._rerank(query, order, pool)
            notes.append("entity gate: name-shaped query, wikilink expansion off")
        elif mode == "expand":
            seed_keys = [key_of[p] for p in order[:self.seeds] if p in key_of]
            neighbours = []
            for a, b, _ in self._edges(seed_keys, as_of):
                for x in (a, b):
                    p = by_key.get(x)
                    if p is not None and p not in pool and p not in neighbours:
                        neighbours.append(p)
            added = neighbours[:self.max_neighbours]
            if added:
                for p, s, best, _ in self._vector(qvec, as_of, only=added):
                    pool[p] = (s, best)
            order = self._rerank(query, sorted(pool, key=lambda p: (-pool[p][0], p)), pool)
        else:
            order, graph_rank = self._one_ranking(self._rerank(query, order, pool), pool, chunk_of, key_of, as_of)
            added = [p for p in graph_rank if p not in pool]
            if added:
                for p, s, best, _ in self._vector(qvec, as_of, only=added):
                    pool[p] = (s, best)
            order = [p for p in order if p in pool]
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
