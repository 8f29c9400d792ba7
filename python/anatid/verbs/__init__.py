"""Function forms of every verb: `from anatid.verbs import remember` then
`remember(db, "text", entities=[...])`. The Anatid methods call these."""
from __future__ import annotations

from .entities import upsert_entity as _upsert_entity
from .memories import (episode as _episode, forget as _forget, reinforce as _reinforce,
                       remember as _remember, supersede as _supersede, update as _update)
from .reads import context as _context, get as _get, provenance as _provenance, recall as _recall, \
    recall_2hop as _recall_2hop
from .relations import relate as _relate, relate_many as _relate_many, unrelate as _unrelate
from .upkeep import PruneReport, prune as _prune, remember_many as _remember_many


def _store(db):
    return getattr(db, "_store", db)


def remember(db, content, entities=None, **kw):
    return _remember(_store(db), content, entities, **kw)


def remember_many(db, items, **kw):
    return _remember_many(_store(db), items, **kw)


def supersede(db, old_id, content, **kw):
    return _supersede(_store(db), old_id, content, **kw)


def update(db, memory_id, content, **kw):
    return _update(_store(db), memory_id, content, **kw)


def forget(db, memory_id, **kw):
    return _forget(_store(db), memory_id, **kw)


def reinforce(db, memory_id, amount=1.0, **kw):
    return _reinforce(_store(db), memory_id, amount, **kw)


def prune(db, **kw):
    return _prune(_store(db), **kw)


def relate(db, a, b, rel_kind="related", **kw):
    return _relate(_store(db), a, b, rel_kind, **kw)


def relate_many(db, pairs, **kw):
    return _relate_many(_store(db), pairs, **kw)


def unrelate(db, a, b, rel_kind=None, **kw):
    return _unrelate(_store(db), a, b, rel_kind, **kw)


def upsert_entity(db, name, kind=None, **kw):
    return _upsert_entity(_store(db), name, kind, **kw)


def episode(db, content, **kw):
    return _episode(_store(db), content, **kw)


def _settled(read):
    """A read verb that leaves no result half read on its thread's connection when it
    returns or raises (Store.settle: a half-read result blocks every checkpoint)."""
    def verb(db, *args, **kw):
        store = _store(db)
        with store.settling():
            return read(store, *args, **kw)
    verb.__name__, verb.__doc__ = read.__name__, read.__doc__
    return verb


get = _settled(_get)
recall = _settled(_recall)
recall_2hop = _settled(_recall_2hop)
context = _settled(_context)
provenance = _settled(_provenance)


__all__ = ["remember", "remember_many", "supersede", "update", "forget", "reinforce", "prune", "relate", "relate_many",
           "unrelate", "upsert_entity", "episode", "get", "recall", "recall_2hop", "context", "provenance",
           "PruneReport"]
