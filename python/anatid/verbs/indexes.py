"""maintain_indexes(): build, validate and publish the derived-index generations that are due.

For each index (graph, text, vector) whose generation is due for some tenant under the
MaintenancePolicy (absent, damaged and unvalidated ones always are), one transaction
builds the new generation from the canonical tables, validates it against the SQL
oracle, records its checksum in anatid_index_validations and publishes it, deleting the
journal rows its snapshot saw. A write that commits while the build runs is not in
that snapshot: its journal rows are neither seen nor deleted, so reads still find it.
A failed validation or a crash rolls the whole transaction back: nothing half-built is
ever published. docs/indexes.md says when to call this and what it costs.
"""
from __future__ import annotations

import time

import numpy as np

from .. import validate
from ..errors import AnatidError, ValidationError
from ..indexes import ann, health, report as index_report
from ..indexes.policy import MaintenancePolicy

INDEXES = ("graph", "text", "vector")
SAMPLE = 32                  # documents / vectors re-derived from the canonical rows per tenant
_before_publish = None       # test hook: called inside the build's transaction, before commit


class IndexValidationError(AnatidError):
    """A freshly built generation disagreed with the SQL oracle; nothing was published."""


def maintain_indexes(store, *, policy: MaintenancePolicy | None = None, all_tenants: bool = False,
                     force: bool = False, indexes=INDEXES, progress=None) -> dict:
    """{'graph': ..., 'text': ..., 'vector': ...}: what was built (or skipped and why) for
    the handle's tenant, or every tenant with all_tenants=True."""
    for name, value in (("all_tenants", all_tenants), ("force", force)):
        if not isinstance(value, bool):
            raise ValidationError(name, f"expected a bool, got {type(value).__name__}", "True or False")
    if policy is not None and not isinstance(policy, MaintenancePolicy):
        raise ValidationError("policy", f"expected a MaintenancePolicy, got {type(policy).__name__}",
                              "anatid.MaintenancePolicy(max_journal_rows=..., max_journal_ratio=..., max_age=...)")
    try:
        names = tuple(validate.members(indexes))
        known = bool(names) and all(isinstance(i, str) and str.__str__(i) in INDEXES for i in names)
    except MemoryError:
        raise
    except Exception:   # not iterable, or the caller's own __iter__ raised
        known = False
    if not known:
        raise ValidationError("indexes", f"{validate.shown(indexes)} names no known index",
                              "a subset of ('graph', 'text', 'vector')")
    indexes = tuple(str.__str__(i) for i in names)
    if progress is not None and not callable(progress):
        raise ValidationError("progress", f"expected a callable, got {type(progress).__name__}",
                              "progress(step, steps, label), or None")
    # deep=False: counts and checksums decide what is due, so a call with nothing due is cheap
    # (the deep reconciliation is index_health()'s and doctor()'s; a rebuild fixes what it finds)
    entries = index_report.index_health(store, all_tenants=all_tenants, policy=policy, deep=False)
    report = {}
    for step, index in enumerate(indexes):
        if progress is not None:
            progress(step, len(indexes), f"{index} index")
        mine = [e for e in entries if e["index"] == index]
        due = [e["tenant"] for e in mine if force or e["due"]]
        if index == "vector":   # an ANN generation that is due is rebuilt with its vector generation
            due += sorted({e["tenant"] for e in entries if e["index"] == "ann" and e["due"]} - set(due))
        skipped = [{"tenant": e["tenant"], "reason": e["reason"]} for e in mine if e["tenant"] not in due]
        if index == "graph" and due and not store.native.loaded:
            skipped += [{"tenant": t, "reason": "load_failure"} for t in due]
            due = []
        out = {"index": index, "tenants": [], "skipped": skipped}
        if due:
            started = time.perf_counter()
            health.mark_building(store, index, due, True)
            try:
                out.update(_build(store, index, due, all_tenants))
            finally:
                health.mark_building(store, index, due, False)
            health.clear_damaged(store, index, due)
            out["seconds"] = round(time.perf_counter() - started, 3)
        report[index] = out
    if progress is not None:
        progress(len(indexes), len(indexes), "done")
    return report


