"""Which engine answers a read: the native extension when it is loaded and
able to, else the SQL oracle. Both return the same ids in the same order;
a read that falls back says why in RecallHits.notes.

The native engines register themselves here (anatid.native_graph and
anatid.native_hybrid); without them every read goes to the oracle.
"""
from __future__ import annotations


class SqlGraphEngine:
    name = "sql"

    def __init__(self, store):
        self.store = store

    def recall(self, cur, view, keys, hops, kinds, limit, notes=()):
        from .verbs.graph_sql import graph_recall_oracle
        return graph_recall_oracle(self.store, cur, view, keys, hops, kinds, limit, tuple(notes) + _why(self.store))


class SqlHybridEngine:
    name = "sql"

    def __init__(self, store):
        self.store = store

    def recall(self, cur, view, params, **kw):
        from .verbs.recall_sql import hybrid_oracle
        kw["notes"] = list(kw.get("notes", ())) + list(_why(self.store))
        return hybrid_oracle(self.store, cur, view, params, **kw)


def _why(store) -> tuple[str, ...]:
    """index_health()'s reason for a read the native engine did not answer (NativeStatus says more)."""
    return () if store.native.loaded else ("load_failure",)


_native_graph = None    # factory(store) -> engine, set by the native graph module
_native_hybrid = None
_native_graph_arm = None    # the hybrid graph arm's native ranker (anatid.native_graph.rank_ids)


def register_native(graph=None, hybrid=None, graph_arm=None) -> None:
    global _native_graph, _native_hybrid, _native_graph_arm
    if graph is not None:
        _native_graph = graph
    if hybrid is not None:
        _native_hybrid = hybrid
    if graph_arm is not None:
        _native_graph_arm = graph_arm


def graph_arm(store, cur, view, rank, *, seed_keys, query, kinds, notes, content=None):
    """The hybrid graph arm's (memory_id, hop) list from the native engine, or None when it
    cannot answer (no extension, a historical view, no generation): the SQL oracle then.
    `content` (a dict) receives memory_id -> (content, kind) for hits whose rows need no read."""
    if not store.native.loaded or _native_graph_arm is None or _native_hybrid is None:
        return None
    return _native_graph_arm(store, cur, view, rank, seed_keys=seed_keys, query=query, kinds=kinds, notes=notes,
                             content=content)


def graph_engine(store):
    if store.native.loaded and _native_graph is not None:
        return _native_graph(store)
    return SqlGraphEngine(store)


def hybrid_engine(store):
    if store.native.loaded and _native_hybrid is not None:
        return _native_hybrid(store)
    return SqlHybridEngine(store)
