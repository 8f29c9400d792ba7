"""Reading rows into result types, shared by the verbs."""
from __future__ import annotations

from ..models import Edge, Entity, Episode, Memory
from ..timeutil import from_db

MEMORY_COLUMNS = ("memory_id, version, tenant_id, content, kind, confidence, strength, writer, "
                  "valid_from, valid_to, tx_from, tx_to, supersedes, superseded_by")


def memory_from_row(row, entities=()) -> Memory:
    (mid, version, tenant, content, kind, confidence, strength, writer,
     vf, vt, tf, tt, sup, supby) = row[:14]
    return Memory(int(mid), int(version), int(tenant), content, kind, float(confidence), float(strength),
                  writer, from_db(vf), from_db(vt), from_db(tf), from_db(tt),
                  None if sup is None else int(sup), None if supby is None else int(supby),
                  tuple(entities))


def entity_from_row(row) -> Entity:
    eid, tenant, name, kind, created = row
    return Entity(int(eid), int(tenant), name, kind, from_db(created))


def episode_from_row(row) -> Episode:
    eid, tenant, content, source, writer, at = row
    return Episode(int(eid), int(tenant), content, source, writer, from_db(at))


def edge_from_row(row) -> Edge:
    eid, tenant, kind, src, dst, rel_kind, weight, vf, vt = row
    return Edge(int(eid), int(tenant), kind, int(src), int(dst), rel_kind, float(weight), from_db(vf), from_db(vt))
