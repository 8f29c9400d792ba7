"""`as_of` for the MCP reads get, provenance and stats.

get is the facade's `get(as_of=)`. For provenance and stats, if the facade's verb accepts
`as_of` it is used as is; otherwise the version history the verbs already return is
filtered by transaction time, so the answer is what the memory believed at that instant,
as far as the rows still present tell (a hard forget erases history too).
"""
from __future__ import annotations

import dataclasses
import inspect

from ...errors import NotFoundError
from ...predicates import TimeView, visible
from ...timeutil import from_db, to_db


def _accepts_as_of(fn) -> bool:
    try:
        return "as_of" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def get(db, memory_id, as_of):
    return db.get(memory_id) if as_of is None else db.get(memory_id, as_of=as_of)


def provenance(db, memory_id, as_of):
    if as_of is None:
        return db.provenance(memory_id)
    if _accepts_as_of(db.provenance):
        return db.provenance(memory_id, as_of=as_of)
    t = from_db(to_db(as_of, "as_of"))
    prov = db.provenance(memory_id)
    chain = tuple(m for m in prov.chain if m.tx_from <= t)
    if not any(m.memory_id == prov.memory_id for m in chain):
        raise NotFoundError(f"memory {prov.memory_id} did not exist yet at as_of={t.isoformat()}")
    episodes = tuple(e for e in prov.episodes if e.recorded_at <= t)
    audit = tuple(a for a in prov.audit if from_db(a["at"]) <= t)
    writers = []
    for w in [m.writer for m in chain] + [e.writer for e in episodes] + [a["writer"] for a in audit]:
        if w is not None and w not in writers:
            writers.append(w)
    return dataclasses.replace(prov, chain=chain, episodes=episodes, writers=tuple(writers), audit=audit)


_COUNTS_AS_OF = """
SELECT (SELECT count(*) FROM anatid_memories m WHERE {memories}),
       (SELECT count(*) FROM anatid_edges e WHERE {edges} AND e.kind = 'relates')
"""


def stats(db, as_of):
    out = db.stats()
    if as_of is None:
        return out
    if _accepts_as_of(db.stats):
        return db.stats(as_of=as_of)
    t = to_db(as_of, "as_of")
    view = TimeView(valid_at=t, tx_at=t)
    sql = _COUNTS_AS_OF.format(memories=visible("m", view), edges=visible("e", view))
    memories, relations = db.connection.execute(sql, view.params(db.tenant)).fetchone()
    out.update({"as_of": from_db(t).isoformat(), "current_memories": memories, "open_relations": relations})
    return out
