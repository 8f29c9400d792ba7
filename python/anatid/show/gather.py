"""Gather an entity's neighbourhood through time, for `anatid show`.

Three reads over the canonical tables (entities reached within `hops` RELATES
steps, the RELATES edges among them, the memory versions ABOUT each), then a
replay: for every recorded change instant t, which of those rows the view
as_of(t) shows. The replay renders its filter with predicates.visible(), so
the picture and the read verbs cannot disagree about what was believed when.

The walk follows every RELATES edge ever recorded, open or closed, so that a
relation that was later cut still shows (faded) with its interval.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from .. import validate
from ..errors import NotFoundError, ValidationError
from ..predicates import TimeView, visible
from ..verbs.graph_sql import MAX_HOPS

MAX_ENTITIES = 40
MAX_MEMORIES_PER_ENTITY = 12
MAX_EDGES = 200
MAX_FRAMES = 400

# Entities reached from the seed, nearest first, then the best connected; $limit of them,
# with the number reached in total. Every RELATES edge counts, whatever its interval.
_WALK = """
WITH RECURSIVE
links AS (
    SELECT e.src_id AS a, e.dst_id AS b FROM anatid_edges e WHERE e.kind = 'relates' AND e.tenant_id = $tenant
    UNION ALL
    SELECT e.dst_id AS a, e.src_id AS b FROM anatid_edges e WHERE e.kind = 'relates' AND e.tenant_id = $tenant
),
walk(entity_id, hop) AS (
    SELECT $seed, 0
    UNION
    SELECT links.b, walk.hop + 1 FROM walk JOIN links ON links.a = walk.entity_id WHERE walk.hop < $hops
),
reached AS (SELECT entity_id, min(hop) AS hop FROM walk GROUP BY entity_id),
degree AS (SELECT a AS entity_id, count(*) AS degree FROM links GROUP BY a)
SELECT n.entity_id, n.name, n.kind, n.created_at, r.hop, count(*) OVER () AS reached
FROM reached r
JOIN anatid_entities n ON n.entity_id = r.entity_id AND n.tenant_id = $tenant
LEFT JOIN degree d ON d.entity_id = r.entity_id
ORDER BY r.hop, coalesce(d.degree, 0) DESC, n.name_key
LIMIT $limit
"""

_EDGES = """
SELECT e.edge_id, e.src_id, e.dst_id, e.rel_kind, e.weight, e.valid_from, e.valid_to, e.tx_from, e.tx_to,
       count(*) OVER () AS total
FROM anatid_edges e
WHERE e.tenant_id = $tenant AND e.kind = 'relates'
  AND list_contains($ids, e.src_id) AND list_contains($ids, e.dst_id)
ORDER BY e.edge_id
LIMIT $limit
"""

# Every version of every memory ABOUT a kept entity; per entity the ones {visible} in the
# picture's view come first, then the newest. last_version tells a correction from a forget.
_MEMORIES = """
WITH about AS (
    SELECT DISTINCT a.src_id AS memory_id, a.dst_id AS entity_id FROM anatid_edges a
    WHERE a.tenant_id = $tenant AND a.kind = 'about' AND list_contains($ids, a.dst_id)
),
versions AS (
    SELECT ab.entity_id, m.memory_id, m.version, m.content, m.kind, m.valid_from, m.valid_to, m.tx_from,
           m.tx_to, m.supersedes, m.superseded_by,
           max(m.version) OVER (PARTITION BY ab.entity_id, m.memory_id) AS last_version,
           row_number() OVER (PARTITION BY ab.entity_id
                              ORDER BY {visible} DESC, m.memory_id DESC, m.version DESC) AS rank,
           count(*) OVER (PARTITION BY ab.entity_id) AS total
    FROM about ab JOIN anatid_memories m ON m.memory_id = ab.memory_id AND m.tenant_id = $tenant
)
SELECT entity_id, memory_id, version, content, kind, valid_from, valid_to, tx_from, tx_to, supersedes,
       superseded_by, last_version, total
