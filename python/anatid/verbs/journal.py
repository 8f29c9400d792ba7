"""Journal hooks: every write that changes what a derived index covers calls
one of these inside its own transaction, so the change is merged by the next
read with nothing rebuilt.

The graph, text and vector index modules (anatid.indexes) append their
journal rows here. While an index has no journal of its own, its hook does
nothing and reads of that index go to the canonical tables.
"""
from __future__ import annotations

_hooks: dict[str, list] = {"about_added": [], "relation_changed": [], "memory_closed": [],
                           "memory_erased": [], "text_changed": [], "vector_changed": []}


def register(event: str, fn) -> None:
    """Called by an index module at import time."""
    _hooks[event].append(fn)


def _fire(event: str, *args) -> None:
    for fn in _hooks[event]:
        fn(*args)


def about_added(store, cur, pairs: list[tuple[int, int]], now) -> None:
    """pairs: (memory_id, entity_id) ABOUT links just written."""
    _fire("about_added", store, cur, pairs, now)


def relation_changed(store, cur, src_id: int, dst_id: int, now) -> None:
    _fire("relation_changed", store, cur, src_id, dst_id, now)


def memory_closed(store, cur, memory_ids: list[int], now) -> None:
    _fire("memory_closed", store, cur, memory_ids, now)


def memory_erased(store, cur, memory_id: int) -> None:
    _fire("memory_erased", store, cur, memory_id)


def text_changed(store, cur, memory_ids: list[int], now) -> None:
    _fire("text_changed", store, cur, memory_ids, now)


def vector_changed(store, cur, memory_ids: list[int], now) -> None:
    _fire("vector_changed", store, cur, memory_ids, now)
