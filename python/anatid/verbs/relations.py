"""Entity-to-entity edges: relate and unrelate."""
from __future__ import annotations

from .. import validate
from ..errors import NotFoundError
from ..models import Edge
from ._rows import edge_from_row
from .entities import ensure_entities, find_entity_id
from .memories import audit, require_after
from . import journal

_EDGE_COLUMNS = "edge_id, tenant_id, kind, src_id, dst_id, rel_kind, weight, valid_from, valid_to"

_OPEN_EDGE = f"""
SELECT {_EDGE_COLUMNS} FROM anatid_edges
WHERE tenant_id = $tenant AND kind = 'relates' AND src_id = $src AND dst_id = $dst
  AND rel_kind = $rel_kind AND tx_to IS NULL AND valid_to IS NULL
"""


# Open RELATES edges between $x and $y in either direction, of $rel_kind (NULL: any kind).
_OPEN_BETWEEN = """tenant_id = $tenant AND kind = 'relates' AND tx_to IS NULL AND valid_to IS NULL
  AND ((src_id = $x AND dst_id = $y) OR (src_id = $y AND dst_id = $x))
  AND ($rel_kind IS NULL OR rel_kind = $rel_kind)"""


def relate(store, a: str, b: str, rel_kind: str = "related", *, weight: float = 1.0,
           writer: str | None = None, now=None) -> Edge:
    """Open an edge a -> b of `rel_kind`; an identical open edge is returned as is."""
    a = validate.name(a, "a")
    b = validate.name(b, "b")
    rel_kind = validate.name(rel_kind, "rel_kind")
    weight = validate.finite_number(weight, "weight", low=0.0, high=1e9)
    writer = validate.optional_text(writer, "writer")
    if validate.name_key(a) == validate.name_key(b):
        from ..errors import ValidationError
        raise ValidationError("b", "is the same entity as a", "two different entity names")
    with store.write() as cur:
        t = store.write_instant(now)
        ids = ensure_entities(store, cur, [a, b], t)
        src, dst = ids[validate.name_key(a)], ids[validate.name_key(b)]
        p = {"tenant": store.tenant, "src": src, "dst": dst, "rel_kind": rel_kind}
        row = cur.execute(_OPEN_EDGE, p).fetchone()
        if row is not None:
            return edge_from_row(row)
        eid = store.ids.take()[0]
        cur.execute("""INSERT INTO anatid_edges VALUES ($eid, $tenant, 'relates', $src, $dst, $rel_kind, $weight,
                       $now, NULL, $now, NULL)""", {**p, "eid": eid, "weight": weight, "now": t})
        journal.relation_changed(store, cur, src, dst, t)
        row = cur.execute(f"SELECT {_EDGE_COLUMNS} FROM anatid_edges WHERE edge_id = $eid", {"eid": eid}).fetchone()
    return edge_from_row(row)


def _pair_args(i: int, pair) -> tuple[str, str, str, float]:
    if isinstance(pair, dict):
        pair = dict(dict.items(pair))  # dict's own items(): a subclass's get()/keys() never run
        unknown = set(pair) - {"a", "b", "rel_kind", "weight"}
        if unknown:
            from ..errors import ValidationError
            raise ValidationError(f"pairs[{i}]", f"unknown keys {sorted(unknown)}", "a, b, rel_kind, weight")
        a, b, rel_kind, weight = pair.get("a"), pair.get("b"), pair.get("rel_kind", "related"), pair.get("weight", 1.0)
    elif isinstance(pair, (tuple, list)) and 2 <= len(pair := list(validate.members(pair))) <= 4:
        a, b, rel_kind, weight = pair + ["related", 1.0][len(pair) - 2:]
    else:
        from ..errors import ValidationError
        raise ValidationError(f"pairs[{i}]", "expected (a, b[, rel_kind[, weight]]) or a dict, got "
                              f"{validate.shown(pair)}", "('alice', 'bob', 'knows')")
    a, b = validate.name(a, f"pairs[{i}].a"), validate.name(b, f"pairs[{i}].b")
    rel_kind = validate.name(rel_kind, f"pairs[{i}].rel_kind")
    weight = validate.finite_number(weight, f"pairs[{i}].weight", low=0.0, high=1e9)
    if validate.name_key(a) == validate.name_key(b):
        from ..errors import ValidationError
        raise ValidationError(f"pairs[{i}].b", "is the same entity as a", "two different entity names")
    return a, b, rel_kind, weight


_OPEN_FROM = f"""
SELECT {_EDGE_COLUMNS} FROM anatid_edges
WHERE tenant_id = $tenant AND kind = 'relates' AND tx_to IS NULL AND valid_to IS NULL
  AND list_contains($srcs, src_id)
"""

