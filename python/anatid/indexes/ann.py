"""The opt-in ANN backend of the vector arm: an HNSW index per tenant (src/hnsw.hpp).

Opt in with `db.build_ann_index()` (anatid.verbs.indexes.build_ann_index): it records
the tenant's settings in anatid_ann_config, then rebuilds the vector generation and, in the
same transaction, an HNSW generation over exactly the same rows (anatid_ann_gen + _parts,
one serialized, versioned, checksummed BLOB). From then on every `maintain_indexes()` that
rebuilds the tenant's vector generation rebuilds its ANN generation too (after_vector_build).

How a recall uses it (native engine only, python/anatid/native_hybrid.py calls plan()):
- the HNSW search returns `count` candidates of the base (memory id, validity, vector and norm
  as of the build); anatid_hybrid_recall scores them exactly, like the exact arm, and merges the
  vector journal: a memory written, corrected, closed or erased since the build has a journal
  row, which overrides its candidate (erased and closed rows drop out); the validity filter
  applies after the merge. So the scores are exact; only which base rows were considered is
  approximate, and RecallHits.notes says so.
- how wide it searches: by default (ef_search=None) the width the build calibrated for this
  data (src/hnsw.hpp, HnswCalibration; anatid_ann_calibration): held-out rows queried the graph
  of the others against the exact top k, and for depths 10 and 50 the smallest ef reaching
  recall 0.995 on them was kept. A recall of depth <= 10 uses the depth-10 width, <= 50 the
  larger of the two, deeper ones that width scaled by depth / 50 (extrapolated, not measured).
  An explicit ef_search fixes the width instead (and the recall is the caller's to check).
- used when `use_when='always'`, or with the default `'above_ceiling'` when the generation holds
  more than BRUTE_FORCE_CEILING rows (where the exact scan would raise BruteForceCeilingError).
  `allow_slow=True` asks for the exact scan and always gets it. kinds/as_of reads, a file
  without the extension, a stale generation (the vector generation was rebuilt without it) or
  a damaged one are answered exactly, with a note.
"""
from __future__ import annotations

import os
import time

import duckdb

from ..errors import AnatidError, ValidationError
from ..verbs import journal

USE_WHEN = ("always", "above_ceiling")
DEFAULT_M = 16
DEFAULT_EF_CONSTRUCTION = 200
DEFAULT_EF_SEARCH = None      # the generation's calibrated width (stored as 0 in anatid_ann_config)
CALIBRATED_DEPTHS = (10, 50)  # src/hnsw.cpp calibrates these; candidates() must match its rule
# Above this share of rows visited per search, the graph walk (random reads of float32 rows)
# costs more than the exact scan (sequential int8 screen): measured at 100k rows, 64-d i.i.d.
# data visits 28% and its ANN recall() takes 2.3x the exact one; clustered data visits ~1%.
SLOW_VISITED = 0.10
SEED = 42


class AnnUnavailableError(AnatidError):
    """The ANN index needs the native extension, which is not loaded in this process."""


# The same rows as the vector generation (anatid.indexes.vector._ROWS).
_BUILD = """
INSERT INTO anatid_ann_gen_parts
SELECT $gen, 0, anatid_ann_build(e.memory_id, epoch_us(m.valid_from),
                                 coalesce(epoch_us(m.valid_to), 9223372036854775807), e.norm, e.embedding,
                                 $m, $ef_construction, $seed)
FROM anatid_embeddings e JOIN anatid_memories m
  ON m.memory_id = e.memory_id AND m.tenant_id = e.tenant_id AND m.tx_to IS NULL
WHERE e.tenant_id = $tenant
HAVING count(*) > 0
"""

_STATE = """
SELECT g.gen_id, g.nonce, g.n_rows, c.ef_search, c.use_when, g.vector_gen_id = v.gen_id AS fresh,
       anatid_ann_resident(g.gen_id, g.nonce) AS resident,
       (SELECT max(ef) FROM anatid_ann_calibration k WHERE k.gen_id = g.gen_id AND k.depth = 10) AS ef_10,
       (SELECT max(ef) FROM anatid_ann_calibration k WHERE k.gen_id = g.gen_id AND k.depth = 50) AS ef_50,
       (SELECT max(visited) FROM anatid_ann_calibration k WHERE k.gen_id = g.gen_id) AS visited
FROM anatid_ann_gen g JOIN anatid_ann_config c ON c.tenant_id = g.tenant_id
LEFT JOIN anatid_vector_gen v ON v.tenant_id = g.tenant_id
WHERE g.tenant_id = $tenant
"""

