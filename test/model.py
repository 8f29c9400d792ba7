"""A small pure-Python model of anatid's bitemporal rules (docs/architecture.md).

Instants are plain numbers (seconds); None is an open end. Each write has an
`*_error` method giving the exception the real verb must raise (or None) and
a method applying it. `graph()` answers context / recall_2hop and `get()`
answers get, from the rules alone:

    current view   tx_to is None            and valid_from <= now < valid_to
    as_of(t)       tx_from <= t < tx_to     and valid_from <= t   < valid_to
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from anatid import ConflictError, NotFoundError, ValidationError

INF = float("inf")


def _lt(a, b) -> bool:
    """a < b where b None is +infinity."""
    return b is None or a < b


def key(name: str) -> str:
    return " ".join(name.split()).lower()


@dataclass(frozen=True)
class Version:
    version: int
    content: str
    kind: str
    valid_from: float
    valid_to: float | None
    tx_from: float
    tx_to: float | None
    supersedes: int | None = None
    superseded_by: int | None = None

    def visible(self, valid_at: float, tx_at: float | None) -> bool:
        if tx_at is None:
            tx_ok = self.tx_to is None
        else:
            tx_ok = self.tx_from <= tx_at and _lt(tx_at, self.tx_to)
        return tx_ok and self.valid_from <= valid_at and _lt(valid_at, self.valid_to)


@dataclass
class Mem:
    entities: tuple[str, ...]          # name keys, in ABOUT edge order
    versions: list[Version] = field(default_factory=list)

    @property
    def believed(self) -> Version | None:
        return next((v for v in self.versions if v.tx_to is None), None)


@dataclass
class RelEdge:
    a: str
    b: str
    rel_kind: str
    valid_from: float
    valid_to: float | None = None       # tx_from == valid_from; tx_to never set


class Model:
    def __init__(self) -> None:
        self.mems: dict[int, Mem] = {}
        self.names: dict[str, str] = {}    # name key -> stored spelling (first seen)
        self.edges: list[RelEdge] = []

    # -- entities ----------------------------------------------------------------------------------
    def _ensure(self, names) -> tuple[str, ...]:
        keys = []
        for n in names:
            k = key(n)
            if k not in keys:
                keys.append(k)
                self.names.setdefault(k, n.strip())
        return tuple(keys)

    def entity_names(self, mid: int) -> tuple[str, ...]:
        return tuple(self.names[k] for k in self.mems[mid].entities)

    # -- writes ------------------------------------------------------------------------------------
    def remember(self, mid, t, content, kind="fact", entities=(), valid_from=None, valid_to=None) -> None:
        keys = self._ensure(entities)
        vf = t if valid_from is None else valid_from
        self.mems[mid] = Mem(keys, [Version(1, content, kind, vf, valid_to, t, None)])

    def _believed_or_error(self, mid):
        if mid not in self.mems:
            return None, NotFoundError
        v = self.mems[mid].believed
        if v is None:
            return None, ConflictError         # forgotten: not retryable
        return v, None

    def supersede_error(self, old, t):
        v, err = self._believed_or_error(old)
        if err:
            return err, False
        if v.valid_to is not None:
            return ConflictError, False
        if t <= v.valid_from:
            return ValidationError, None
        return None, None

    def supersede(self, old, new, t, content, kind=None) -> None:
        m = self.mems[old]
        i = m.versions.index(m.believed)
        v = m.versions[i]
        m.versions[i] = replace(v, valid_to=t, superseded_by=new)
        self.mems[new] = Mem(m.entities, [Version(1, content, kind or v.kind, t, None, t, None, supersedes=old)])

    def forget_error(self, mid, t, hard):
        if mid not in self.mems:
            return NotFoundError, None
        if hard:
            return None, None
        v, err = self._believed_or_error(mid)
        if err:
            return err, False
        if t <= v.tx_from:
            return ValidationError, None
        return None, None

    def forget(self, mid, t, hard) -> None:
        if hard:
            del self.mems[mid]
            for m in self.mems.values():
                m.versions = [replace(v, supersedes=None if v.supersedes == mid else v.supersedes,
                                      superseded_by=None if v.superseded_by == mid else v.superseded_by)
                              for v in m.versions]
            return
        m = self.mems[mid]
        i = m.versions.index(m.believed)
        m.versions[i] = replace(m.versions[i], tx_to=t)

    def update_error(self, mid, t, expected):
        v, err = self._believed_or_error(mid)
        if err:
            return err, False
        if v.version != expected:
            return ConflictError, True
        if t <= v.tx_from:
            return ValidationError, None
        return None, None

    def update(self, mid, t, content) -> None:
        m = self.mems[mid]
        i = m.versions.index(m.believed)
        v = m.versions[i]
        m.versions[i] = replace(v, tx_to=t)
        m.versions.append(replace(v, version=v.version + 1, content=content, tx_from=t, tx_to=None))

    def relate(self, a, b, rel_kind, t) -> None:
        ka, kb = self._ensure([a, b])
        if any(e.a == ka and e.b == kb and e.rel_kind == rel_kind and e.valid_to is None for e in self.edges):
            return
        self.edges.append(RelEdge(ka, kb, rel_kind, t))

    def _between(self, a, b, rel_kind):
        ka, kb = key(a), key(b)
        return [e for e in self.edges if e.valid_to is None and {e.a, e.b} == {ka, kb}
                and (rel_kind is None or e.rel_kind == rel_kind)]

    def unrelate_error(self, a, b, rel_kind, t):
        if key(a) not in self.names or key(b) not in self.names:
            return NotFoundError, None
        edges = self._between(a, b, rel_kind)
        if edges and t <= max(e.valid_from for e in edges):
            return ValidationError, None
        if not edges:
            return NotFoundError, None
        return None, None

    def unrelate(self, a, b, rel_kind, t) -> int:
        edges = self._between(a, b, rel_kind)
        for e in edges:
            e.valid_to = t
        return len(edges)

    # -- reads -------------------------------------------------------------------------------------
    def graph(self, seeds, hops, valid_at, tx_at=None, kinds=None, limit=50):
        """[(memory_id, content, hop)] in recall order, or NotFoundError."""
        keys = {key(s) for s in seeds}
        if not keys & set(self.names):
            return NotFoundError
        live = [e for e in self.edges
                if e.valid_from <= valid_at and _lt(valid_at, e.valid_to)
                and (tx_at is None or e.valid_from <= tx_at)]
        dist = {k: 0 for k in keys if k in self.names}
        frontier = set(dist)
        for hop in range(1, hops + 1):
            nxt = set()
            for e in live:
                for x, y in ((e.a, e.b), (e.b, e.a)):
                    if x in frontier and y not in dist:
                        nxt.add(y)
            for y in nxt:
                dist[y] = hop
            frontier = nxt
        hits = []
        for mid, m in self.mems.items():
            reached = [dist[k] for k in m.entities if k in dist]
            if not reached:
                continue
            vis = [v for v in m.versions if v.visible(valid_at, tx_at)]
            assert len(vis) <= 1, "two versions of one memory visible at once"
            if vis and (kinds is None or vis[0].kind in kinds):
                hits.append((mid, vis[0].content, min(reached)))
        hits.sort(key=lambda h: (h[2], -h[0]))
        return hits[:limit]

    def get(self, mid):
        """The latest version's fields, or NotFoundError."""
        if mid not in self.mems:
            return NotFoundError
        v = max(self.mems[mid].versions, key=lambda x: x.version)
        return {"version": v.version, "content": v.content, "kind": v.kind, "valid_from": v.valid_from,
                "valid_to": v.valid_to, "tx_from": v.tx_from, "tx_to": v.tx_to, "supersedes": v.supersedes,
                "superseded_by": v.superseded_by, "entities": self.entity_names(mid)}
