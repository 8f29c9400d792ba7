"""Memory tools for an Agents SDK agent: three reads that run at once and three
writes that wait for a person (through the SDK's `needs_approval`).

Every tool answers with a JSON object. Ids travel as decimal strings, since
they exceed what a JSON number carries exactly. An anatid error comes back
as `{"ok": false, "error": {...}}` so the model can read it and correct the
call; only a bug in anatid itself fails the run.
"""
from __future__ import annotations

import inspect
import json
from typing import Any, Callable

from ...errors import AnatidError
from ...models import Hit, RecallHits
from ._common import dumps, error_payload, jsonable, require_agents
from .policy import ApprovalPolicy, WriteRequest, ask_every_write

READ_TOOLS = ("anatid_recall", "anatid_context", "anatid_provenance")
WRITE_TOOLS = ("anatid_remember", "anatid_supersede", "anatid_forget")

_STR = {"type": "string"}
_OPT_STR = {"type": ["string", "null"]}
_OPT_INT = {"type": ["integer", "null"]}
_OPT_NAMES = {"type": ["array", "null"], "items": {"type": "string"}}
# A verb's argument name -> the tool's, for error messages.
ARGUMENT_ALIASES = {"anatid_supersede": {"old_id": "memory_id"}, "anatid_context": {"seed": "entity"},
                    "anatid_recall": {"seed": "seed_entity"}}

_ID = {"type": "string", "description": "a memory id, as the decimal string a tool returned"}


def _schema(**props) -> dict:
    """A strict JSON schema: every property listed as required, optional ones nullable."""
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


# name -> (description, parameter schema); the order here is the order the model sees.
SPECS: dict[str, tuple[str, dict]] = {
    "anatid_recall": (
        "Search long-term memory by meaning, words and the entity graph. Returns the best hits.",
        _schema(query={**_STR, "description": "what to look for"},
                k={**_OPT_INT, "description": "how many hits (default 10)"},
                seed_entity={**_OPT_STR, "description": "an entity to start the graph walk from"})),
    "anatid_context": (
        "Everything remembered about one entity, optionally walking `hops` relations out.",
        _schema(entity={**_STR, "description": "the entity's name"},
                hops={**_OPT_INT, "description": "relations to walk, 0 to 4 (default 0)"},
                limit={**_OPT_INT, "description": "at most this many memories (default 50)"})),
    "anatid_provenance": (
        "Where a memory came from: the chain of memories it replaced, its evidence, its writers.",
        _schema(memory_id=_ID)),
    "anatid_remember": (
        "Store a new fact in long-term memory, filed under the entities it is about. "
        "A person may review the write first.",
        _schema(content={**_STR, "description": "the fact, one self-contained sentence"},
                entities={**_OPT_NAMES, "description": "names of the people, things or places it is about"},
                kind={**_OPT_STR, "description": "fact, preference, observation, note or event (default fact)"},
                episode={**_OPT_STR, "description": "the raw evidence, e.g. the user's own words"})),
    "anatid_supersede": (
        "Replace a remembered fact that stopped being true; the old one is kept as history. "
        "A person may review the write first.",
        _schema(memory_id=_ID, content={**_STR, "description": "the new fact"},
                entities={**_OPT_NAMES, "description": "entities of the new fact (default: the old one's)"})),
    "anatid_forget": (
        "Stop believing a memory. hard=false keeps it as history; hard=true erases it with its "
        "evidence and always needs a person's approval.",
        _schema(memory_id=_ID, hard={"type": "boolean", "description": "erase completely (default false)"},
                reason={**_OPT_STR, "description": "why, for the audit trail"})),
}


# -- results as JSON ------------------------------------------------------------------------------------
def _hits(hits: RecallHits) -> dict:
    return {"ok": True,
            "hits": [{"memory_id": str(h.memory_id), "content": h.content, "kind": h.kind,
                      "score": round(float(h.score), 6), "sources": list(h.sources), "hop": h.hop}
                     for h in hits if isinstance(h, Hit)],
            "bm25_stale": bool(getattr(hits, "bm25_stale", False))}


def _memory(m) -> dict:
    return {"memory_id": str(m.memory_id), "version": m.version, "content": m.content, "kind": m.kind,
            "entities": list(m.entities), "writer": m.writer, "is_current": m.is_current,
            "supersedes": None if m.supersedes is None else str(m.supersedes)}


def _provenance(p) -> dict:
    return {"ok": True, "memory_id": str(p.memory_id),
            "chain": [jsonable(m) for m in p.chain],
            "episodes": [jsonable(e) for e in p.episodes],
            "writers": list(p.writers),
            "audit": [jsonable(a) for a in p.audit]}