def _build(store, index: str, tenants: list[int], all_tenants: bool) -> dict:
    with store.write() as cur:
        # DuckDB starts a transaction's snapshot at its first statement that reads a table, not
        # at BEGIN: start it, then take covered_id, so every row with a larger id is one this
        # build cannot see and whose journal rows it cannot delete (health.check_journal)
        cur.execute("SELECT count(*) FROM anatid_meta").fetchone()
        covered = store.ids.take()[0]
        now = store.write_instant(None)
        if index == "graph":
            from ..indexes import graph
            built = graph.maintain(store, only=tenants)     # the due tenants only, as text and vector
            for entry in built.get("tenants", []):     # none when graph.maintain skipped
                t = entry["tenant"]
                problem = _validate_graph(store, cur, t, entry, now)
                if problem:
                    raise IndexValidationError(f"graph generation of tenant {t} not published: {problem}")
                entry["validated"] = "entity, edge and memory recounts; recall around the entities written last"
                _record(store, cur, "graph", t, entry["memories"] + entry["edges"], now, entry["validated"], covered)
            out = {"tenants": built.get("tenants", []), "journal_rows_absorbed": built.get("journal_rows_absorbed", 0),
                   "build_seconds": built.get("seconds")}     # the build alone; "seconds" adds validation
        else:
            out = {"tenants": [_build_parts(store, cur, index, t, now, covered) for t in tenants]}
            if index == "vector":   # an opted-in ANN index is rebuilt over the vector generation just built
                for entry in out["tenants"]:
                    built = ann.after_vector_build(store, cur, entry["tenant"], now)
                    if built is not None:
                        entry["ann"] = built
        if _before_publish is not None:
            _before_publish(index)
    return out


# ---- graph ----------------------------------------------------------------------------

_GRAPH_COUNTS = """
SELECT (SELECT count(*) FROM anatid_entities WHERE tenant_id = $t),
       (SELECT count(*) FROM anatid_edges WHERE tenant_id = $t AND kind = 'relates' AND tx_to IS NULL
          AND valid_to IS NULL AND valid_from <= $at),
       (SELECT count(DISTINCT a.src_id) FROM anatid_edges a JOIN anatid_memories m
          ON m.memory_id = a.src_id AND m.tenant_id = a.tenant_id
        WHERE a.tenant_id = $t AND a.kind = 'about' AND m.tx_to IS NULL AND m.valid_to IS NULL AND m.valid_from <= $at)
"""


def _validate_graph(store, cur, tenant: int, entry: dict, now) -> str | None:
    built_at = cur.execute("SELECT built_at FROM anatid_graph_generations WHERE tenant_id = $t",
                           {"t": tenant}).fetchone()[0]
    want = cur.execute(_GRAPH_COUNTS, {"t": tenant, "at": built_at}).fetchone()
    got = (entry["entities"], entry["edges"], entry["memories"])
    if tuple(int(x) for x in want) != tuple(int(x) for x in got):
        return f"the base counts (entities, edges, memories) {got} differ from the tables' {tuple(want)}"
    return index_report.graph_sample_problem(store, cur, tenant, max(store.view().valid_at, built_at))


# ---- text and vector ------------------------------------------------------------------

_BELIEVED_TEXT = f"""
SELECT m.memory_id, len({{tokens}}) AS n FROM anatid_memories m
WHERE m.tenant_id = $t AND m.tx_to IS NULL AND (list_contains($ids, m.memory_id) OR hash(m.memory_id) % $mod = 0)
"""


def _build_parts(store, cur, index: str, tenant: int, now, covered: int) -> dict:
    from ..indexes import text as text_index, vector as vector_index
    repaired: list[int] = []
    for attempt in range(2):
        if index == "text":
            parts, n = text_index.build_parts(cur, tenant)
            bad = _text_problems(cur, tenant, parts, n)
        else:
            parts, n = vector_index.build_parts(cur, tenant, store.embedding_dim)
            bad = _vector_problems(cur, tenant, parts, n)
        if not bad:
            break
        if index != "text" or attempt:
            raise IndexValidationError(f"{index} generation of tenant {tenant} not published: "
                                       f"{len(bad)} memories differ from the canonical rows, e.g. {bad[:5]}")
        repaired = _rederive_text(cur, tenant, bad)
    gen = text_index.replace_generation(store, cur, index, parts, n, now, tenant)
    method = ("per-document postings sum = length; lengths re-tokenized from content for a sample"
              if index == "text" else "vectors and norms re-read from anatid_embeddings for a sample")
    _record(store, cur, index, tenant, n, now, method, covered)
    out = {"tenant": tenant, "generation_id": str(gen), "rows": n, "validated": method}
    if repaired:
        out["repaired"] = [str(m) for m in repaired]
    return out


