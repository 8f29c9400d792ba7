"""The read verbs of Anatid (a mixin of anatid.db.Anatid) and AsOf, the same reads at
one past instant: each forwards to its function in anatid.verbs, with the same
parameters (test/test_public_surface.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import verbs
from .hints import Embedding, Id, Instant, Kinds, Names, Weights
from .models import Memory, Provenance, RecallHits
from .verbs.reads import DEFAULT_DEPTH

if TYPE_CHECKING:
    from .store import Store


class ReadVerbs:
    """get, recall, recall_2hop, context, provenance, as_of."""

    _store: Store

    def get(self, memory_id: Id, *, as_of: Instant | None = None) -> Memory:
        """The latest version of a memory (whatever its state), or with as_of the version
        the memory believed at that instant.

        Args:
            memory_id: the memory's id.
            as_of: read as the memory was at this instant (default: now).

        Raises:
            NotFoundError: no such memory in this tenant (at `as_of`).
            ValidationError: a bad id or instant.

        Example: ``db.get(m.memory_id).content``
        """
        return verbs.get(self, memory_id, as_of=as_of)

    def recall(self, query: str, *, embedding: Embedding | None = None, seed_entity: Names | None = None,
               k: int = 10, as_of: Instant | None = None, kinds: Kinds | None = None,
               weights: Weights | None = None, allow_slow: bool = False, depth: int = DEFAULT_DEPTH) -> RecallHits:
        """Hybrid recall: the best `k` believed memories for `query`, by cosine (with an
        embedding), BM25 over the text and the graph around the query's (or the seed's)
        entities, fused by reciprocal rank fusion (docs/architecture.md, Recall).

        Args:
            query: the text to search for (may be blank when an embedding or seed is given).
            embedding: the query's vector, of the file's dimension; enables the vector arm.
            seed_entity: entity names the graph arm starts from (default: those named in `query`).
            k: how many hits, at most 1000.
            as_of: read as the memory was at this instant (answered by the SQL oracle).
            kinds: only memories of these kinds.
            weights: per-arm weights, keys among "vector", "text", "graph" (default 1.0 each).
            allow_slow: allow an exact vector scan above BRUTE_FORCE_CEILING rows.
            depth: candidates each arm ranks before fusion (at least k).

        Raises:
            ValidationError: a bad argument, or nothing to search with (blank query, no embedding, no seed).
            EmbeddingDimensionError: an embedding of another dimension than the file's.
            BruteForceCeilingError: an exact vector scan over too many rows (allow_slow=True, or an index).

        Example: ``[h.content for h in db.recall("what does Ada drink?", k=5)]``
        """
        return verbs.recall(self, query, embedding=embedding, seed_entity=seed_entity, k=k, as_of=as_of,
                            kinds=kinds, weights=weights, allow_slow=allow_slow, depth=depth)

    def recall_2hop(self, seed: Names, *, kinds: Kinds | None = None, limit: int = 50,
                    as_of: Instant | None = None) -> RecallHits:
        """Memories about `seed` and about entities up to two edges away, nearest first
        (context(seed, hops=2)).

        Args:
            seed: an entity name or several.
            kinds: only memories of these kinds.
            limit: how many hits, at most.
            as_of: read as the memory was at this instant.

        Raises:
            NotFoundError: no entity of that name in this tenant.
            ValidationError: a bad argument.

        Example: ``db.recall_2hop("Ada", limit=10)``
        """
        return verbs.recall_2hop(self, seed, kinds=kinds, limit=limit, as_of=as_of)

    def context(self, entity: Names, *, hops: int = 0, kinds: Kinds | None = None, limit: int = 50,
                as_of: Instant | None = None) -> RecallHits:
        """Memories filed under `entity` and, with hops > 0, under entities within `hops`
        edges; by hop, then newest first.

        Args:
            entity: an entity name or several.
            hops: how many edges to walk, 0 to 4.
            kinds: only memories of these kinds.
            limit: how many hits, at most.
            as_of: read as the memory was at this instant.

        Raises:
            NotFoundError: no entity of that name in this tenant.
            ValidationError: a bad argument.

        Example: ``db.context("Ada", hops=1)``
        """
        return verbs.context(self, entity, hops=hops, kinds=kinds, limit=limit, as_of=as_of)

    def provenance(self, memory_id: Id) -> Provenance:
        """Where a memory comes from: its supersession chain (oldest first), its episodes,
        writers and audit rows.

        Args:
            memory_id: the memory's id.

        Raises:
            NotFoundError: no such memory in this tenant.
            ValidationError: a bad id.

        Example: ``db.provenance(m.memory_id).writers``
        """
        return verbs.provenance(self, memory_id)

    def as_of(self, t: Instant) -> AsOf:
        """Every read verb as the memory saw the world at instant t.

        Args:
            t: the instant (an aware datetime or ISO-8601 text with an offset).

        Raises:
            ValidationError: t is not an aware instant.

        Example: ``db.as_of("2026-01-01T00:00:00Z").recall("tea")``
        """
        from .timeutil import to_db
        to_db(t, "t")
        return AsOf(self, t)


class AsOf:
    """The read verbs of a handle, bound to one past instant `t` (from Anatid.as_of)."""

    def __init__(self, db: ReadVerbs, t: Instant) -> None:
        self._db = db
        self.t = t

    def recall(self, query: str, *, embedding: Embedding | None = None, seed_entity: Names | None = None,
               k: int = 10, kinds: Kinds | None = None, weights: Weights | None = None, allow_slow: bool = False,
               depth: int = DEFAULT_DEPTH) -> RecallHits:
        """Anatid.recall() at this instant (its arguments but as_of; the same errors).

        Example: ``db.as_of(t).recall("tea", k=5)``
        """
        return self._db.recall(query, embedding=embedding, seed_entity=seed_entity, k=k, as_of=self.t, kinds=kinds,
                               weights=weights, allow_slow=allow_slow, depth=depth)

    def recall_2hop(self, seed: Names, *, kinds: Kinds | None = None, limit: int = 50) -> RecallHits:
        """Anatid.recall_2hop() at this instant (its arguments but as_of; the same errors).

        Example: ``db.as_of(t).recall_2hop("Ada")``
        """
        return self._db.recall_2hop(seed, kinds=kinds, limit=limit, as_of=self.t)

    def context(self, entity: Names, *, hops: int = 0, kinds: Kinds | None = None, limit: int = 50) -> RecallHits:
        """Anatid.context() at this instant (its arguments but as_of; the same errors).

        Example: ``db.as_of(t).context("Ada", hops=1)``
        """
        return self._db.context(entity, hops=hops, kinds=kinds, limit=limit, as_of=self.t)

    def get(self, memory_id: Id) -> Memory:
        """Anatid.get() at this instant: the version the memory believed then.

        Raises:
            NotFoundError: the memory did not exist at this instant.

        Example: ``db.as_of(t).get(m.memory_id).content``
        """
        return self._db.get(memory_id, as_of=self.t)