_INSERT_MANY = """
INSERT INTO anatid_edges (edge_id, tenant_id, kind, src_id, dst_id, rel_kind, weight, valid_from, valid_to,
                          tx_from, tx_to)
SELECT unnest($eids), $tenant, 'relates', unnest($srcs), unnest($dsts), unnest($kinds), unnest($weights),
       $now, NULL, $now, NULL
"""


def relate_many(store, pairs, *, writer: str | None = None, now=None) -> list[Edge]:
    """relate() for many pairs in one transaction and a fixed number of statements:
    pairs of (a, b), (a, b, rel_kind), (a, b, rel_kind, weight) or dicts with those keys.
    Returns one Edge per pair, in order (an identical open edge is returned as is)."""
    from ..errors import ValidationError
    accepted = "a list of (a, b[, rel_kind[, weight]]) tuples or dicts"
    if isinstance(pairs, (str, bytes, dict)) or not hasattr(type(pairs), "__iter__"):
        raise ValidationError("pairs", f"expected a list of pairs, got {type(pairs).__name__}", accepted)
    try:
        pairs = list(validate.members(pairs))
    except MemoryError:
        raise
    except Exception as exc:  # the caller's own __iter__ (or generator) raised
        raise ValidationError("pairs", f"could not be iterated ({type(exc).__name__})", accepted) from exc
    items = [_pair_args(i, p) for i, p in enumerate(pairs)]
    writer = validate.optional_text(writer, "writer")
    if not items:
        return []
    with store.write() as cur:
        t = store.write_instant(now)
        ids = ensure_entities(store, cur, [n for a, b, _, _ in items for n in (a, b)], t)
        keyed = [(ids[validate.name_key(a)], ids[validate.name_key(b)], k, w) for a, b, k, w in items]
        srcs = sorted({s for s, _, _, _ in keyed})
        edges = {(r[3], r[4], r[5]): r for r in cur.execute(_OPEN_FROM, {"tenant": store.tenant,
                                                                         "srcs": srcs}).fetchall()}
        new = []
        for src, dst, k, w in keyed:
            if (src, dst, k) not in edges:
                row = (None, store.tenant, "relates", src, dst, k, float(w), t, None)
                edges[(src, dst, k)] = row
                new.append(row)
        if new:
            eids = store.ids.take(len(new))
            for eid, row in zip(eids, new):
                edges[(row[3], row[4], row[5])] = (eid, *row[1:])
            cur.execute(_INSERT_MANY, {"eids": eids, "tenant": store.tenant, "srcs": [r[3] for r in new],
                                       "dsts": [r[4] for r in new], "kinds": [r[5] for r in new],
                                       "weights": [r[6] for r in new], "now": t})
            journal.relations_changed(store, cur, list(dict.fromkeys((r[3], r[4]) for r in new)), t)
    return [edge_from_row(edges[(src, dst, k)]) for src, dst, k, _ in keyed]


def unrelate(store, a: str, b: str, rel_kind: str | None = None, *, writer: str | None = None, now=None) -> int:
    """Close every open edge between a and b (either direction); returns how many."""
    a = validate.name(a, "a")
    b = validate.name(b, "b")
    rel_kind = None if rel_kind is None else validate.name(rel_kind, "rel_kind")
    writer = validate.optional_text(writer, "writer")
    with store.write() as cur:
        t = store.write_instant(now)
        src, dst = find_entity_id(store, cur, a), find_entity_id(store, cur, b)
        if src is None or dst is None:
            missing = a if src is None else b
            raise NotFoundError(f"no entity named {missing!r} in tenant {store.tenant}")
        p = {"tenant": store.tenant, "x": src, "y": dst, "rel_kind": rel_kind}
        latest = cur.execute(f"SELECT max(valid_from) FROM anatid_edges WHERE {_OPEN_BETWEEN}", p).fetchone()[0]
        if latest is not None:
            require_after(t, latest, "the edge's valid_from")
        closed = cur.execute(f"UPDATE anatid_edges SET valid_to = $now WHERE {_OPEN_BETWEEN}",
                             {**p, "now": t}).fetchone()[0]
        if closed == 0:
            raise NotFoundError(f"no open edge between {a!r} and {b!r}"
                                + (f" of kind {rel_kind!r}" if rel_kind else ""))
        journal.relation_changed(store, cur, src, dst, t)
        audit(store, cur, t, "unrelate", src, writer, other=str(dst), closed=int(closed))
    return int(closed)
