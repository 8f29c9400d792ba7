"""doctor(): read-only integrity and upkeep checks of an anatid file.

Every data check is one SQL query in CHECKS that selects the offending ids in
a column named `id`; `_COUNT_AND_SAMPLE` turns it into a count and at most
MAX_SAMPLES ids. Findings carry ids, never content: a report may be pasted
into a bug tracker. The checks cover the whole file (every tenant), run in one
`BEGIN TRANSACTION READ ONLY` on a private cursor, and so cannot write.

Two checks are not SQL: the native extension (from NativeStatus) and the
derived indexes (from the facade's `index_health()`, when this build has it).
`docs/doctor.md` explains each check and what to do about it.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import duckdb

from . import schema

MAX_SAMPLES = 5
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Check:
    name: str
    severity: str
    sql: str          # selects offending ids as `id`; may use $params from _params()
    message: str      # what a non-empty result means, for people


@dataclass(frozen=True)
class Finding:
    check: str
    severity: str
    count: int
    sample_ids: tuple[str, ...] = ()
    message: str = ""


@dataclass(frozen=True)
class DoctorReport:
    findings: tuple[Finding, ...]
    checks_run: tuple[str, ...]
    checks_skipped: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """No errors (warnings and infos do not make a file unhealthy)."""
        return not any(f.severity == "error" for f in self.findings)

    def by_severity(self, severity: str) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]

    def finding(self, check: str) -> Finding | None:
        return next((f for f in self.findings if f.check == check), None)

    def to_dict(self) -> dict:
        return {"ok": self.ok,
                "findings": [{**asdict(f), "sample_ids": list(f.sample_ids)} for f in self.findings],
                "checks_run": list(self.checks_run), "checks_skipped": list(self.checks_skipped)}


# A live memory: one with a believed version (tx_to IS NULL) in the same tenant.
_MEMORY_EXISTS = "EXISTS (SELECT 1 FROM anatid_memories m WHERE m.tenant_id = {t}.tenant_id AND m.memory_id = {t}.{col})"
_ENTITY_EXISTS = "EXISTS (SELECT 1 FROM anatid_entities n WHERE n.tenant_id = {t}.tenant_id AND n.entity_id = {t}.{col})"
_BELIEVED = ("EXISTS (SELECT 1 FROM anatid_memories m WHERE m.tenant_id = {t}.tenant_id "
             "AND m.memory_id = {t}.memory_id AND m.tx_to IS NULL)")


def _mem(t: str, col: str = "memory_id") -> str:
    return _MEMORY_EXISTS.format(t=t, col=col)


def _ent(t: str, col: str) -> str:
    return _ENTITY_EXISTS.format(t=t, col=col)


# Expected (table, column, type) rows of a fresh file that the file lacks or types otherwise.
_SCHEMA_MISSING = """
        WITH expected AS (SELECT unnest($exp_tables) AS table_name, unnest($exp_columns) AS column_name,
                                 unnest($exp_types) AS data_type),
             actual AS (SELECT table_name, column_name, data_type FROM duckdb_columns()
                        WHERE database_name = current_database() AND schema_name = current_schema())
        SELECT e.table_name || '.' || e.column_name AS id
        FROM expected e LEFT JOIN actual a USING (table_name, column_name)
        WHERE a.data_type IS DISTINCT FROM e.data_type AND {where}"""

CHECKS: tuple[Check, ...] = (
    # -- schema ------------------------------------------------------------------------------------
    Check("schema_missing_columns", "error", _SCHEMA_MISSING.format(where="e.table_name IN (SELECT unnest($canonical))"),
          "canonical tables or columns are missing or have another type"),
    Check("schema_missing_derived", "warning",
          _SCHEMA_MISSING.format(where="e.table_name NOT IN (SELECT unnest($canonical))"),
          "derived-index tables or columns are missing or have another type: reads fall back to the SQL "
          "oracle (slower, still right)"),
    Check("schema_extra_columns", "warning", """
        WITH expected AS (SELECT unnest($exp_tables) AS table_name, unnest($exp_columns) AS column_name)
        SELECT a.table_name || '.' || a.column_name AS id FROM duckdb_columns() a
        WHERE a.database_name = current_database() AND a.schema_name = current_schema()
          AND a.table_name IN (SELECT table_name FROM expected)
          AND NOT EXISTS (SELECT 1 FROM expected e
                          WHERE e.table_name = a.table_name AND e.column_name = a.column_name)""",
          "anatid tables have columns this version does not know"),
    Check("schema_version", "error", """
        SELECT 'schema_version' AS id
        WHERE (SELECT max(value) FROM anatid_meta WHERE key = 'schema_version') IS DISTINCT FROM $schema_version""",
          "anatid_meta.schema_version is missing or differs from this anatid's version"),
    # -- versions ----------------------------------------------------------------------------------
    Check("duplicate_live_versions", "error", """
        SELECT memory_id AS id FROM anatid_memories WHERE tx_to IS NULL
        GROUP BY tenant_id, memory_id HAVING count(*) > 1""",
          "memories with more than one believed version (tx_to IS NULL)"),
    Check("duplicate_version_numbers", "error", """
        SELECT memory_id AS id FROM anatid_memories
        GROUP BY tenant_id, memory_id, version HAVING count(*) > 1""",
          "memories with two rows of the same version number"),
    # -- edges -------------------------------------------------------------------------------------
    Check("dangling_about_edges", "error", f"""
        SELECT e.edge_id AS id FROM anatid_edges e
        WHERE e.kind = 'about' AND NOT ({_mem('e', 'src_id')} AND {_ent('e', 'dst_id')})""",
          "ABOUT edges whose memory or entity does not exist"),
    Check("dangling_relates_edges", "error", f"""
        SELECT e.edge_id AS id FROM anatid_edges e
        WHERE e.kind = 'relates' AND NOT ({_ent('e', 'src_id')} AND {_ent('e', 'dst_id')})""",
          "RELATES edges whose entity at either end does not exist"),
    Check("dangling_supersedes_edges", "error", f"""
        SELECT e.edge_id AS id FROM anatid_edges e
        WHERE e.kind = 'supersedes' AND NOT ({_mem('e', 'src_id')} AND {_mem('e', 'dst_id')})""",
          "SUPERSEDES edges whose new or old memory does not exist"),
    Check("unknown_edge_kinds", "error", """
        SELECT edge_id AS id FROM anatid_edges WHERE kind NOT IN ('about', 'relates', 'supersedes')""",
          "edges of a kind anatid does not know"),
    # -- evidence ----------------------------------------------------------------------------------
    Check("dangling_evidence_episodes", "error", """
        SELECT v.episode_id AS id FROM anatid_evidence v WHERE NOT EXISTS (
            SELECT 1 FROM anatid_episodes p WHERE p.tenant_id = v.tenant_id AND p.episode_id = v.episode_id)""",
          "evidence links to episodes that do not exist"),
    Check("dangling_evidence_memories", "error", f"""
        SELECT v.memory_id AS id FROM anatid_evidence v WHERE NOT {_mem('v')}""",
          "evidence links from memories that do not exist"),
    # -- embeddings --------------------------------------------------------------------------------
    Check("embedding_dimension", "error", """
        SELECT memory_id AS id FROM anatid_embeddings
        WHERE len(embedding) IS DISTINCT FROM
              (SELECT TRY_CAST(max(value) AS INTEGER) FROM anatid_meta WHERE key = 'embedding_dim')""",
          "embeddings whose length differs from anatid_meta.embedding_dim (or the file has no dimension)"),
    Check("embedding_non_finite", "error", """
        SELECT memory_id AS id FROM anatid_embeddings
        WHERE list_bool_or(list_transform(embedding, lambda x: NOT isfinite(x))) OR NOT isfinite(norm)""",
          "embeddings or norms holding NaN or infinity"),
    Check("embedding_zero_norm", "warning", """
        SELECT memory_id AS id FROM anatid_embeddings
        WHERE norm = 0 OR list_bool_and(list_transform(embedding, lambda x: x = 0))""",
          "zero vectors: cosine similarity is undefined, so the vector arm never finds them"),
    Check("embedding_norm_mismatch", "warning", """
        SELECT memory_id AS id FROM anatid_embeddings
        WHERE isfinite(norm) AND list_bool_and(list_transform(embedding, lambda x: isfinite(x)))
          AND abs(norm - sqrt(list_sum(list_transform(embedding, lambda x: x::DOUBLE * x::DOUBLE))))
              > 1e-6 * greatest(norm, 1.0)""",
          "stored norms that differ from the vector's norm: cosine scores are off"),
    Check("orphaned_embeddings", "error", f"""
        SELECT b.memory_id AS id FROM anatid_embeddings b WHERE NOT {_mem('b')}""",
          "embeddings of memories that do not exist (an erased memory's vector survives)"),
    # -- values ------------------------------------------------------------------------------------
    Check("confidence_out_of_range", "error", """
        SELECT DISTINCT memory_id AS id FROM anatid_memories WHERE NOT (confidence BETWEEN 0 AND 1)""",
          "memory versions with confidence outside [0, 1] or NaN"),
    Check("negative_strength", "error", """
        SELECT DISTINCT memory_id AS id FROM anatid_memories WHERE strength < 0 OR isnan(strength)""",
          "memory versions with a negative or NaN strength"),
    Check("negative_weights", "error", """
        SELECT edge_id AS id FROM anatid_edges WHERE weight < 0 OR isnan(weight)""",
          "edges with a negative or NaN weight"),
    # -- time --------------------------------------------------------------------------------------
    Check("memory_interval_order", "error", """
        SELECT DISTINCT memory_id AS id FROM anatid_memories WHERE valid_to <= valid_from OR tx_to <= tx_from""",
          "memory versions whose valid or transaction interval ends before it starts"),
    Check("edge_interval_order", "error", """
        SELECT edge_id AS id FROM anatid_edges WHERE valid_to <= valid_from OR tx_to <= tx_from""",
          "edges whose valid or transaction interval ends before it starts"),
    # -- derived rows ------------------------------------------------------------------------------
    Check("orphaned_postings", "error", f"""
        SELECT DISTINCT p.memory_id AS id FROM anatid_postings p WHERE NOT {_mem('p')}""",
          "postings of memories that do not exist: an erased memory's terms survive"),
    Check("orphaned_text_docs", "warning", f"""
        SELECT d.memory_id AS id FROM anatid_text_docs d WHERE NOT {_mem('d')}""",
          "text documents of memories that do not exist"),
    Check("stale_postings", "warning", f"""
        SELECT DISTINCT p.memory_id AS id FROM anatid_postings p WHERE {_mem('p')}
          AND NOT {_BELIEVED.format(t='p')}""",
          "postings of memories no longer believed (forgotten or corrected away)"),
    Check("stale_text_docs", "warning", f"""
        SELECT d.memory_id AS id FROM anatid_text_docs d WHERE {_mem('d')}
          AND NOT {_BELIEVED.format(t='d')}""",
          "text documents of memories no longer believed"),
)

# Checks generated for each table of sql/derived_*.sql (other than postings and
# text_docs, which have their own), from its columns:
# - a memory_id column: rows of memories that no longer exist. An error when the
#   table can hold text (VARCHAR or BLOB columns), a warning when it holds only ids.
# - X_parts with gen_id beside a table X with gen_id: parts of a generation that is gone.
# - a generation table of TEXT_GENERATIONS: generations built before a hard forget of
#   their tenant. Erasing drops such a tenant's generations, so a survivor may hold
#   erased text. (The graph generation holds ids only; erasing journals instead.)
_DERIVED_ORPHANS = """SELECT DISTINCT x.memory_id AS id FROM {table} x WHERE NOT EXISTS (
    SELECT 1 FROM anatid_memories m WHERE m.memory_id = x.memory_id{tenant_match})"""
_ORPHANED_PARTS = """SELECT DISTINCT p.gen_id AS id FROM {table} p WHERE NOT EXISTS (
    SELECT 1 FROM {parent} g WHERE g.gen_id = p.gen_id)"""
_GEN_BEFORE_ERASE = """SELECT g.gen_id AS id FROM {table} g WHERE g.built_at < (
    SELECT max(a.happened_at) FROM anatid_audit a WHERE a.tenant_id = g.tenant_id AND a.verb = 'forget_hard')"""
_TEXT_TYPES = ("VARCHAR", "BLOB")
TEXT_GENERATIONS = ("anatid_text_gen", "anatid_vector_gen", "anatid_ann_gen")   # ann: holds the vectors

_COUNT_AND_SAMPLE = """SELECT count(*), coalesce(list(CAST(id AS VARCHAR) ORDER BY id)[1:{n}], [])
FROM (SELECT DISTINCT id FROM ({sql}))"""

_TABLE_NAME = re.compile(r"\banatid_[a-z0-9_]+\b")
_CREATE_TABLE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(anatid_[a-z0-9_]+)", re.IGNORECASE)

# index_health() reasons: which ones cost only latency (info) and which say
# something broke (warning). Reads still equal the oracle in every case.
INDEX_REASON_SEVERITY = {
    "absent": "info", "stale_generation": "info", "historical_query": "info",
    "rebuild_in_progress": "info", "unvalidated": "warning", "load_failure": "warning",
    "damaged_base": "warning",
}


@lru_cache(maxsize=1)
def expected_columns() -> tuple[tuple[str, str, str], ...]:
    """(table, column, type) of every table a fresh file of this version has."""
    con = duckdb.connect()
    try:
        for name in ("schema_v1.sql", *schema.derived_sql_files()):
            for statement in schema.split_sql(schema.sql_text(name)):
                con.execute(statement)
        rows = con.execute("""SELECT table_name, column_name, data_type FROM duckdb_columns()
                              WHERE table_name LIKE 'anatid%' ORDER BY table_name, column_index""").fetchall()
    finally:
        con.close()
    return tuple((t, c, ty) for t, c, ty in rows)


@lru_cache(maxsize=1)
def derived_index_tables() -> tuple[str, ...]:
    """Tables created by sql/derived_*.sql (the graph, text and vector indexes)."""
    names: list[str] = []
    for name in schema.derived_sql_files():
        names += [m.lower() for m in _CREATE_TABLE.findall(schema.sql_text(name))]
    return tuple(sorted(set(names) - set(schema.DERIVED_TABLES)))


def _params() -> dict:
    exp = expected_columns()
    return {"exp_tables": [t for t, _, _ in exp], "exp_columns": [c for _, c, _ in exp],
            "exp_types": [ty for _, _, ty in exp], "schema_version": str(schema.SCHEMA_VERSION),
            "canonical": list(schema.CANONICAL_TABLES)}


def _derived_checks(columns: dict[str, dict[str, str]]) -> list[Check]:
    out = []
    for table in derived_index_tables():
        cols = columns.get(table, {})
        if "memory_id" in cols:
            holds_text = any(ty in _TEXT_TYPES for ty in cols.values())
            tenant_match = " AND m.tenant_id = x.tenant_id" if "tenant_id" in cols else ""
            out.append(Check(f"orphaned_rows:{table}", "error" if holds_text else "warning",
                             _DERIVED_ORPHANS.format(table=table, tenant_match=tenant_match),
                             f"{table} rows of memories that do not exist"
                             + ("; they may hold erased text" if holds_text else "")))
        parent = table[: -len("_parts")]
        if table.endswith("_parts") and "gen_id" in cols and "gen_id" in columns.get(parent, {}):
            out.append(Check(f"orphaned_parts:{table}", "error", _ORPHANED_PARTS.format(table=table, parent=parent),
                             f"{table} rows of a generation missing from {parent}; they may hold erased text"))
        if table in TEXT_GENERATIONS and {"tenant_id", "gen_id", "built_at"} <= set(cols):
            out.append(Check(f"generation_before_erase:{table}", "error", _GEN_BEFORE_ERASE.format(table=table),
                             f"{table} generations built before a hard forget of their tenant: "
                             "they may hold the erased text; rebuild the index"))
    return out


def run_checks(con: duckdb.DuckDBPyConnection) -> tuple[list[Finding], list[str], list[str]]:
    """Run every SQL check in one read-only transaction on a private cursor of `con`."""
    cur = con.cursor()
    findings: list[Finding] = []
    ran: list[str] = []
    skipped: list[str] = []
    try:
        cur.execute("BEGIN TRANSACTION READ ONLY")
        columns: dict[str, dict[str, str]] = {}
        for t, c, ty in cur.execute("""SELECT table_name, column_name, data_type FROM duckdb_columns()
                                       WHERE database_name = current_database()
                                         AND schema_name = current_schema() AND table_name LIKE 'anatid%'""").fetchall():
            columns.setdefault(t, {})[c] = ty
        params = _params()
        for check in (*CHECKS, *_derived_checks(columns)):
            # A table missing from the file is reported by the schema checks; checks that
            # read it are skipped rather than failed (a failed query would abort the transaction).
            if any(t not in columns for t in _TABLE_NAME.findall(check.sql)):
                skipped.append(check.name)
                continue
            sql = _COUNT_AND_SAMPLE.format(n=MAX_SAMPLES, sql=check.sql)
            bound = {k: v for k, v in params.items() if f"${k}" in check.sql}
            try:
                count, sample = cur.execute(sql, bound).fetchone()
            except duckdb.Error as exc:
                cur.execute("ROLLBACK")
                cur.execute("BEGIN TRANSACTION READ ONLY")
                first_line = str(exc).splitlines()[0][:200]
                findings.append(Finding(check.name, "error", 0, (), f"check could not run: {first_line}"))
                ran.append(check.name)
                continue
            ran.append(check.name)
            if count:
                findings.append(Finding(check.name, check.severity, int(count), tuple(sample), check.message))
    finally:
        try:
            cur.execute("ROLLBACK")
        except duckdb.Error:
            pass
        cur.close()
    return findings, ran, skipped


def native_findings(status) -> list[Finding]:
    """The extension is optional: missing or disabled costs speed (info); a binary that
    is present but would not load or has another version is a broken install (warning)."""
    if status.loaded:
        return []
    reason = status.reason or "not loaded"
    if reason.startswith("disabled by") or reason.startswith("extension binary not found"):
        return [Finding("native_extension", "info", 1, (), reason)]
    return [Finding("native_extension", "warning", 1, tuple(v for v in (status.version,) if v), reason)]


def _field(entry, *names):
    for name in names:
        if isinstance(entry, dict) and name in entry:
            return entry[name]
        if hasattr(entry, name):
            return getattr(entry, name)
    return None


def index_findings(index_health) -> list[Finding]:
    """One finding per non-fresh reason, its samples naming `index@tenant`."""
    entries = index_health()
    if isinstance(entries, dict):
        entries = list(entries.values())
    groups: dict[str, list[str]] = {}
    for entry in entries:
        reason = _field(entry, "reason", "status")
        if reason is None or reason == "fresh":
            continue
        index = _field(entry, "index", "name", "kind")
        tenant = _field(entry, "tenant", "tenant_id")
        label = str(index) if tenant is None else f"{index}@{tenant}"
        groups.setdefault(str(reason), []).append(label)
    return [Finding(f"index_{reason}", INDEX_REASON_SEVERITY.get(reason, "warning"), len(labels),
                    tuple(sorted(labels)[:MAX_SAMPLES]),
                    f"indexes answering through the SQL oracle ({reason}): reads are slower, never wrong; "
                    "run maintain_indexes()" if reason != "historical_query" else
                    "indexes not used for historical queries")
            for reason, labels in sorted(groups.items())]


def doctor(store, index_health=None) -> DoctorReport:
    findings, ran, skipped = run_checks(store.con)
    findings += native_findings(store.native)
    ran.append("native_extension")
    if index_health is not None:
        findings += index_findings(index_health)
        ran.append("index_health")
    else:
        skipped.append("index_health")
    order = {s: i for i, s in enumerate(SEVERITIES)}
    findings.sort(key=lambda f: (order[f.severity], f.check))
    return DoctorReport(tuple(findings), tuple(ran), tuple(skipped))
