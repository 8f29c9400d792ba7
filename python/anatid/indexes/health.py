"""Index health: the reasons index_health() (anatid.indexes.report) reports, the process-wide
build and damage flags, and the cheap per-read guard against a damaged base.

Every (index, tenant) is in exactly one of REASONS, checked in this order:

  historical_query     asked about an as_of read: bases hold the current view only
  load_failure         the native extension is not loaded (NativeStatus.reason says why)
  rebuild_in_progress  maintain_indexes() is building this index in this process now
  absent               no generation (or the file predates the index tables)
  damaged_base         the stored generation fails its checksum or its structure, or its
                       journal no longer reconciles with the canonical tables
  unvalidated          a generation with no validation record (built outside maintain_indexes())
  stale_generation     the MaintenancePolicy says the journal is due to be folded
  fresh                none of the above

Reads never trust a base blindly: before the extension parses a generation that is not
yet in its process cache, `guard_*` compares the stored bytes with the md5 recorded when
the generation was validated (or, lacking a record, with the lengths its header
implies). A mismatch sends the read to the SQL oracle with `damaged_base` in its notes.

Reads also check that the journal still holds what was written since the base
(`check_journal`, "the journal invariant" below): a journal row lost from under a base
is then met by the next read, not only by index_health().
"""
from __future__ import annotations

import threading
import time

import numpy as np

from . import graph as graph_index
from .text import TEXT_MAGIC
from .vector import VECTOR_MAGIC

REASONS = ("fresh", "stale_generation", "unvalidated", "historical_query", "rebuild_in_progress",
           "load_failure", "damaged_base", "absent")
INDEXES = ("graph", "text", "vector")
VALIDATIONS = "anatid_index_validations"

# Process-wide state: builds running now, and (index, tenant) pairs found damaged since
# their last publish. Keyed by the file's identity (Store._key: its real path, or one
# in-memory database): every handle on a file shares them, no other file does (two
# ":memory:" handles, or one path spelled two ways, must not share or miss a flag).
_lock = threading.Lock()
_building: dict[tuple[str, str, int], int] = {}
_damaged: dict[tuple[str, str, int], str] = {}
_verified: set[tuple[str, str, int, int]] = set()
_published: dict[str, int] = {}      # path -> generations published by maintain_indexes() in this process


class DamagedBase(Exception):
    """Raised by a guard: the stored generation (of `index`) must not be used."""

    def __init__(self, message: str, index: str = "graph"):
        super().__init__(message)
        self.index = index


def _file(store) -> str:
    return store._key


def _key(store, index: str, tenant: int) -> tuple[str, str, int]:
    return (_file(store), index, int(tenant))


def mark_building(store, index: str, tenants, on: bool) -> None:
    with _lock:
        for t in tenants:
            k = _key(store, index, t)
            if on:
                _building[k] = _building.get(k, 0) + 1
            elif _building.get(k, 0) <= 1:
                _building.pop(k, None)
            else:
                _building[k] -= 1


def building(store, index: str, tenant: int) -> bool:
    """Whether maintain_indexes() is building (index, tenant) in this process now."""
    return bool(_building.get(_key(store, index, tenant)))


def mark_damaged(store, index: str, tenant: int, detail: str) -> None:
    with _lock:
        _damaged[_key(store, index, tenant)] = detail


def clear_damaged(store, index: str, tenants) -> None:
    with _lock:
        for t in tenants:
            _damaged.pop(_key(store, index, t), None)
        _published[_file(store)] = _published.get(_file(store), 0) + 1   # journal checks start afresh


def flagged_any(store, tenant: int, indexes) -> str | None:
    """The first of `indexes` known damaged for `tenant` in this process (a dict lookup)."""
    if not _damaged:
        return None
    return next((i for i in indexes if _key(store, i, tenant) in _damaged), None)


def flagged(store, index: str, tenant: int) -> str | None:
    """Why (index, tenant) is known damaged in this process since its last publish, or None."""
    return _damaged.get(_key(store, index, tenant)) if _damaged else None


def has_validations(store, cur) -> bool:
    known = getattr(store, "_index_validations_table", None)
    if known is None:
        known = cur.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = current_schema() AND table_name = $t", {"t": VALIDATIONS}).fetchone()[0] == 1
        if store is not None:
            store._index_validations_table = known
    return known


