"""Function forms of every verb: `from anatid.verbs import remember` then
`remember(db, "text", entities=[...])`. Each takes a handle (or its Store) first,
then exactly the arguments of the verb it wraps (same names, defaults and
docstring: `help(anatid.verbs.recall)` shows them); the Anatid methods call these."""
from __future__ import annotations

import functools
from typing import Any, Callable, Concatenate, ParamSpec, TypeVar

from .entities import upsert_entity as _upsert_entity
from .memories import (episode as _episode, forget as _forget, reinforce as _reinforce,
                       remember as _remember, supersede as _supersede, update as _update)
from .reads import context as _context, get as _get, provenance as _provenance, recall as _recall, \
    recall_2hop as _recall_2hop
from .relations import relate as _relate, relate_many as _relate_many, unrelate as _unrelate
from .upkeep import PruneReport, prune as _prune, remember_many as _remember_many

P = ParamSpec("P")
R = TypeVar("R")


def _store(db):
    return getattr(db, "_store", db)


def _on_handle(verb: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """The verb, called with a handle's Store (functools.wraps: its signature and docstring)."""
    @functools.wraps(verb)
    def call(db: Any, /, *args: P.args, **kw: P.kwargs) -> R:
        return verb(_store(db), *args, **kw)
    return call


def _settled(read: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """A read verb that leaves no result half read on its thread's connection when it
    returns or raises (Store.settle: a half-read result blocks every checkpoint)."""
    @functools.wraps(read)
    def call(db: Any, /, *args: P.args, **kw: P.kwargs) -> R:
        store = _store(db)
        with store.settling():
            return read(store, *args, **kw)
    return call


remember = _on_handle(_remember)
remember_many = _on_handle(_remember_many)
supersede = _on_handle(_supersede)
update = _on_handle(_update)
forget = _on_handle(_forget)
reinforce = _on_handle(_reinforce)
prune = _on_handle(_prune)
relate = _on_handle(_relate)
relate_many = _on_handle(_relate_many)
unrelate = _on_handle(_unrelate)
upsert_entity = _on_handle(_upsert_entity)
episode = _on_handle(_episode)

get = _settled(_get)
recall = _settled(_recall)
recall_2hop = _settled(_recall_2hop)
context = _settled(_context)
provenance = _settled(_provenance)


__all__ = ["remember", "remember_many", "supersede", "update", "forget", "reinforce", "prune", "relate", "relate_many",
           "unrelate", "upsert_entity", "episode", "get", "recall", "recall_2hop", "context", "provenance",
           "PruneReport"]
