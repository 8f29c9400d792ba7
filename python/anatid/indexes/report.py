"""index_health(): per (index, tenant), one of health.REASONS (checked in the order
anatid.indexes.health lists them), its counts and whether maintenance is due.

Apart from health (the flags and guards every read uses) because the deep check
compares the native graph engine with the SQL oracle: native_graph uses health's
guards, so health itself must not import native_graph.
"""
from __future__ import annotations

from datetime import datetime

import duckdb

from . import graph as graph_index
from .health import (INDEXES, DamagedBase, building, flagged, mark_damaged, reconcile, stored_problem)
from .policy import EAGER, MaintenancePolicy


def _tenants(cur) -> list[int]:
    return [int(r[0]) for r in cur.execute(
        "SELECT tenant_id FROM anatid_entities UNION SELECT tenant_id FROM anatid_memories ORDER BY 1").fetchall()]


def _has_tables(store, cur, index: str) -> bool:
    if index == "graph":
        return graph_index.has_tables(store, cur)
    n = cur.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                    "AND schema_name = current_schema() AND table_name IN (SELECT unnest($t))",
                    {"t": [f"anatid_{index}_gen", f"anatid_{index}_gen_parts", f"anatid_{index}_journal"]}
                    ).fetchone()[0]
    return n == 3


_COUNTS = {
    "graph": ("SELECT (SELECT memories + edges FROM anatid_graph_generations WHERE tenant_id = $t), "
              "(SELECT built_at FROM anatid_graph_generations WHERE tenant_id = $t), "
              "(SELECT count(*) FROM anatid_graph_journal WHERE tenant_id = $t AND op <> 0)"),
    "text": ("SELECT (SELECT n_docs FROM anatid_text_gen WHERE tenant_id = $t), "
             "(SELECT built_at FROM anatid_text_gen WHERE tenant_id = $t), "
             "(SELECT count(*) FROM anatid_text_journal WHERE tenant_id = $t)"),
    "vector": ("SELECT (SELECT n_rows FROM anatid_vector_gen WHERE tenant_id = $t), "
               "(SELECT built_at FROM anatid_vector_gen WHERE tenant_id = $t), "
               "(SELECT count(*) FROM anatid_vector_journal WHERE tenant_id = $t)"),
}


def graph_sample_problem(store, cur, tenant: int, at, seeds: int = 16, only_touched: bool = False) -> str | None:
    """Recall around the entities written since the base was built (those answers must come
    from the journal) plus, unless only_touched, a few others, natively and with the SQL
    oracle: any difference means the base or its journal is wrong."""
    from ..native_graph import recall_ids     # the native engine registers itself on import
    from ..predicates import TimeView
    from ..verbs.graph_sql import graph_recall_oracle
    built = cur.execute("SELECT built_at FROM anatid_graph_generations WHERE tenant_id = $t", {"t": tenant}).fetchone()
    if built is None:
        return None
    keys = [r[0] for r in cur.execute("""
        WITH touched AS (
            SELECT dst_id AS e, tx_from AS at FROM anatid_edges WHERE tenant_id = $t AND kind = 'about'
            UNION ALL SELECT src_id, coalesce(tx_to, tx_from) FROM anatid_edges WHERE tenant_id = $t AND kind = 'relates'
            UNION ALL SELECT dst_id, coalesce(tx_to, tx_from) FROM anatid_edges WHERE tenant_id = $t AND kind = 'relates')
        SELECT n.name_key FROM anatid_entities n JOIN touched ON touched.e = n.entity_id
        WHERE n.tenant_id = $t GROUP BY n.name_key HAVING NOT $only OR max(touched.at) >= $built
        ORDER BY max(touched.at) >= $built DESC, hash(n.name_key) LIMIT $n""",
        {"t": tenant, "built": built[0], "n": seeds, "only": only_touched}).fetchall()]
    view = TimeView(valid_at=at)
    proxy = _TenantStore(store, tenant)
    for key in keys:
        native = recall_ids(cur, tenant, [key], 1, 100_000, None, at)
        oracle = graph_recall_oracle(proxy, cur, view, [key], 1, None, 100_000)
        if native is None or [(m, h) for m, h in native] != [(h.memory_id, h.hop) for h in oracle]:
            return f"graph recall around {key!r} differs from the SQL oracle"
    return None