# ---- checksums and structure -----------------------------------------------------------

_PARTS_SUM = """SELECT g.gen_id, md5(string_agg(md5(p.payload), '' ORDER BY p.part)), sum(octet_length(p.payload)),
                       list(octet_length(p.payload) ORDER BY p.part), list(p.part ORDER BY p.part),
                       max(CASE WHEN p.part = 0 THEN p.payload END)
                FROM anatid_{kind}_gen g LEFT JOIN anatid_{kind}_gen_parts p ON p.gen_id = g.gen_id
                WHERE g.tenant_id = $tenant GROUP BY g.gen_id"""
_GRAPH_SUM = ("SELECT generation_id, md5(blob), octet_length(blob), bytes, format_version "
              "FROM anatid_graph_generations WHERE tenant_id = $tenant")


def _expected_lengths(kind: str, header: bytes | None) -> list[int] | None:
    """Part byte lengths the header implies (the term bytes part: -1, any length), or None."""
    if header is None or len(header) != 32:
        return None
    magic, a, b, c = (int(x) for x in np.frombuffer(header, dtype="<i8"))
    if kind == "text":
        if magic != TEXT_MAGIC or min(a, b, c) < 0:
            return None
        return [32, 8 * a, 4 * a, 8 * a, 8 * a, 8 * (b + 1), -1, 8 * (b + 1), 4 * c, 4 * c]
    if magic != VECTOR_MAGIC or min(a, b) < 0:
        return None
    return [32, 8 * a, 8 * a, 8 * a, 8 * a, 4 * a * b]


def parts_problem(kind: str, lengths, parts, header) -> str | None:
    want = _expected_lengths(kind, None if header is None else bytes(header))
    if want is None:
        return f"{kind} generation header is missing or unreadable"
    if kind == "text" and len(parts or []) == len(want) + 4:    # optional parts 10-13: content and kinds
        n_docs = int(np.frombuffer(bytes(header), dtype="<i8")[1])
        want = want + [8 * (n_docs + 1), -1, 8 * (n_docs + 1), -1]
    if list(parts or []) != list(range(len(want))):
        return f"{kind} generation has parts {list(parts or [])}, expected 0..{len(want) - 1}"
    for i, (got, exp) in enumerate(zip(lengths, want)):
        if exp >= 0 and got != exp:
            return f"{kind} generation part {i} has {got} bytes, its header implies {exp}"
    return None


def _record(cur, index: str, tenant: int):
    return cur.execute(f"SELECT gen_id, checksum, bytes, base_rows, validated_at FROM {VALIDATIONS} "
                       "WHERE index_name = $i AND tenant_id = $t", {"i": index, "t": tenant}).fetchone()


def stored_problem(store, cur, index: str, tenant: int) -> tuple[int | None, str | None, bool]:
    """(generation id, what is wrong with its stored bytes or None, validated?)."""
    record = _record(cur, index, tenant) if has_validations(store, cur) else None
    if index == "graph":
        row = cur.execute(_GRAPH_SUM, {"tenant": tenant}).fetchone()
        if row is None:
            marker = _reconcile_graph(cur, tenant)
            return None, marker, False
        gen, checksum, size, stored_size, version = row
        problem = (None if size == stored_size else f"graph generation BLOB has {size} bytes, {stored_size} were stored")
        if version != graph_index.FORMAT_VERSION:      # built by another anatid: this one cannot parse it
            problem = f"graph generation has format version {version}, this anatid reads {graph_index.FORMAT_VERSION}"
    else:
        row = cur.execute(_PARTS_SUM.format(kind=index), {"tenant": tenant}).fetchone()
        if row is None:
            return None, None, False
        gen, checksum, size, lengths, parts, header = row
        problem = parts_problem(index, lengths or [], parts, header)
    validated = record is not None and int(record[0]) == int(gen)
    if problem is None and validated and record[1] != checksum:
        problem = f"{index} generation {gen} does not match the checksum recorded when it was validated"
    return int(gen), problem, validated


# ---- the per-read guards ---------------------------------------------------------------

