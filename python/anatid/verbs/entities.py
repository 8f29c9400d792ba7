"""Entities: find or create by name, within one transaction."""
from __future__ import annotations

from .. import validate
from ..models import Entity
from ._rows import entity_from_row

# list_contains, not IN (SELECT unnest(...)): the semi-join plan cost ~8 ms per call
# against ~0.7 ms, and remember runs this on every write with entities.
_FIND = """
SELECT name_key, entity_id, name FROM anatid_entities
WHERE tenant_id = $tenant AND list_contains($keys, name_key)
"""

_INSERT = """
INSERT INTO anatid_entities (entity_id, tenant_id, name, name_key, kind, created_at)
SELECT unnest($ids), $tenant, unnest($names), unnest($keys), $kind, $now
"""


_KNOWN_MAX = 200_000


def _known(store) -> dict[str, tuple[int, str]]:
    """name_key -> (entity_id, stored name) of committed entities this handle has seen, for
    its tenant: a remember naming known entities skips the lookup statement."""
    caches = getattr(store, "_entities_known", None)
    if caches is None:
        caches = store._entities_known = {}
    return caches.setdefault(store.tenant, {})


def ensure_entities(store, cur, names: list[str], now, kind: str | None = None) -> dict[str, int]:
    """name_key -> entity_id for every name, creating the missing ones."""
    return {k: eid for k, (eid, _) in ensure_entities_named(store, cur, names, now, kind).items()}


def ensure_entities_named(store, cur, names: list[str], now,
                          kind: str | None = None) -> dict[str, tuple[int, str]]:
    """name_key -> (entity_id, stored name) for every name, creating the missing ones."""
    if not names:
        return {}
    keys = [validate.name_key(n) for n in names]
    known = _known(store)
    found = {k: known[k] for k in keys if k in known}
    ask = [k for k in keys if k not in found]
    if ask:
        rows = {k: (int(i), n) for k, i, n in cur.execute(_FIND, {"tenant": store.tenant, "keys": ask}).fetchall()}
        found.update(rows)
        if store._state().depth == 1 and len(known) < _KNOWN_MAX:
            # Found by a verb's own top-level transaction before it created anything:
            # committed rows, and entities are never renamed or deleted.
            known.update(rows)
    # one row per new key, its first spelling: a name twice in `names` (relate_many's
    # ("e", "f"), ("e", "g"), or "Ada" and "ada") raised DuckDB's duplicate-key error
    first: dict[str, str] = {}
    for n, k in zip(names, keys):
        if k not in found:
            first.setdefault(k, n)
    missing = [(n, k) for k, n in first.items()]
    if missing:
        new_ids = store.ids.take(len(missing))
        cur.execute(_INSERT, {"ids": new_ids, "tenant": store.tenant, "names": [n for n, _ in missing],
                              "keys": [k for _, k in missing], "kind": kind, "now": now})
        found.update({k: (i, n) for (n, k), i in zip(missing, new_ids)})
    return {k: found[k] for k in keys}


def find_entity_id(store, cur, name: str) -> int | None:
    row = cur.execute("SELECT entity_id FROM anatid_entities WHERE tenant_id = $tenant AND name_key = $key",
                      {"tenant": store.tenant, "key": validate.name_key(name)}).fetchone()
    return None if row is None else int(row[0])


def upsert_entity(store, name: str, kind: str | None = None, *, now=None) -> Entity:
    name = validate.name(name, "name")
    kind = validate.optional_text(kind, "kind")
    with store.write() as cur:
        t = store.write_instant(now)
        eid = ensure_entities(store, cur, [name], t, kind)[validate.name_key(name)]
        if kind is not None:
            cur.execute("UPDATE anatid_entities SET kind = $kind WHERE entity_id = $id AND tenant_id = $tenant "
                        "AND kind IS DISTINCT FROM $kind", {"kind": kind, "id": eid, "tenant": store.tenant})
        row = cur.execute("SELECT entity_id, tenant_id, name, kind, created_at FROM anatid_entities "
                          "WHERE entity_id = $id", {"id": eid}).fetchone()
    return entity_from_row(row)
