"""Plain result types returned by the verbs."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Entity:
    entity_id: int
    tenant_id: int
    name: str
    kind: str | None
    created_at: datetime


@dataclass(frozen=True)
class Memory:
    memory_id: int
    version: int
    tenant_id: int
    content: str
    kind: str
    confidence: float
    strength: float
    writer: str | None
    valid_from: datetime
    valid_to: datetime | None
    tx_from: datetime
    tx_to: datetime | None
    supersedes: int | None
    superseded_by: int | None
    entities: tuple[str, ...] = ()

    @property
    def is_current(self) -> bool:
        """Believed now and not closed by a supersede or a soft forget."""
        return self.tx_to is None and self.valid_to is None


@dataclass(frozen=True)
class Edge:
    edge_id: int
    tenant_id: int
    kind: str
    src_id: int
    dst_id: int
    rel_kind: str | None
    weight: float
    valid_from: datetime
    valid_to: datetime | None


@dataclass(frozen=True)
class Episode:
    episode_id: int
    tenant_id: int
    content: str
    source: str | None
    writer: str | None
    recorded_at: datetime


@dataclass(frozen=True)
class Hit:
    """One recalled memory. `sources` names the arms that found it, in the
    fixed order vector, text, graph. `hop` is the graph distance (None when
    the graph arm did not find it)."""

    memory_id: int
    content: str
    kind: str
    score: float
    sources: tuple[str, ...]
    hop: int | None = None


class RecallHits(list):
    """A list of Hit with what the recall knows about itself."""

    def __init__(self, hits=(), *, bm25_stale: bool = False, arms: tuple[str, ...] = (),
                 notes: tuple[str, ...] = (), engine: str = "sql"):
        super().__init__(hits)
        self.bm25_stale = bm25_stale
        self.arms = arms
        self.notes = notes
        self.engine = engine

    def __repr__(self) -> str:
        return (f"RecallHits({list.__repr__(self)}, bm25_stale={self.bm25_stale}, "
                f"arms={self.arms}, engine={self.engine!r})")


@dataclass(frozen=True)
class Provenance:
    memory_id: int
    chain: tuple[Memory, ...]          # oldest first, ends with the asked memory's lineage
    episodes: tuple[Episode, ...]
    writers: tuple[str, ...]
    audit: tuple[dict, ...] = field(default=())

    @property
    def source_text(self) -> str | None:
        """The raw evidence behind the chain, oldest first."""
        if not self.episodes:
            return None
        return "\n\n".join(e.content for e in self.episodes)
