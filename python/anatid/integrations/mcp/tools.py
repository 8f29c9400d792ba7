"""The MCP tools: one thin function per verb, with descriptions written for a model.

Each tool converts its arguments, calls the facade, and returns `wire.to_wire` of the
result. Argument checks are the verbs' own (they run before anything is written); an
`AnatidError` becomes an MCP tool error whose text names the argument.
"""
from __future__ import annotations

import functools
import math
from datetime import timedelta
from typing import Annotated, Any, Callable

from pydantic import Field, StrictInt, StrictStr

from ...errors import AnatidError, ValidationError
from . import history, sql_guard
from .wire import to_wire

# Strict: JSON true must not become id 1.
Id = Annotated[StrictStr | StrictInt, Field(description="An anatid id as a decimal string (preferred) or integer.")]
AsOf = Annotated[str | None, Field(description="Optional ISO-8601 instant with a timezone, e.g. "
                                               "2026-03-01T12:00:00Z: answer as the memory saw the world then.")]
Names = Annotated[list[str] | None, Field(description="Entity names, e.g. [\"Ada\", \"coffee\"].")]
Kinds = Annotated[list[str] | None, Field(description="Only memories of these kinds, e.g. [\"preference\"].")]
Writer = Annotated[str | None, Field(description="Who is writing (an agent or user name), kept for provenance.")]

READS = ("recall", "context", "get", "provenance", "stats")
WRITES = ("remember", "relate", "supersede", "reinforce", "forget", "prune", "rebuild_fts_index")
DESTRUCTIVE = ("forget", "prune")

INSTRUCTIONS = """\
anatid is a persistent, bitemporal graph memory. Facts are memories filed under named
entities; entities are linked by relations. Before answering from memory, call `recall`
(hybrid text + graph search) or `context` (everything filed under one entity). Store new
durable facts with `remember`, naming the entities they are about. When a fact changes,
`supersede` the old memory instead of forgetting it: history is kept and `provenance` shows
the chain. Ids are decimal strings: pass them back exactly as received. Every read accepts
`as_of` (ISO-8601 with a timezone) to see what was believed at that instant."""


def tool_error(exc: Exception) -> Exception:
    from mcp.server.mcpserver.exceptions import ToolError
    return ToolError(f"{type(exc).__name__}: {exc}")