def guard_graph_load(cur, tenant: int, store=None) -> None:
    """Called before a graph generation is parsed: raise DamagedBase if it must not be."""
    _, problem, _ = stored_problem(store, cur, "graph", tenant)
    if problem is not None:
        if store is not None:
            mark_damaged(store, "graph", tenant, problem)
        raise DamagedBase(problem)


_HYBRID_GENS = """
SELECT 'text' AS kind, gen_id, nonce, anatid_hybrid_cached('text', gen_id, nonce) FROM anatid_text_gen
WHERE tenant_id = $tenant AND $text
UNION ALL
SELECT 'vector', gen_id, nonce, anatid_hybrid_cached('vector', gen_id, nonce) FROM anatid_vector_gen
WHERE tenant_id = $tenant AND $vector
"""

# Rows a base-less native read would miss: the tenant's rows beyond what its journal holds
# (what the macro counts before it refuses to answer).
_LIVE = """(SELECT count(*) FROM (SELECT {col} FROM anatid_{kind}_journal WHERE tenant_id = $tenant
            QUALIFY row_number() OVER (PARTITION BY memory_id ORDER BY seq DESC) = 1) WHERE {col} IS NOT NULL)"""
_UNJOURNALLED = {
    "text": f"""SELECT (SELECT count(*) FROM anatid_text_docs WHERE tenant_id = $tenant) >
                       {_LIVE.format(col="doc_len", kind="text")}""",
    "vector": f"""SELECT (SELECT count(*) FROM anatid_embeddings e JOIN anatid_memories m ON m.memory_id = e.memory_id
                          WHERE e.tenant_id = $tenant AND m.tx_to IS NULL) >
                         {_LIVE.format(col="norm", kind="vector")}""",
}


def guard_hybrid(store, cur, tenant: int, *, text: bool, vector: bool) -> str | None:
    """None when the native hybrid call may parse what it needs; else why not ('damaged_base').

    One small query per read (the generations' ids and whether this process has parsed
    them); the checksum is computed only for a generation not yet parsed here. Then the
    journal invariant of each generation that has a covered_id (one statement each)."""
    for index, used in (("text", text), ("vector", vector)):
        if used and flagged(store, index, tenant):
            return "damaged_base"
    if not (text or vector):
        return None
    rows = cur.execute(_HYBRID_GENS, {"tenant": tenant, "text": text, "vector": vector}).fetchall()
    for kind in {k for k, used in (("text", text), ("vector", vector)) if used} - {r[0] for r in rows}:
        # no base: the native call scans the journal, which must then hold every row
        if cur.execute(_UNJOURNALLED[kind], {"tenant": tenant}).fetchone()[0]:
            return "absent"
    for kind, gen, nonce, cached in rows:
        if cached or (_file(store), kind, int(gen), int(nonce)) in _verified:
            continue
        _, problem, _ = stored_problem(store, cur, kind, tenant)
        if problem is not None:
            mark_damaged(store, kind, tenant, problem)
            return "damaged_base"
        with _lock:
            _verified.add((_file(store), kind, int(gen), int(nonce)))
    for kind in [k for k, _, _, _ in rows]:     # the journal invariant (no row count here: always run)
        problem = journal_shortfall(store, cur, kind, tenant)
        if problem is not None:
            mark_damaged(store, kind, tenant, problem)
            return "damaged_base"
    return None