class _TenantStore:
    """The store as seen by another tenant (the oracle reads only .tenant)."""

    def __init__(self, store, tenant: int):
        self._store, self.tenant = store, tenant

    def __getattr__(self, name):
        return getattr(self._store, name)


def index_health(store, *, all_tenants: bool = False, policy: MaintenancePolicy | None = None,
                 as_of=None, deep: bool = True) -> list[dict]:
    """One entry per (index, tenant): its reason, counts and whether maintenance is due."""
    policy = EAGER if policy is None else policy
    cur = store.read()
    tenants = _tenants(cur) if all_tenants else [store.tenant]
    if all_tenants and store.tenant not in tenants:
        tenants.append(store.tenant)
    now = store.view().valid_at
    out = []
    for index in INDEXES:
        tables = _has_tables(store, cur, index)
        for t in tenants:
            entry = {"index": index, "tenant": t, "reason": "absent", "due": True, "generation_id": None,
                     "base_rows": 0, "pending_rows": 0, "ratio": None, "age_seconds": None, "detail": ""}
            out.append(entry)
            if not tables:
                entry["detail"] = "the file has no tables for this index (it predates them)"
                continue
            base, built_at, pending = cur.execute(_COUNTS[index], {"t": t}).fetchone()
            entry["pending_rows"] = int(pending)
            gen, problem, validated = stored_problem(store, cur, index, t)
            if gen is not None:
                age = (now - built_at).total_seconds() if isinstance(built_at, datetime) else None
                entry.update(generation_id=str(gen), base_rows=int(base or 0), age_seconds=age,
                             ratio=round(int(pending) / max(int(base or 0), 1), 6))
            if as_of is not None:
                entry.update(reason="historical_query", due=False,
                             detail="as_of reads are answered by the SQL oracle (bases hold the current view)")
                continue
            if not store.native.loaded:   # every read of this index goes to the SQL oracle
                entry.update(reason="load_failure", detail=store.native.reason or "native extension not loaded",
                             due=index != "graph" and gen is None)
                continue
            if building(store, index, t):
                entry.update(reason="rebuild_in_progress", due=False, detail="maintain_indexes() is building it now")
                continue
            if gen is None and problem is None:
                entry["detail"] = "no generation yet: run maintain_indexes()"
                continue
            if index == "graph" and graph_index.unkeyed(store, cur):
                entry.update(reason="absent", due=False,
                             detail="the graph generation predates nonces and the file is open read-only: the SQL "
                                    "oracle answers graph reads until it is opened read-write once (which adds them)")
                continue
            if problem is None and deep:
                problem = reconcile(cur, index, t)
                if problem is None and index == "graph":
                    try:
                        problem = graph_sample_problem(store, cur, t, now, seeds=4, only_touched=True)
                    except (DamagedBase, duckdb.Error) as exc:    # an unvalidated BLOB that does not parse
                        problem = f"graph generation could not be read: {str(exc).splitlines()[0]}"
            problem = problem or flagged(store, index, t)
            if problem is not None:
                mark_damaged(store, index, t, problem)
                entry.update(reason="damaged_base", due=True, detail=problem)
            elif not validated:
                entry.update(reason="unvalidated", due=True,
                             detail="built outside maintain_indexes(): never compared with the SQL oracle")
            else:
                fired = policy.triggers(pending=int(pending), base_rows=int(base or 0), age_seconds=entry["age_seconds"])
                entry.update(reason="stale_generation" if fired else "fresh", due=bool(fired),
                             detail=", ".join(fired))
    out += _ann_entries(store, cur, tenants)
    return out


def _ann_entries(store, cur, tenants) -> list[dict]:
    """The opt-in ANN index (anatid.indexes.ann): an entry only for a tenant that opted in;
    due when its generation is absent or no longer covers the vector generation."""
    from . import ann
    out = []
    for t in tenants:
        st = ann.status(store, cur, t)
        if st is not None:
            out.append({"index": "ann", "tenant": t, "reason": st["state"], "due": st["state"] != "fresh",
                        "generation_id": st["generation_id"], "base_rows": int(st["rows"] or 0), "pending_rows": 0,
                        "ratio": None, "age_seconds": None,
                        "detail": f"HNSW m={st['m']} ef_search={st['ef_search']} use_when={st['use_when']}"})
    return out