# The calibration in the new generation's BLOB header, one row per calibrated depth.
_CALIBRATION = """
INSERT INTO anatid_ann_calibration
SELECT $gen, unnest(i.depth), unnest(i.candidates), unnest(i.ef), unnest(i.recall_at_10),
       unnest(i.recall_at_depth), unnest(i.visited), i.calibration_queries
FROM (SELECT anatid_ann_info(payload) AS i FROM anatid_ann_gen_parts WHERE gen_id = $gen AND part = 0)
"""

_LOAD = """
SELECT anatid_ann_load(g.gen_id, g.nonce, p.payload)
FROM anatid_ann_gen g JOIN anatid_ann_gen_parts p ON p.gen_id = g.gen_id AND p.part = 0
WHERE g.tenant_id = $tenant AND NOT anatid_ann_resident(g.gen_id, g.nonce)
"""

# Rows for anatid_hybrid_recall (see extension/anatid_hybrid_recall.cpp): kind 5 names the
# resident ANN generation, candidates and search width (the aggregate searches it with the
# query of its request), kind 4 the vector journal, whose rows override candidates.
# The kind-5 row exists only while the planned generation still covers the current vector
# generation: otherwise the aggregate answers "missing" and the engine plans afresh.
ANN_ROWS = """
    SELECT 5 AS kind, g.gen_id AS a, g.nonce AS b, $ann_count::BIGINT AS c, $ann_ef::BIGINT AS d,
           NULL::INTEGER AS len, NULL::DOUBLE AS norm, NULL::VARCHAR AS postings,
           NULL::FLOAT[] AS emb
    FROM anatid_ann_gen g
    WHERE g.tenant_id = $tenant AND g.gen_id = $ann_gen
      AND g.vector_gen_id = (SELECT max(gen_id) FROM anatid_vector_gen WHERE tenant_id = $tenant)
    UNION ALL
    SELECT 4, memory_id, seq, vf, vt, NULL, norm, NULL, embedding FROM anatid_vector_journal WHERE tenant_id = $tenant"""


def rank_sql(text_rows: str | None) -> str:
    """The lean recall statement with the vector arm on ANN candidates (text_rows: the text
    generation and journal rows of native_hybrid, or None when the text arm does not run)."""
    rows = ANN_ROWS if text_rows is None else f"{text_rows} UNION ALL{ANN_ROWS}"
    return (f"SELECT anatid_hybrid_recall(kind, a, b, c, d, len, norm, postings, emb, $request) "
            f"FROM ({rows}) r")


def has_tables(cur) -> bool:
    return cur.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                       "AND schema_name = current_schema() AND table_name = 'anatid_ann_gen'").fetchone()[0] > 0


# Planning costs a statement (~0.3-1.4 ms), so each handle remembers its plan per tenant. A
# remembered generation is re-checked by the rank statement itself (ANN_ROWS) and planned
# afresh when it no longer qualifies (fresh=True); a tenant without a usable generation is
# re-checked after NEGATIVE_TTL seconds, so another process's opt-in is seen within that
# (meanwhile the exact scan answers, or refuses above the ceiling), this process's at once.
NEGATIVE_TTL = 1.0


def forget_plans(store) -> None:
    store.__dict__.pop("_ann_plans", None)


def plan(store, cur, tenant: int, depth: int, allow_slow: bool, fresh: bool = False) -> tuple[dict | None, str | None]:
    """(bound parameters for ANN_ROWS, note) when the ANN generation should answer this
    recall's vector arm, else (None, why not or None). Loads the generation on a miss."""
    if allow_slow or not store.native.loaded:
        return None, None
    plans = store.__dict__.setdefault("_ann_plans", {})
    known = plans.get(tenant)
    if known is None or fresh or (known["gen"] is None and time.monotonic() - known["at"] >= NEGATIVE_TTL):
        known = _plan(store, cur, tenant)
        plans[tenant] = known
    if known["gen"] is None:
        return None, known["note"]
    from .. import store as store_module
    if known["use_when"] == "above_ceiling" and known["rows"] <= store_module.BRUTE_FORCE_CEILING:
        return None, None
    count = candidates(depth)
    ef, how = search_width(known, depth)
    ef = min(max(ef, count), 100_000)
    note = (f"vector arm: approximate (HNSW ANN generation {known['gen']}, ef_search={ef} {how}, {count} candidates "
            f"scored exactly with the vector journal merged); allow_slow=True scans exactly")
    if known["ef_search"] == 0 and (known["visited"] or 0) > SLOW_VISITED and known["rows"] >= 1000:
        note += (f"; at this width a search visits {known['visited']:.0%} of the rows (data with little "
                 f"neighbourhood structure): the exact scan is likely faster")
    return {"ann_gen": known["gen"], "ann_count": count, "ann_ef": ef}, note