# ---- the journal invariant (checked by every native read) --------------------------------
#
# maintain_indexes() records `covered_id` with each validated generation: an id allocated
# after the build's snapshot began. Ids grow with time and one process allocates them for
# a file, so a canonical row with a larger id was committed after that snapshot: the build
# neither saw it nor deleted its journal rows, which its own transaction wrote. Hence, as
# long as nothing is lost, for the tenant:
#
#   graph   op-3 journal rows with seq > covered      >=  ABOUT edges from memories > covered
#   text    memories > covered with text journal rows >= memories > covered (version 1)
#   vector  memories > covered with vector journal rows >= embeddings of memories > covered
#
# (A journal row's seq is taken after its memory's id, so every such edge's row counts; the
# build's own rows for time-dependent memories count too, which only weakens the check.)
# Rows are appended in id order, so `> covered` (a literal, not a parameter) lets DuckDB's
# zone maps skip every row group written before the build. Concurrent writes, now=,
# update's versions (same memory_id, version > 1), remember_many and forget (soft: rows
# stay; hard: text and vector drop their base, the graph's canonical count shrinks) keep
# the inequality. It costs one statement per index (~1 ms at 1M), so a read runs it only
# when the journal's row count, which the read's own statement returns, says the journal
# changed since the handle last verified it: at once when the journal shrank (no write
# shrinks it; only a publish does, and a publish starts afresh), and when it grew (writes)
# only once RECHECK_SECONDS have passed since the last exact check. A truncation is met
# by the next read; a loss hidden by writes that outnumber it, within RECHECK_SECONDS.
# What it cannot see: a lost row that is not its memory's only one (an update's latest
# text), a loss exactly balanced by new rows between two reads, rows of memories written
# before the build, a base built outside maintain_indexes() (no covered_id) or recorded
# before covered_id existed, reads on the opt-in ANN path; index_health() reconciles
# ids, and validation rebuilds, for those.
RECHECK_SECONDS = 1.0

_JOURNAL_CHECK = {
    "graph": """SELECT (SELECT generation_id FROM anatid_graph_generations WHERE tenant_id = $t),
                       (SELECT count(*) FROM anatid_graph_journal WHERE tenant_id = $t AND op = 3
                          AND seq > {covered}),
                       (SELECT count(*) FROM anatid_edges WHERE tenant_id = $t AND kind = 'about'
                          AND src_id > {covered})""",
    "text": """SELECT (SELECT gen_id FROM anatid_text_gen WHERE tenant_id = $t),
                      (SELECT count(DISTINCT memory_id) FROM anatid_text_journal
                       WHERE tenant_id = $t AND memory_id > {covered}),
                      (SELECT count(*) FROM anatid_memories WHERE tenant_id = $t AND memory_id > {covered}
                         AND version = 1)""",
    "vector": """SELECT (SELECT gen_id FROM anatid_vector_gen WHERE tenant_id = $t),
                        (SELECT count(DISTINCT memory_id) FROM anatid_vector_journal
                         WHERE tenant_id = $t AND memory_id > {covered}),
                        (SELECT count(*) FROM anatid_embeddings WHERE tenant_id = $t AND memory_id > {covered})""",
}
_WHAT_IS_MISSING = {"graph": "ABOUT edges written since the base have no graph journal row",
                    "text": "memories written since the base have no text journal row",
                    "vector": "embeddings written since the base have no vector journal row"}


def has_covered_id(store, cur) -> bool:
    known = getattr(store, "_index_covered_column", None)
    if known is None:
        known = has_validations(store, cur) and cur.execute(
            "SELECT count(*) FROM duckdb_columns() WHERE database_name = current_database() "
            "AND schema_name = current_schema() AND table_name = $t AND column_name = 'covered_id'",
            {"t": VALIDATIONS}).fetchone()[0] == 1
        if store is not None:
            store._index_covered_column = known
    return known


def _covered(store, cur, index: str, tenant: int) -> tuple[int, int] | None:
    """(generation id, covered_id) of the tenant's validation record, cached on the handle
    until the next publish in this process; None when there is nothing to check against."""
    cache = store.__dict__.setdefault("_journal_covered", {})
    key = (index, int(tenant), _published.get(_file(store), 0))
    if key not in cache:
        row = None
        if has_covered_id(store, cur):
            row = cur.execute(f"SELECT gen_id, covered_id FROM {VALIDATIONS} WHERE index_name = $i AND tenant_id = $t",
                              {"i": index, "t": int(tenant)}).fetchone()
        cache[key] = None if row is None or row[1] is None else (int(row[0]), int(row[1]))
    return cache[key]


def journal_shortfall(store, cur, index: str, tenant: int) -> str | None:
    """What the journal invariant finds missing for (index, tenant), or None (also when the
    current generation has no covered_id to check against)."""
    record = _covered(store, cur, index, tenant)
    if record is None:
        return None
    gen, covered = record
    current, journalled, written = cur.execute(_JOURNAL_CHECK[index].format(covered=int(covered)),
                                               {"t": int(tenant)}).fetchone()
    if current is None or int(current) != gen or journalled >= written:
        return None       # another generation (not validated: unchecked) or nothing lost
    return (f"{index} journal lost rows: {written - journalled} {_WHAT_IS_MISSING[index]} "
            f"(generation {gen}); run maintain_indexes()")