FROM versions WHERE rank <= $per_entity
ORDER BY entity_id, rank
"""

_REPLAY_TABLE = """CREATE TABLE rows (key VARCHAR, tenant_id BIGINT, valid_from TIMESTAMP, valid_to TIMESTAMP,
                                      tx_from TIMESTAMP, tx_to TIMESTAMP)"""


@dataclass(frozen=True)
class Node:
    entity_id: int
    name: str
    kind: str | None
    created_at: datetime
    hop: int

    @property
    def key(self) -> str:
        return f"n:{self.entity_id}"


@dataclass(frozen=True)
class Link:
    edge_id: int
    src_id: int
    dst_id: int
    rel_kind: str | None
    weight: float
    valid_from: datetime
    valid_to: datetime | None
    tx_from: datetime
    tx_to: datetime | None

    @property
    def key(self) -> str:
        return f"e:{self.edge_id}"

    @property
    def fate(self) -> str | None:
        if self.tx_to is not None:
            return "retracted"
        if self.valid_to is not None:
            return "unrelated"
        return None


@dataclass(frozen=True)
class Belief:
    """One version of one memory, filed under one entity of the picture."""

    entity_id: int
    memory_id: int
    version: int
    content: str
    kind: str
    valid_from: datetime
    valid_to: datetime | None
    tx_from: datetime
    tx_to: datetime | None
    supersedes: int | None
    superseded_by: int | None
    fate: str | None     # superseded, corrected, forgotten, expired; None while open

    @property
    def key(self) -> str:
        return f"m:{self.memory_id}:{self.version}"


@dataclass
class Frame:
    """The view as_of(at): the keys it shows, and what changed at that instant."""

    at: datetime
    visible: frozenset[str]
    events: list[str] = field(default_factory=list)


@dataclass
class Neighbourhood:
    seed: Node
    hops: int
    tenant: int
    nodes: list[Node]
    links: list[Link]
    beliefs: list[Belief]
    frames: list[Frame]
    initial: int                     # index of the frame the picture opens on
    omitted: list[str]               # what the caps left out, in words

    def first_seen(self) -> dict[str, int]:
        """key -> index of the first frame that shows it."""
        seen: dict[str, int] = {}
        for i, frame in enumerate(self.frames):
            for key in frame.visible:
                seen.setdefault(key, i)
        return seen

    def state(self, key: str, frame: int | None = None, first_seen: dict[str, int] | None = None) -> str:
        """current (shown by the frame), past (shown by an earlier frame only) or future."""
        i = self.initial if frame is None else frame
        if not self.frames:
            return "current"
        if key in self.frames[i].visible:
            return "current"
        seen = (first_seen or self.first_seen()).get(key)
        return "past" if seen is not None and seen <= i else "future"


def gather(db, entity: str, *, hops: int = 2, as_of=None, max_entities: int = MAX_ENTITIES,
           max_memories: int = MAX_MEMORIES_PER_ENTITY, max_edges: int = MAX_EDGES,
           max_frames: int = MAX_FRAMES) -> Neighbourhood:
    """The neighbourhood of `entity` within `hops` RELATES steps, replayed over its change instants."""
    from ..timeutil import to_db
    store = getattr(db, "_store", db)
    name = validate.name(entity, "entity")
    if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= MAX_HOPS:
        raise ValidationError("hops", f"{hops!r} is out of range", f"an integer from 0 to {MAX_HOPS}")
    max_entities = validate.positive_int(max_entities, "max_entities", maximum=10_000)
    max_memories = validate.positive_int(max_memories, "max_memories", maximum=10_000)
    max_edges = validate.positive_int(max_edges, "max_edges", maximum=100_000)
    max_frames = validate.positive_int(max_frames, "max_frames", maximum=100_000)
    at = None if as_of is None else to_db(as_of, "as_of")
    tenant = store.tenant
    cur = store.read()
    row = cur.execute("SELECT entity_id FROM anatid_entities WHERE tenant_id = $tenant AND name_key = $key",
                      {"tenant": tenant, "key": validate.name_key(name)}).fetchone()
    if row is None:
        raise NotFoundError(f"no entity named {entity!r} in tenant {tenant}")
    omitted: list[str] = []

    rows = cur.execute(_WALK, {"tenant": tenant, "seed": int(row[0]), "hops": hops,
                               "limit": max_entities}).fetchall()
    nodes = [Node(int(r[0]), r[1], r[2], r[3], int(r[4])) for r in rows]
    reached = int(rows[0][5])
    if reached > len(nodes):
        omitted.append(f"{reached - len(nodes)} of {reached} entities within {hops} hops "
                       f"(kept the {len(nodes)} nearest, best connected)")
    ids = [n.entity_id for n in nodes]

    rows = cur.execute(_EDGES, {"tenant": tenant, "ids": ids, "limit": max_edges}).fetchall()
    links = [Link(*(int(v) for v in r[:3]), *r[3:9]) for r in rows]
    if rows and int(rows[0][9]) > len(links):
        omitted.append(f"{int(rows[0][9]) - len(links)} of {int(rows[0][9])} relations among them "
                       f"(kept the {len(links)} oldest)")

    view = store.view(as_of)
    rows = cur.execute(_MEMORIES.format(visible=visible("m", view)),
                       {**view.params(tenant), "ids": ids, "per_entity": max_memories}).fetchall()
    beliefs, dropped, totals = [], 0, {}
    for r in rows:
        beliefs.append(Belief(int(r[0]), int(r[1]), int(r[2]), r[3], r[4], *r[5:9],
                              None if r[9] is None else int(r[9]), None if r[10] is None else int(r[10]),
                              _fate(r[10], r[8], r[2], r[11], r[6])))
        totals[int(r[0])] = int(r[12])
    dropped = sum(t - min(t, max_memories) for t in totals.values())
    if dropped:
        omitted.append(f"{dropped} memory versions beyond {max_memories} per entity "
                       f"(kept the ones shown at the picture's instant first, then the newest)")

    frames, initial, cut = _replay(nodes, links, beliefs, tenant, at, max_frames)
    if cut:
        omitted.append(f"the {cut} earliest change instants (the slider covers the last {len(frames)})")
    return Neighbourhood(nodes[0], hops, tenant, nodes, links, beliefs, frames, initial, omitted)


def _fate(superseded_by, tx_to, version, last_version, valid_to) -> str | None:
    if superseded_by is not None:
        return "superseded"
    if tx_to is not None:
        return "corrected" if last_version > version else "forgotten"
    if valid_to is not None:
        return "expired"
    return None


def _replay(nodes, links, beliefs, tenant, at, max_frames):
    """Frames at every change instant (and at `at`), newest max_frames kept; the initial frame's index."""
    instants: set[datetime] = {n.created_at for n in nodes}
    timed = [(l.key, l) for l in links] + [(b.key, b) for b in {b.key: b for b in beliefs}.values()]
    for _, r in timed:
        instants.update(t for t in (r.valid_from, r.valid_to, r.tx_from, r.tx_to) if t is not None)
    if at is not None:
        instants.add(at)
    ordered = sorted(instants)
    cut = max(0, len(ordered) - max_frames)
    kept = ordered[cut:]
    if at is not None and at not in kept:
        kept = sorted([at] + kept[1:])
    events = _events(nodes, links, beliefs)

    # The replay runs in a private in-memory database over just these rows: a frame
    # costs one small query instead of a scan of the whole file.
    con = duckdb.connect()
    try:
        con.execute(_REPLAY_TABLE)
        con.executemany("INSERT INTO rows VALUES (?, ?, ?, ?, ?, ?)",
                        [(k, tenant, r.valid_from, r.valid_to, r.tx_from, r.tx_to) for k, r in timed])
        frames = []
        for t in kept:
            view = TimeView(valid_at=t, tx_at=t)
            keys = {k for (k,) in con.execute(f"SELECT key FROM rows r WHERE {visible('r', view)}",
                                              view.params(tenant)).fetchall()}
            keys.update(n.key for n in nodes if n.created_at <= t)
            keys.add(nodes[0].key)
            frames.append(Frame(t, frozenset(keys), events.get(t, [])))
    finally:
        con.close()
    initial = len(frames) - 1 if at is None else kept.index(at)
    return frames, initial, cut