def candidates(depth: int) -> int:
    """The rows a recall of this depth asks of the index (src/hnsw.cpp CandidatesFor)."""
    return min(max(2 * depth, depth + 50), 100_000)


def search_width(known: dict, depth: int) -> tuple[int, str]:
    """(ef, how it was chosen) for a recall of this depth: the configured width, or the
    generation's calibrated one (module docstring)."""
    if known["ef_search"] > 0:
        return known["ef_search"], "(set by build_ann_index)"
    ef_10, ef_50 = known["ef_10"], known["ef_50"]
    if depth <= 10:
        return ef_10, "(calibrated at depth 10)"
    if depth <= 50:
        return max(ef_10, ef_50), "(calibrated at depth 50)"
    return -(-max(ef_10, ef_50) * depth // 50), f"(calibrated at depth 50, scaled to depth {depth})"


def _plan(store, cur, tenant: int) -> dict:
    out = {"at": time.monotonic(), "gen": None, "note": None}
    try:
        row = cur.execute(_STATE, {"tenant": tenant}).fetchone()
    except duckdb.CatalogException:      # a file written before the ANN index (or its calibration) existed, read-only
        return out
    if row is None:
        return out
    gen, nonce, n_rows, ef_search, use_when, fresh, resident, ef_10, ef_50, visited = row
    if n_rows == 0:
        return out
    if ef_search == 0 and (ef_10 is None or ef_50 is None):
        out["note"] = ("the ANN generation has no calibration (built by an older anatid): exact scan; "
                       "maintain_indexes() or build_ann_index() rebuilds it")
        return out
    if not fresh:
        out["note"] = ("the ANN generation is stale (the vector index was rebuilt without it): exact scan; "
                       "maintain_indexes() or build_ann_index() rebuilds it")
        return out
    if not resident:
        try:
            cur.execute(_LOAD, {"tenant": tenant}).fetchall()
        except duckdb.Error as exc:
            out["note"] = f"the ANN generation could not be loaded ({str(exc).splitlines()[0]}): exact scan"
            return out
    out.update(gen=int(gen), ef_search=int(ef_search), use_when=use_when, rows=int(n_rows),
               ef_10=None if ef_10 is None else int(ef_10), ef_50=None if ef_50 is None else int(ef_50),
               visited=None if visited is None else float(visited))
    return out


# ---- building ---------------------------------------------------------------------------

def validated(m, ef_construction, ef_search, use_when) -> tuple[int, int, int | None, str]:
    def whole(value, name, low, high):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValidationError(name, f"{value!r} is not an integer in {low}..{high}", f"an integer in {low}..{high}")
        return value
    if use_when not in USE_WHEN:
        raise ValidationError("use_when", f"{use_when!r} is not one of {USE_WHEN}",
                              "'above_ceiling' (only where the exact scan would be refused) or 'always'")
    return (whole(m, "m", 2, 256), whole(ef_construction, "ef_construction", 1, 100_000),
            None if ef_search is None else whole(ef_search, "ef_search", 1, 100_000), use_when)


def drop_ann_index(db, *, all_tenants: bool = False) -> None:
    """Opt out: drop the tenant's ANN generation and settings (recall scans exactly again)."""
    store = getattr(db, "_store", db)
    from .text import tenants
    forget_plans(store)
    with store.write() as cur:
        for t in tenants(store, cur, all_tenants):
            _drop(cur, t)
            cur.execute("DELETE FROM anatid_ann_config WHERE tenant_id = $t", {"t": t})


def _drop(cur, tenant: int) -> None:
    cur.execute("DELETE FROM anatid_ann_calibration WHERE gen_id IN "
                "(SELECT gen_id FROM anatid_ann_gen WHERE tenant_id = $t)", {"t": tenant})
    cur.execute("DELETE FROM anatid_ann_gen_parts WHERE gen_id IN "
                "(SELECT gen_id FROM anatid_ann_gen WHERE tenant_id = $t)", {"t": tenant})
    cur.execute("DELETE FROM anatid_ann_gen WHERE tenant_id = $t", {"t": tenant})


def after_vector_build(store, cur, tenant: int, now) -> dict | None:
    """Called by maintain_indexes right after it published `tenant`'s vector generation, in
    its transaction: rebuild the ANN generation over the same rows when the tenant opted in."""
    if not has_tables(cur):
        return None
    cfg = cur.execute("SELECT m, ef_construction FROM anatid_ann_config WHERE tenant_id = $t",
                      {"t": tenant}).fetchone()
    if cfg is None:
        return None
    forget_plans(store)
    _drop(cur, tenant)
    if not store.native.loaded:      # a SQL-only writer: the stale generation is gone, reads scan exactly
        return {"skipped": "the native extension is not loaded"}
    vgen = cur.execute("SELECT gen_id FROM anatid_vector_gen WHERE tenant_id = $t", {"t": tenant}).fetchone()
    gen = store.ids.take()[0]
    nonce = int.from_bytes(os.urandom(8), "little", signed=True)
    cur.execute(_BUILD, {"gen": gen, "tenant": tenant, "m": int(cfg[0]), "ef_construction": int(cfg[1]),
                         "seed": SEED})
    n = cur.execute("SELECT count(*) > 0 FROM anatid_ann_gen_parts WHERE gen_id = $g", {"g": gen}).fetchone()[0]
    rows = cur.execute("""SELECT count(*) FROM anatid_embeddings e JOIN anatid_memories m
                          ON m.memory_id = e.memory_id AND m.tenant_id = e.tenant_id AND m.tx_to IS NULL
                          WHERE e.tenant_id = $t""", {"t": tenant}).fetchone()[0] if n else 0
    cur.execute("INSERT INTO anatid_ann_gen VALUES ($t, $g, $nonce, $now, $n, $v, $seed)",
                {"t": tenant, "g": gen, "nonce": nonce, "now": now, "n": rows,
                 "v": vgen[0] if vgen else 0, "seed": SEED})
    cur.execute(_CALIBRATION, {"gen": gen})
    return {"generation_id": str(gen), "rows": rows, "m": int(cfg[0]), "ef_construction": int(cfg[1]),
            "calibration": calibration(cur, gen)}


def calibration(cur, gen: int) -> list[dict]:
    """The generation's calibrated widths, one entry per depth (recalls None when nothing
    was held out: below 1,000 rows the width covers every row)."""
    rows = cur.execute("SELECT depth, candidates, ef, recall_at_10, recall_at_depth, visited, queries "
                       "FROM anatid_ann_calibration WHERE gen_id = $g ORDER BY depth", {"g": gen}).fetchall()
    return [{"depth": d, "candidates": c, "ef_search": ef, "queries": q,
             "recall_at_10": round(r10, 4) if q else None, "recall_at_depth": round(rd, 4) if q else None,
             "visited": round(v, 4) if q else None}
            for d, c, ef, r10, rd, v, q in rows]


def status(store, cur, tenant: int) -> dict | None:
    """For index_health/doctor/stats: the tenant's ANN settings and generation, or None."""
    if not has_tables(cur):
        return None
    row = cur.execute("""
        SELECT c.use_when, c.m, c.ef_construction, c.ef_search, g.gen_id, g.n_rows, g.built_at,
               g.vector_gen_id = v.gen_id AS fresh
        FROM anatid_ann_config c LEFT JOIN anatid_ann_gen g ON g.tenant_id = c.tenant_id
        LEFT JOIN anatid_vector_gen v ON v.tenant_id = c.tenant_id
        WHERE c.tenant_id = $t""", {"t": tenant}).fetchone()
    if row is None:
        return None
    use_when, m, efc, efs, gen, n, built_at, fresh = row
    state = "absent" if gen is None else ("fresh" if fresh else "stale_generation")
    return {"state": state, "use_when": use_when, "m": m, "ef_construction": efc,
            "ef_search": efs or "calibrated", "generation_id": None if gen is None else str(gen), "rows": n,
            "built_at": built_at, "calibration": [] if gen is None else calibration(cur, gen)}


# A hard forget must leave no trace of the vector, and the ANN generation holds it: drop the
# generation (the settings stay; the next maintain_indexes() rebuilds it). Reads scan exactly
# meanwhile, like the vector index's own erase (indexes.text.erase_from_index).
def _erase(store, cur, memory_id: int) -> None:
    forget_plans(store)
    if has_tables(cur):
        _drop(cur, store.tenant)


journal.register("memory_erased", _erase)
