"""Journal hooks: every write that changes what a derived index covers calls
one of these inside its own transaction, so the change is merged by the next
read with nothing rebuilt.

The graph, text and vector index modules (anatid.indexes) append their
journal rows here. While an index has no journal of its own, its hook does
nothing and reads of that index go to the canonical tables.
"""
from __future__ import annotations

_hooks: dict[str, list] = {"about_added": [], "relation_changed": [], "relations_changed": [],
                           "memory_closed": [], "memory_erased": [], "text_changed": [], "vector_changed": []}


def register(event: str, fn) -> None:
    """Called by an index module at import time."""
    _hooks[event].append(fn)


def _fire(event: str, *args, **known) -> None:
    known = {k: v for k, v in known.items() if v is not None}
    for fn in _hooks[event]:
        fn(*args, **known)


# `known`: the state after the write, as the writer already has it in hand. A hook given
# it writes its journal rows from these values (O(rows written)); without it, the hook
# reads the state back from the canonical tables. `rel`: the same state as a SQL relation
# (a parenthesized SELECT over relations the writer registered), for a batch: the hook
# writes its rows with one INSERT ... SELECT from it, and the ids argument is unused.

def about_added(store, cur, pairs: list[tuple[int, int]] | None, now, known=None, rel: str | None = None) -> None:
    """pairs: (memory_id, entity_id) ABOUT links just written; known: per pair
    (memory kind, memory valid_from, memory valid_to, entity name_key); rel: columns
    a (memory id), b (entity id), kind, valid_from, valid_to (TIMESTAMP), b_key."""
    _fire("about_added", store, cur, pairs, now, known=known, rel=rel)


def relation_changed(store, cur, src_id: int, dst_id: int, now) -> None:
    _fire("relation_changed", store, cur, src_id, dst_id, now)


def relations_changed(store, cur, pairs: list[tuple[int, int]], now) -> None:
    """relation_changed for many (src_id, dst_id) pairs at once: an index registers a
    set-based hook for it, or each pair goes through its relation_changed hook."""
    if _hooks["relations_changed"]:
        _fire("relations_changed", store, cur, pairs, now)
    else:
        for src_id, dst_id in pairs:
            relation_changed(store, cur, src_id, dst_id, now)


def memory_closed(store, cur, memory_ids: list[int], now) -> None:
    _fire("memory_closed", store, cur, memory_ids, now)


def memory_erased(store, cur, memory_id: int) -> None:
    _fire("memory_erased", store, cur, memory_id)


def text_changed(store, cur, memory_ids: list[int] | None, now, known=None, rel: str | None = None) -> None:
    """known: per memory id (doc_len, valid_from, valid_to, sorted terms, tfs) of a believed
    memory; rel: columns id, doc_len, vf, vt (TIMESTAMP), postings ("term:tf ...", NULL: none)."""
    _fire("text_changed", store, cur, memory_ids, now, known=known, rel=rel)


def vector_changed(store, cur, memory_ids: list[int] | None, now, known=None, rel: str | None = None) -> None:
    """known: per memory id (valid_from, valid_to, norm, embedding) of a believed memory;
    rel: columns id, vf, vt (TIMESTAMP), norm, embedding."""
    _fire("vector_changed", store, cur, memory_ids, now, known=known, rel=rel)