def check_journal(store, cur, tenant: int, indexes, journal_rows) -> None:
    """The read's cheap invariant: raise DamagedBase (and flag the index for this process)
    when the journal lost rows written since the base. `journal_rows` is the row count the
    read's own statement scanned. Nothing is queried while it equals the count last
    verified on this handle since the last publish, nor while it only grew (writes) within
    RECHECK_SECONDS of the last exact check; a shrink, or the first read after that
    interval, runs the exact check (one statement per index)."""
    if store is None or journal_rows is None:
        return
    cache = store.__dict__.setdefault("_journal_verified", {})
    key = (tuple(indexes), int(tenant), _published.get(_file(store), 0))
    seen = cache.get(key)            # (count verified exactly, count accepted since, when verified)
    now = time.monotonic()
    if seen is not None and (journal_rows == seen[0] or (
            journal_rows >= seen[1] and now - seen[2] < RECHECK_SECONDS)):
        if journal_rows != seen[1]:
            cache[key] = (seen[0], journal_rows, seen[2])
        return
    for index in indexes:
        problem = journal_shortfall(store, cur, index, tenant)
        if problem is not None:
            mark_damaged(store, index, tenant, problem)
            raise DamagedBase(problem, index)
    cache[key] = (journal_rows, journal_rows, now)


# The ids a read would see from base + journal must be the canonical ids: a journal
# row lost (truncated) or a base missing rows shows up here.
_CANONICAL_IDS = {
    "text": """SELECT d.memory_id FROM anatid_text_docs d JOIN anatid_memories m
               ON m.memory_id = d.memory_id AND m.tenant_id = d.tenant_id AND m.tx_to IS NULL
               WHERE d.tenant_id = $t""",
    "vector": """SELECT e.memory_id FROM anatid_embeddings e JOIN anatid_memories m
                 ON m.memory_id = e.memory_id AND m.tenant_id = e.tenant_id AND m.tx_to IS NULL
                 WHERE e.tenant_id = $t""",
}
_JOURNAL_LATEST = """SELECT memory_id, {present} FROM anatid_{kind}_journal WHERE tenant_id = $t
                     QUALIFY row_number() OVER (PARTITION BY memory_id ORDER BY seq DESC) = 1"""


def reconcile(cur, index: str, tenant: int) -> str | None:
    """What base + journal would answer that the canonical tables contradict, or None."""
    if index == "graph":
        return _reconcile_graph(cur, tenant)
    part = cur.execute(f"SELECT p.payload FROM anatid_{index}_gen g JOIN anatid_{index}_gen_parts p "
                       "ON p.gen_id = g.gen_id AND p.part = 1 WHERE g.tenant_id = $t", {"t": tenant}).fetchone()
    seen = set(np.frombuffer(part[0], dtype="<i8").tolist()) if part else set()
    present = "doc_len IS NOT NULL" if index == "text" else "norm IS NOT NULL"
    for mid, alive in cur.execute(_JOURNAL_LATEST.format(present=present, kind=index), {"t": tenant}).fetchall():
        (seen.add if alive else seen.discard)(int(mid))
    canonical = {int(r[0]) for r in cur.execute(_CANONICAL_IDS[index], {"t": tenant}).fetchall()}
    if seen != canonical:
        lost, extra = len(canonical - seen), len(seen - canonical)
        return (f"{index} base and journal disagree with the canonical tables: {lost} memories missing, "
                f"{extra} extra (a journal row was lost, or the base is wrong)")
    return None


def _reconcile_graph(cur, tenant: int) -> str | None:
    markers = cur.execute("SELECT list(CAST(split_part(entry, '|', 3) AS BIGINT)) FROM anatid_graph_journal "
                          "WHERE tenant_id = $t AND op = 0", {"t": tenant}).fetchone()[0] or []
    gen = cur.execute("SELECT generation_id FROM anatid_graph_generations WHERE tenant_id = $t",
                      {"t": tenant}).fetchone()
    held = [] if gen is None else [gen[0]]
    if markers != held:
        return f"the graph journal names base generations {markers}, the table holds {held}"
    return None
