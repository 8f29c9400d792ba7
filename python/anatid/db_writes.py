"""The write verbs of Anatid (a mixin of anatid.db.Anatid): each forwards to its
function in anatid.verbs, with the same parameters (test/test_public_surface.py)."""
from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from . import verbs
from .hints import Embedding, Id, Instant, Kinds, Names, Pair
from .models import Edge, Entity, Episode, Memory
from .verbs.upkeep import PruneReport

if TYPE_CHECKING:
    from .store import Store


class WriteVerbs:
    """remember, supersede, update, forget, reinforce, prune, relate, unrelate, upsert_entity, episode."""

    _store: Store

    def remember(self, content: str, entities: Names | None = None, *, kind: str = "fact",
                 confidence: float = 1.0, embedding: Embedding | None = None, writer: str | None = None,
                 episode: Id | None = None, valid_from: Instant | None = None, valid_to: Instant | None = None,
                 now: Instant | None = None) -> Memory:
        """Store one memory, filed under `entities` (created when new), in one transaction.

        Args:
            content: the text to remember (non-blank).
            entities: the names of the entities it is about (a name or a list).
            kind: a label reads can filter on (`kinds=`), e.g. "fact" or "preference".
            confidence: how sure the writer is, 0 to 1.
            embedding: its vector; the first one stored fixes the file's dimension.
            writer: who wrote it (kept in provenance() and the audit rows).
            episode: the episode it was drawn from: an episode id, or its text (stored first).
            valid_from: when the fact starts to hold in the world (default: now).
            valid_to: when it stops holding (default: open).
            now: the write's transaction time (default: the clock), for imports and tests.

        Raises:
            ValidationError: a bad argument (the message names it and what is accepted).
            EmbeddingDimensionError: an embedding of another dimension than the file's.
            NotFoundError: `episode` names no episode of this tenant.
            ReadOnlyError: the handle was opened with read_only=True.

        Example: ``db.remember("Ada prefers tea", entities=["Ada"])``
        """
        return verbs.remember(self, content, entities, kind=kind, confidence=confidence, embedding=embedding,
                              writer=writer, episode=episode, valid_from=valid_from, valid_to=valid_to, now=now)

    def remember_many(self, items: Sequence[Mapping[str, Any]], *, writer: str | None = None,
                      now: Instant | None = None) -> list[int]:
        """Write many memories in one transaction; returns their ids, in order.

        Args:
            items: a list of dicts of remember()'s arguments (content, entities, kind, confidence,
                embedding, episode, valid_from, valid_to).
            writer: who wrote them.
            now: the write's transaction time (default: the clock).

        Raises:
            ValidationError: a bad item (the message names its index and field); nothing is written.
            EmbeddingDimensionError: embeddings of another dimension than the file's.
            ReadOnlyError: the handle was opened with read_only=True.

        Example: ``db.remember_many([{"content": "Ada likes tea", "entities": ["Ada"]}])``
        """
        return verbs.remember_many(self, items, writer=writer, now=now)

    def supersede(self, old_id: Id, content: str, *, entities: Names | None = None, kind: str | None = None,
                  confidence: float | None = None, embedding: Embedding | None = None,
                  writer: str | None = None, episode: Id | None = None, now: Instant | None = None) -> Memory:
        """Replace a believed memory by a new one (a new id) that names it in `supersedes`;
        the old one stops being believed at `now`. Unset arguments are inherited from the old memory.

        Args:
            old_id: the memory being replaced.
            content: the new text.
            entities: the new memory's entities (default: the old one's).
            kind: its kind (default: the old one's).
            confidence: its confidence (default: the old one's).
            embedding: its vector (default: none).
            writer: who wrote it.
            episode: the episode it was drawn from (id or text).
            now: the transaction time; must be after the old memory's valid_from.

        Raises:
            NotFoundError: `old_id` is not a believed memory of this tenant.
            ValidationError: a bad argument (the message names it and what is accepted).
            ReadOnlyError: the handle was opened with read_only=True.
            ConflictError: a concurrent transaction changed the same rows (retryable: see atomic()).

        Example: ``db.supersede(m.memory_id, "Ada now prefers coffee")``
        """
        return verbs.supersede(self, old_id, content, entities=entities, kind=kind, confidence=confidence,
                               embedding=embedding, writer=writer, episode=episode, now=now)

    def update(self, memory_id: Id, content: str, *, expected_version: int, writer: str | None = None,
               now: Instant | None = None) -> Memory:
        """Correct a memory's text in place (compare-and-swap): a new version of the same memory_id.

        Args:
            memory_id: the memory to correct.
            content: the corrected text.
            expected_version: the version you read; another writer's newer version refuses the update.
            writer: who corrected it.
            now: the transaction time (default: the clock).

        Raises:
            NotFoundError: no such memory in this tenant.
            ConflictError: the memory's version is not `expected_version` (not retryable: re-read it).
            ValidationError: a bad argument.
            ReadOnlyError: the handle was opened with read_only=True.

        Example: ``db.update(m.memory_id, "Ada prefers green tea", expected_version=m.version)``
        """
        return verbs.update(self, memory_id, content, expected_version=expected_version, writer=writer, now=now)

    def forget(self, memory_id: Id, *, hard: bool = False, writer: str | None = None, reason: str | None = None,
               now: Instant | None = None) -> dict:
        """Stop believing a memory (its history stays readable with as_of), or with hard=True
        erase every version of it from the file.

        Args:
            memory_id: the memory to forget.
            hard: erase instead of closing (for data that must not be kept).
            writer: who forgot it (in the audit rows).
            reason: why, kept in the audit row.
            now: the transaction time (default: the clock).

        Returns:
            ``{"memory_id": ..., "hard": ...}``.

        Raises:
            NotFoundError: no such memory in this tenant.
            ValidationError: a bad argument (the message names it and what is accepted).
            ReadOnlyError: the handle was opened with read_only=True.
            ConflictError: a concurrent transaction changed the same rows (retryable: see atomic()).

        Example: ``db.forget(m.memory_id, reason="user asked")``
        """
        return verbs.forget(self, memory_id, hard=hard, writer=writer, reason=reason, now=now)

    def reinforce(self, memory_id: Id, amount: float = 1.0, *, now: Instant | None = None) -> Memory:
        """Add `amount` to a memory's strength (never below 0) and mark it used, so prune() keeps it.

        Args:
            memory_id: the memory.
            amount: how much to add (negative weakens it).
            now: the transaction time (default: the clock).

        Raises:
            NotFoundError: no such believed memory in this tenant.
            ValidationError: a bad argument (the message names it and what is accepted).
            ReadOnlyError: the handle was opened with read_only=True.
            ConflictError: a concurrent transaction changed the same rows (retryable: see atomic()).

        Example: ``db.reinforce(m.memory_id)``
        """
        return verbs.reinforce(self, memory_id, amount, now=now)

    def prune(self, *, min_strength: float = 0.5, older_than: timedelta = timedelta(days=30),
              kinds: Kinds | None = None, dry_run: bool = True, hard: bool = False, writer: str | None = None,
              now: Instant | None = None) -> PruneReport:
        """Forget believed memories weaker than `min_strength` and unused for `older_than`.

        Runs as a query, then one transaction per memory: a failure part-way leaves the
        earlier forgets committed. The default dry_run=True only lists the candidates.

        Args:
            min_strength: memories below this strength are candidates.
            older_than: ... and not used (written, reinforced) for this long.
            kinds: only memories of these kinds.
            dry_run: list the candidates, forget nothing.
            hard: erase instead of closing (forget(hard=True)).
            writer: who pruned (in the audit rows).
            now: the instant the ages are measured from (default: the clock).

        Raises:
            ValidationError: a bad argument (the message names it and what is accepted).
            ReadOnlyError: the handle was opened with read_only=True.
            ConflictError: a concurrent transaction changed the same rows (retryable: see atomic()).

        Example: ``db.prune(older_than=timedelta(days=90), dry_run=False)``
        """
        return verbs.prune(self, min_strength=min_strength, older_than=older_than, kinds=kinds, dry_run=dry_run,
                           hard=hard, writer=writer, now=now)

    def relate(self, a: str, b: str, rel_kind: str = "related", *, weight: float = 1.0, writer: str | None = None,
               now: Instant | None = None) -> Edge:
        """Open an edge a -> b of `rel_kind` between two entities (created when new); an
        identical open edge is returned as is.

        Args:
            a: the source entity's name.
            b: the target entity's name.
            rel_kind: the edge's label, e.g. "works_with".
            weight: the edge's weight.
            writer: who wrote it.
            now: the transaction time (default: the clock).

        Raises:
            ValidationError: a bad argument (the message names it and what is accepted).
            ReadOnlyError: the handle was opened with read_only=True.
            ConflictError: a concurrent transaction changed the same rows (retryable: see atomic()).

        Example: ``db.relate("Ada", "Babbage", "works_with")``
        """
        return verbs.relate(self, a, b, rel_kind, weight=weight, writer=writer, now=now)

    def relate_many(self, pairs: Iterable[Pair], *, writer: str | None = None,
                    now: Instant | None = None) -> list[Edge]:
        """relate() for many pairs in one transaction; one Edge per pair, in order.

        Args:
            pairs: (a, b), (a, b, rel_kind), (a, b, rel_kind, weight) or dicts with those keys.
            writer: who wrote them.
            now: the transaction time (default: the clock).

        Raises:
            ValidationError: a bad argument (the message names it and what is accepted).
            ReadOnlyError: the handle was opened with read_only=True.
            ConflictError: a concurrent transaction changed the same rows (retryable: see atomic()).

        Example: ``db.relate_many([("Ada", "Babbage"), ("Ada", "Lovelace", "family")])``
        """
        return verbs.relate_many(self, pairs, writer=writer, now=now)

    def unrelate(self, a: str, b: str, rel_kind: str | None = None, *, writer: str | None = None,
                 now: Instant | None = None) -> int:
        """Close every open edge between a and b (either direction), of `rel_kind` or of any kind;
        returns how many.

        Args:
            a: one entity's name.
            b: the other's.
            rel_kind: only edges of this label (default: every label).
            writer: who closed them.
            now: the transaction time (default: the clock).

        Raises:
            NotFoundError: a or b names no entity of this tenant.
            ValidationError: a bad argument (the message names it and what is accepted).
            ReadOnlyError: the handle was opened with read_only=True.
            ConflictError: a concurrent transaction changed the same rows (retryable: see atomic()).

        Example: ``db.unrelate("Ada", "Babbage")``
        """
        return verbs.unrelate(self, a, b, rel_kind, writer=writer, now=now)

    def upsert_entity(self, name: str, kind: str | None = None, *, now: Instant | None = None) -> Entity:
        """The entity named `name` (matched case-insensitively), created when new; `kind` sets its kind.

        Args:
            name: the entity's name.
            kind: its kind, e.g. "person".
            now: the transaction time (default: the clock).

        Raises:
            ValidationError: a bad argument (the message names it and what is accepted).
            ReadOnlyError: the handle was opened with read_only=True.
            ConflictError: a concurrent transaction changed the same rows (retryable: see atomic()).

        Example: ``db.upsert_entity("Ada", "person")``
        """
        return verbs.upsert_entity(self, name, kind, now=now)

    def episode(self, content: str, *, source: str | None = None, writer: str | None = None,
                now: Instant | None = None) -> Episode:
        """Store an episode (a conversation turn, a document): the evidence memories cite
        with `episode=`.

        Args:
            content: its text.
            source: where it came from, e.g. a URL or a chat id.
            writer: who wrote it.
            now: the transaction time (default: the clock).

        Raises:
            ValidationError: a bad argument (the message names it and what is accepted).
            ReadOnlyError: the handle was opened with read_only=True.
            ConflictError: a concurrent transaction changed the same rows (retryable: see atomic()).

        Example: ``ep = db.episode("User: I moved to Paris", source="chat-42")``
        """
        return verbs.episode(self, content, source=source, writer=writer, now=now)