def _short(text: str, width: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _events(nodes, links, beliefs) -> dict[datetime, list[str]]:
    """What changed at each instant, in words, for the slider's caption."""
    names = {n.entity_id: n.name for n in nodes}
    out: dict[datetime, list[str]] = {}

    def add(t, text):
        if t is not None and text not in out.setdefault(t, []):
            out[t].append(text)

    for b in beliefs:
        quoted = f"“{_short(b.content)}”"
        if b.version > 1:
            add(b.tx_from, f"corrected to {quoted}")
        elif b.supersedes is not None:
            add(b.tx_from, f"{quoted} supersedes an earlier belief")
        else:
            add(b.tx_from, f"remembered {quoted}")
        if b.fate == "forgotten":
            add(b.tx_to, f"forgot {quoted}")
        elif b.fate == "expired":
            add(b.valid_to, f"{quoted} stopped being valid")
    for l in links:
        rel = f"{names.get(l.src_id, l.src_id)} —{l.rel_kind or 'related'}→ {names.get(l.dst_id, l.dst_id)}"
        add(l.tx_from, f"related {rel}")
        if l.fate == "unrelated":
            add(l.valid_to, f"unrelated {rel}")
        elif l.fate == "retracted":
            add(l.tx_to, f"retracted {rel}")
    return out