def _guard(fn: Callable) -> Callable:
    """Turn anatid's typed errors into MCP tool errors; the message names the argument."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AnatidError as exc:
            raise tool_error(exc) from exc
    return wrapper


def build_tools(db, *, read_only: bool, enable_sql: bool, sql_max_rows: int = sql_guard.DEFAULT_MAX_ROWS,
                sql_timeout_s: float = sql_guard.DEFAULT_TIMEOUT_S) -> list[tuple[str, Callable]]:
    """[(name, function)] in registration order: reads, then writes unless read_only, then sql."""

    def recall(query: Annotated[str, Field(description="What you are looking for, in words.")],
               seed_entity: Annotated[str | list[str] | None, Field(
                   description="Optional entity name(s) to start the graph arm from.")] = None,
               k: Annotated[int, Field(description="How many memories to return (1-1000).")] = 10,
               kinds: Kinds = None,
               embedding: Annotated[list[float] | None, Field(
                   description="Optional query embedding of the file's dimension.")] = None,
               as_of: AsOf = None) -> dict[str, Any]:
        """Find memories relevant to a question: BM25 text search, the 2-hop entity graph and
        (with an embedding) vector similarity, fused by reciprocal rank fusion. Returns hits
        best first, each with memory_id, content, kind, score and the arms that found it.
        Call this before answering anything the user may have told you before."""
        return to_wire(db.recall(query, seed_entity=seed_entity, k=k, kinds=kinds, embedding=embedding,
                                 as_of=as_of))

    def context(entity: Annotated[str | list[str], Field(description="Entity name(s), e.g. \"Ada\".")],
                hops: Annotated[int, Field(description="0: memories filed under the entity itself; "
                                                       "1-4: also under entities that many relations away.")] = 0,
                kinds: Kinds = None,
                limit: Annotated[int, Field(description="At most this many memories.")] = 50,
                as_of: AsOf = None) -> dict[str, Any]:
        """Everything remembered about an entity (and, with hops > 0, its neighbourhood in the
        relation graph), nearest first, newest first within a hop."""
        return to_wire(db.context(entity, hops=hops, kinds=kinds, limit=limit, as_of=as_of))

    def get(memory_id: Id, as_of: AsOf = None) -> dict[str, Any]:
        """One memory by id: content, kind, confidence, strength, entities and its four time
        columns. is_current is false once it was superseded or forgotten."""
        return to_wire(history.get(db, memory_id, as_of))

    def provenance(memory_id: Id, as_of: AsOf = None) -> dict[str, Any]:
        """Where a memory came from: the supersession chain oldest first, the raw episodes
        (evidence) behind it, every writer involved and the audit trail. Use it to explain or
        justify an answer."""
        return to_wire(history.provenance(db, memory_id, as_of))

    def stats(as_of: AsOf = None) -> dict[str, Any]:
        """Counts of entities, memories, relations and episodes in this tenant, and how the
        file is being served (schema version, native engine, read-only)."""
        return to_wire(history.stats(db, as_of))

    def remember(content: Annotated[str, Field(description="The fact, one self-contained sentence.")],
                 entities: Names = None,
                 kind: Annotated[str, Field(description="A category: fact, preference, event, ...")] = "fact",
                 confidence: Annotated[float, Field(description="0 to 1.")] = 1.0,
                 writer: Writer = None,
                 episode: Annotated[str | None, Field(
                     description="Optional raw evidence (e.g. the user's words) kept for provenance.")] = None,
                 valid_from: AsOf = None, valid_to: AsOf = None,
                 embedding: Annotated[list[float] | None, Field(
                     description="Optional embedding of the content.")] = None) -> dict[str, Any]:
        """Store a durable fact and file it under the entities it is about, so recall and
        context find it at once. Returns the new memory with its memory_id (a string).
        To change an existing fact use supersede, not a second remember."""
        return to_wire(db.remember(content, entities, kind=kind, confidence=confidence, writer=writer,
                                   episode=episode, valid_from=valid_from, valid_to=valid_to,
                                   embedding=embedding))

    def relate(a: Annotated[str, Field(description="Source entity name.")],
               b: Annotated[str, Field(description="Target entity name.")],
               rel_kind: Annotated[str, Field(description="The relation, e.g. leads, works_with.")] = "related",
               weight: Annotated[float, Field(description="Strength of the relation, >= 0.")] = 1.0,
               writer: Writer = None) -> dict[str, Any]:
        """Link two entities (created if new) with a relation, so graph recall can walk from
        one to the other. Relating the same pair and kind again returns the existing edge."""
        return to_wire(db.relate(a, b, rel_kind, weight=weight, writer=writer))

    def supersede(old_id: Id, content: Annotated[str, Field(description="The corrected or updated fact.")],
                  entities: Names = None, kind: Annotated[str | None, Field(
                      description="Kind of the new memory; defaults to the old one's.")] = None,
                  writer: Writer = None,
                  episode: Annotated[str | None, Field(description="Optional raw evidence.")] = None
                  ) -> dict[str, Any]:
        """Replace a belief: closes the old memory (kept, with history) and stores the new
        one linked to it. Entities default to the old memory's. Use this whenever a
        remembered fact changes."""
        return to_wire(db.supersede(old_id, content, entities=entities, kind=kind, writer=writer,
                                    episode=episode))

    def reinforce(memory_id: Id, amount: Annotated[float, Field(
            description="How much to add to the memory's strength (negative weakens).")] = 1.0) -> dict[str, Any]:
        """Strengthen a memory that proved useful; weak, unused memories are what prune removes."""
        return to_wire(db.reinforce(memory_id, amount))

    def forget(memory_id: Id,
               hard: Annotated[bool, Field(description="false: stop believing it, history kept. true: erase "
                                                       "the memory and its evidence completely.")] = False,
               reason: Annotated[str | None, Field(description="Why, kept in the audit trail.")] = None,
               writer: Writer = None) -> dict[str, Any]:
        """Stop believing a memory. The default keeps an audit trail and the old row for
        as_of reads; hard=true erases it irreversibly. Prefer supersede when a fact changed."""
        return to_wire(db.forget(memory_id, hard=hard, reason=reason, writer=writer))

    def prune(min_strength: Annotated[float, Field(description="Forget memories weaker than this.")] = 0.5,
              older_than_days: Annotated[float, Field(description="...and unused for this many days.")] = 30.0,
              kinds: Kinds = None,
              dry_run: Annotated[bool, Field(description="true (default): only list the candidates.")] = True,
              hard: Annotated[bool, Field(description="Erase instead of a soft forget.")] = False,
              writer: Writer = None) -> dict[str, Any]:
        """Forget weak memories nobody used for a while. Call with dry_run=true first and
        show the candidates; run again with dry_run=false to forget them."""
        if isinstance(older_than_days, bool) or not math.isfinite(older_than_days) or older_than_days < 0:
            raise ValidationError("older_than_days", f"{older_than_days!r} is not a non-negative number of days",
                                  "a number >= 0")
        return to_wire(db.prune(min_strength=min_strength, older_than=timedelta(days=older_than_days),
                                kinds=kinds, dry_run=dry_run, hard=hard, writer=writer))

    def rebuild_fts_index() -> dict[str, Any]:
        """Rebuild the full-text search index. Rarely needed: every write is searchable at once."""
        rebuild = getattr(db, "rebuild_fts_index", None)
        if rebuild is None:
            raise AnatidError("rebuild_fts_index: text search needs no rebuild in this version of anatid; "
                              "postings are maintained in the same transaction as each write")
        return {"rebuilt": True, "result": to_wire(rebuild())}

    def sql(query: Annotated[str, Field(description="One SELECT (or EXPLAIN SELECT) statement.")]) -> dict[str, Any]:
        """Read-only SQL for questions the other tools do not answer (counts per kind, the
        audit trail, ...). Tables: anatid_memories (one row per version: memory_id, version,
        tenant_id, content, kind, confidence, strength, writer, valid_from, valid_to, tx_from,
        tx_to, supersedes, superseded_by), anatid_entities, anatid_edges, anatid_episodes,
        anatid_evidence, anatid_audit. The current belief is tx_to IS NULL AND valid_to IS
        NULL. Every tenant in the file is visible: filter on tenant_id. Built-in scalar,
        aggregate and window functions and operators (LIKE, ||, +, ...) work, as do
        information_schema.tables/columns and range/unnest/json_each. Refused, with the
        name in the error: anatid_* native functions, DuckDB's catalog and system views
        (duckdb_*, pg_*, pragma_*), files, the network, writes and settings. Results are
        capped and time-limited."""
        return sql_guard.run_sql(db.connection, query, max_rows=sql_max_rows, timeout_s=sql_timeout_s).to_wire()

    fns = {f.__name__: f for f in (recall, context, get, provenance, stats, remember, relate, supersede,
                                   reinforce, forget, prune, rebuild_fts_index, sql)}
    names = list(READS) + ([] if read_only else list(WRITES)) + (["sql"] if enable_sql else [])
    return [(n, _guard(fns[n])) for n in names]