class _Args:
    """The model's arguments, checked against the tool's declared names."""

    def __init__(self, tool: str, raw: str):
        try:
            parsed = json.loads(raw) if raw and raw.strip() else {}
        except ValueError as exc:
            raise AnatidArgumentsError(f"arguments are not valid JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise AnatidArgumentsError("arguments must be a JSON object")
        allowed = SPECS[tool][1]["properties"]
        unknown = sorted(set(parsed) - set(allowed))
        if unknown:
            raise AnatidArgumentsError(f"unknown argument(s) {', '.join(unknown)}; accepted: {', '.join(allowed)}")
        self.values = {k: v for k, v in parsed.items() if v is not None}

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def need(self, key: str) -> Any:
        if key not in self.values:
            raise AnatidArgumentsError(f"missing required argument {key}")
        return self.values[key]


class AnatidArgumentsError(AnatidError):
    """A tool call's arguments were not a JSON object of the declared fields."""


# -- the tools ------------------------------------------------------------------------------------------
def create_memory_tools(db, session=None, approval_policy: ApprovalPolicy | None = None, *,
                        writer: str | None = None, hard_forget_needs_approval: bool = True,
                        include: tuple[str, ...] | None = None) -> list:
    """Function tools over `db` for an Agents SDK agent.

    Reads (anatid_recall, anatid_context, anatid_provenance) never wait. Writes
    (anatid_remember, anatid_supersede, anatid_forget) ask `approval_policy`
    (default: `ask_every_write()`); a hard forget always waits unless
    `hard_forget_needs_approval=False` is passed explicitly. Writes carry the
    session's writer tag (or `writer`, default "openai-agents") and, with a
    session, are recorded in its `memories_written_here()`.
    """
    agents = require_agents()
    policy = approval_policy or ask_every_write()
    if not callable(policy):
        raise TypeError("approval_policy must be a callable taking a WriteRequest")
    tag = writer or (session.writer if session is not None else None) or "openai-agents"
    names = tuple(SPECS) if include is None else tuple(include)
    unknown = [n for n in names if n not in SPECS]
    if unknown:
        raise ValueError(f"unknown tool name(s) {unknown}; accepted: {list(SPECS)}")

    def record(memory_id: int, verb: str, call_id: str | None, related_id: int | None = None) -> None:
        if session is not None:
            session.record_write(memory_id, verb, related_id=related_id, call_id=call_id)

    def run_recall(a: _Args, call_id) -> dict:
        kw = {k: a.get(k) for k in ("k", "seed_entity") if a.get(k) is not None}
        return _hits(db.recall(a.need("query"), **kw))

    def run_context(a: _Args, call_id) -> dict:
        kw = {k: a.get(k) for k in ("hops", "limit") if a.get(k) is not None}
        return _hits(db.context(a.need("entity"), **kw))

    def run_provenance(a: _Args, call_id) -> dict:
        return _provenance(db.provenance(a.need("memory_id")))

    def run_remember(a: _Args, call_id) -> dict:
        kw = {k: a.get(k) for k in ("kind", "episode") if a.get(k) is not None}
        with db.transaction():
            m = db.remember(a.need("content"), a.get("entities"), writer=tag, **kw)
            record(m.memory_id, "remember", call_id)
        return {"ok": True, "memory": _memory(m)}

    def run_supersede(a: _Args, call_id) -> dict:
        kw = {"entities": a.get("entities")} if a.get("entities") is not None else {}
        with db.transaction():
            m = db.supersede(a.need("memory_id"), a.need("content"), writer=tag, **kw)
            record(m.memory_id, "supersede", call_id, related_id=m.supersedes)
        return {"ok": True, "memory": _memory(m)}

    def run_forget(a: _Args, call_id) -> dict:
        hard = a.get("hard", False)
        with db.transaction():
            out = db.forget(a.need("memory_id"), hard=hard, writer=tag, reason=a.get("reason"))
            record(out["memory_id"], "forget_hard" if out["hard"] else "forget", call_id)
        return {"ok": True, "memory_id": str(out["memory_id"]), "hard": out["hard"]}

    runners: dict[str, Callable[[_Args, Any], dict]] = {
        "anatid_recall": run_recall, "anatid_context": run_context, "anatid_provenance": run_provenance,
        "anatid_remember": run_remember, "anatid_supersede": run_supersede, "anatid_forget": run_forget,
    }

    def invoker(name: str):
        async def on_invoke_tool(ctx, raw_arguments: str) -> str:
            call_id = getattr(ctx, "tool_call_id", None)
            try:
                return dumps(runners[name](_Args(name, raw_arguments), call_id))
            except AnatidError as exc:
                return dumps(error_payload(exc, ARGUMENT_ALIASES.get(name)))
        return on_invoke_tool

    def gate(name: str):
        verb = name.removeprefix("anatid_")

        async def needs_approval(run_context, arguments: dict, call_id: str) -> bool:
            request = WriteRequest(name, verb, dict(arguments or {}), call_id)
            if request.hard and hard_forget_needs_approval:
                return True
            try:
                answer = policy(request)
                if inspect.isawaitable(answer):
                    answer = await answer
            except Exception:
                return True      # a broken policy must not let writes through
            return answer if isinstance(answer, bool) else True
        return needs_approval

    tools = []
    for name in names:
        description, schema = SPECS[name]
        tools.append(agents.FunctionTool(
            name=name, description=description, params_json_schema=schema,
            on_invoke_tool=invoker(name), strict_json_schema=True,
            needs_approval=gate(name) if name in WRITE_TOOLS else False))
    return tools