def _text_problems(cur, tenant: int, parts: list[bytes], n: int) -> list[int]:
    """Memories whose postings do not add up to their stored length, or whose length is not
    the token count of their content (all of them for the count, a sample for content)."""
    ids = np.frombuffer(parts[1], dtype="<i8")
    lens = np.frombuffer(parts[2], dtype="<i4")
    doc = np.frombuffer(parts[8], dtype="<i4")
    tf = np.frombuffer(parts[9], dtype="<i4")
    summed = np.bincount(doc, weights=tf, minlength=n)[:n] if n else np.zeros(0)
    bad = set(ids[summed != lens].tolist())
    from ..text import tokens_sql
    mod = max(1, n // SAMPLE)
    sql = _BELIEVED_TEXT.format(tokens=tokens_sql("m.content"))
    where = dict(zip(ids.tolist(), lens.tolist()))
    for mid, count in cur.execute(sql, {"t": tenant, "ids": sorted(bad), "mod": mod}).fetchall():
        if int(mid) in where and where[int(mid)] != int(count):
            bad.add(int(mid))
    # A closed memory (superseded, or remembered with a valid_to) may rightly have no
    # postings: supersede unindexes the old text. An open believed one must have them.
    missing = cur.execute("SELECT list(memory_id) FROM anatid_memories WHERE tenant_id = $t AND tx_to IS NULL "
                          "AND valid_to IS NULL AND memory_id NOT IN (SELECT unnest($ids))", {"t": tenant, "ids": ids.tolist()}).fetchone()[0]
    bad.update(int(m) for m in missing or [])
    return sorted(bad)


_REDERIVE_TEXT = """
CREATE OR REPLACE TEMP TABLE anatid_rederive AS
SELECT memory_id, {tokens} AS terms FROM anatid_memories
WHERE tenant_id = $t AND tx_to IS NULL AND memory_id IN (SELECT unnest(CAST($ids AS BIGINT[])));
DELETE FROM anatid_postings WHERE tenant_id = $t AND memory_id IN (SELECT memory_id FROM anatid_rederive);
DELETE FROM anatid_text_docs WHERE tenant_id = $t AND memory_id IN (SELECT memory_id FROM anatid_rederive);
INSERT INTO anatid_postings (tenant_id, memory_id, term, tf)
SELECT $t, memory_id, term, count(*)::INTEGER FROM (SELECT memory_id, unnest(terms) AS term FROM anatid_rederive)
GROUP BY memory_id, term;
INSERT INTO anatid_text_docs (tenant_id, memory_id, doc_len)
SELECT $t, memory_id, len(terms)::INTEGER FROM anatid_rederive
"""


def _rederive_text(cur, tenant: int, memory_ids: list[int]) -> list[int]:
    """Postings and lengths are derived: rebuild the listed memories' from their believed text,
    set-wise (a file bulk-loaded without postings can list every memory it holds; one
    statement per memory took hours at 1M)."""
    from ..text import tokens_sql
    ids = [int(m) for m in memory_ids]
    for statement in _REDERIVE_TEXT.format(tokens=tokens_sql("content")).split(";"):
        cur.execute(statement, {"t": tenant, "ids": ids} if "$ids" in statement else {"t": tenant})
    done = [int(r[0]) for r in cur.execute("SELECT memory_id FROM anatid_rederive ORDER BY memory_id").fetchall()]
    cur.execute("DROP TABLE anatid_rederive")
    return done


def _vector_problems(cur, tenant: int, parts: list[bytes], n: int) -> list[int]:
    if not n:
        return []
    dim = int(np.frombuffer(parts[0], dtype="<i8")[2])
    ids = np.frombuffer(parts[1], dtype="<i8")
    norms = np.frombuffer(parts[4], dtype="<f8")
    vecs = np.frombuffer(parts[5], dtype="<f4").reshape(n, dim)
    pick = np.unique(np.linspace(0, n - 1, min(n, SAMPLE)).astype(np.int64))
    rows = cur.execute("SELECT memory_id, norm, embedding FROM anatid_embeddings WHERE tenant_id = $t "
                       "AND memory_id IN (SELECT unnest($ids))", {"t": tenant, "ids": ids[pick].tolist()}).fetchall()
    stored = {int(m): (nm, e) for m, nm, e in rows}
    bad = []
    for i in pick.tolist():
        mid = int(ids[i])
        nm, e = stored.get(mid, (None, None))
        if e is None or nm != norms[i] or not np.array_equal(np.asarray(e, dtype=np.float32), vecs[i]):
            bad.append(mid)
    return bad


# ---- the validation record ------------------------------------------------------------

def _record(store, cur, index: str, tenant: int, base_rows: int, now, method: str, covered: int) -> None:
    if not health.has_validations(store, cur):
        return
    gen, problem, _ = health.stored_problem(store, cur, index, tenant)
    if problem is not None:
        raise IndexValidationError(f"{index} generation of tenant {tenant} not published: {problem}")
    sql = health._GRAPH_SUM if index == "graph" else health._PARTS_SUM.format(kind=index)
    row = cur.execute(sql, {"tenant": tenant}).fetchone()
    checksum, size = row[1], row[2]
    cur.execute(f"DELETE FROM {health.VALIDATIONS} WHERE index_name = $i AND tenant_id = $t", {"i": index, "t": tenant})
    row = {"i": index, "t": tenant, "g": gen, "c": checksum, "b": int(size or 0), "r": int(base_rows),
           "at": now, "m": method}
    if health.has_covered_id(store, cur):
        cur.execute(f"INSERT INTO {health.VALIDATIONS} (index_name, tenant_id, gen_id, checksum, bytes, base_rows, "
                    "validated_at, method, covered_id) VALUES ($i, $t, $g, $c, $b, $r, $at, $m, $covered)",
                    {**row, "covered": int(covered)})
    else:
        cur.execute(f"INSERT INTO {health.VALIDATIONS} VALUES ($i, $t, $g, $c, $b, $r, $at, $m)", row)


def rebuild_fts_index(store) -> dict:
    """The text index alone, rebuilt whether due or not."""
    return maintain_indexes(store, indexes=("text",), force=True)["text"]


def build_ann_index(store, *, m: int = ann.DEFAULT_M, ef_construction: int = ann.DEFAULT_EF_CONSTRUCTION,
                    ef_search: int | None = ann.DEFAULT_EF_SEARCH, use_when: str = "above_ceiling",
                    all_tenants: bool = False) -> dict:
    """Opt this handle's tenant (or every tenant) into the ANN vector index (anatid.indexes.ann)
    and build it now, with the vector generation it covers, in one transaction: the
    maintain_indexes() report of the vector index, each tenant's entry with an 'ann' part
    (with the calibration). ef_search=None searches as wide as the build's calibration found
    necessary; an integer fixes the width."""
    store = getattr(store, "_store", store)
    m, ef_construction, ef_search, use_when = ann.validated(m, ef_construction, ef_search, use_when)
    if not isinstance(all_tenants, bool):
        raise ValidationError("all_tenants", f"expected a bool, got {type(all_tenants).__name__}", "True or False")
    if not store.native.loaded:
        raise ann.AnnUnavailableError("the ANN index is built and searched by the native extension, which is not "
                                      f"loaded ({store.native.reason}); recall keeps scanning exactly")
    from ..indexes.text import tenants
    ann.forget_plans(store)
    with store.write() as cur:
        for t in tenants(store, cur, all_tenants):
            cur.execute("DELETE FROM anatid_ann_config WHERE tenant_id = $t", {"t": t})
            cur.execute("INSERT INTO anatid_ann_config VALUES ($t, $m, $efc, $efs, $use)",
                        {"t": t, "m": m, "efc": ef_construction, "efs": ef_search or 0, "use": use_when})
        # maintain_indexes opens its own write; inside ours it joins this transaction
        return maintain_indexes(store, indexes=("vector",), force=True, all_tenants=all_tenants)["vector"]


def index_health(store, *, all_tenants: bool = False, policy: MaintenancePolicy | None = None, as_of=None,
                 deep: bool = True) -> list[dict]:
    """index_health() (anatid.indexes.report) with its arguments checked, leaving no result
    half read on the thread's connection (Store.settle)."""
    for name, value in (("all_tenants", all_tenants), ("deep", deep)):
        if not isinstance(value, bool):
            raise ValidationError(name, f"expected a bool, got {type(value).__name__}", "True or False")
    if policy is not None and not isinstance(policy, MaintenancePolicy):
        raise ValidationError("policy", f"expected a MaintenancePolicy, got {type(policy).__name__}",
                              "anatid.MaintenancePolicy(...), or None")
    if as_of is not None:
        from ..timeutil import to_db
        to_db(as_of, "as_of")
    with store.settling():
        return index_report.index_health(store, all_tenants=all_tenants, policy=policy, as_of=as_of, deep=deep)
