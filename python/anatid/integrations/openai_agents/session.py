"""AnatidSession: the Agents SDK's Session protocol over tables in the anatid file.

The conversation lives beside the memory graph, so "which entities did this
conversation name" is one join and "what did it commit to memory" another.
The protocol is implemented structurally (the SDK asks third parties not to
subclass its internal ABC), so this module imports no SDK code at all.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ... import validate
from ...errors import ValidationError
from ...models import Entity
from ...text import tokens_sql
from ...timeutil import from_db, to_db, utcnow
from ._common import ensure_tables

_NEXT_IDS = "SELECT nextval('anatid_session_item_seq') FROM range($n)"

_INSERT_ITEMS = f"""
INSERT INTO anatid_session_items (item_id, tenant_id, session_id, item, role, text, terms, added_at)
SELECT id, $tenant, $session_id, item, role, text, {tokens_sql('text')}, $now
FROM (SELECT unnest($ids) AS id, unnest($items) AS item, unnest($roles) AS role, unnest($texts) AS text)
"""

_ALL_ITEMS = """
SELECT item FROM anatid_session_items
WHERE tenant_id = $tenant AND session_id = $session_id ORDER BY item_id
"""

_LATEST_ITEMS = """
SELECT item FROM (SELECT item_id, item FROM anatid_session_items
                  WHERE tenant_id = $tenant AND session_id = $session_id ORDER BY item_id DESC LIMIT $limit)
ORDER BY item_id
"""

_POP_ITEM = """
DELETE FROM anatid_session_items
WHERE item_id = (SELECT max(item_id) FROM anatid_session_items
                 WHERE tenant_id = $tenant AND session_id = $session_id)
RETURNING item
"""

_CLEAR = "DELETE FROM anatid_session_items WHERE tenant_id = $tenant AND session_id = $session_id"

# An entity is mentioned by an item when all its name tokens occur among the
# item's tokens: the same rule recall uses to pick graph seeds from a query.
_ENTITIES_MENTIONED = f"""
SELECT e.entity_id, e.tenant_id, e.name, e.kind, e.created_at
FROM anatid_entities e
JOIN anatid_session_items s
  ON s.tenant_id = e.tenant_id AND s.session_id = $session_id
 AND list_has_all(s.terms, {tokens_sql('e.name')})
WHERE e.tenant_id = $tenant AND len({tokens_sql('e.name')}) > 0
GROUP BY e.entity_id, e.tenant_id, e.name, e.kind, e.created_at
ORDER BY min(s.item_id), e.entity_id
"""

_RECORD_WRITE = """
INSERT INTO anatid_session_writes (tenant_id, session_id, memory_id, verb, related_id, call_id, writer, written_at)
VALUES ($tenant, $session_id, $memory_id, $verb, $related_id, $call_id, $writer, $now)
"""

# The newest version of each memory this session wrote; NULL content once hard-forgotten.
_WRITTEN_HERE = """
SELECT w.memory_id, w.verb, w.related_id, w.call_id, w.writer, w.written_at, m.content
FROM anatid_session_writes w
LEFT JOIN (SELECT memory_id, arg_max(content, version) AS content FROM anatid_memories
           WHERE tenant_id = $tenant GROUP BY memory_id) m ON m.memory_id = w.memory_id
WHERE w.tenant_id = $tenant AND w.session_id = $session_id
ORDER BY w.written_at, w.memory_id
"""


@dataclass(frozen=True)
class SessionWrite:
    """One memory write a conversation committed (through the approved tools)."""

    memory_id: int
    verb: str                 # remember | supersede | forget | forget_hard
    related_id: int | None    # for a supersede: the memory it replaced
    call_id: str | None
    writer: str | None
    written_at: datetime
    content: str | None       # the memory's newest text; None after a hard forget


def item_role_and_text(item: Any) -> tuple[str | None, str | None]:
    """What a person or the model said in an input item: message text and tool-call arguments.

    Tool outputs are left out on purpose: they echo stored memories and JSON
    keys, and would make every entity ever recalled look "mentioned".
    """
    if not isinstance(item, dict):
        return None, None
    role = item.get("role") if isinstance(item.get("role"), str) else None
    kind = item.get("type")
    parts: list[str] = []
    if kind == "function_call":
        if isinstance(item.get("arguments"), str):
            parts.append(item["arguments"])
    elif kind in (None, "message"):
        content = item.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict):
                    for key in ("text", "refusal"):
                        if isinstance(part.get(key), str):
                            parts.append(part[key])
    return role, ("\n".join(parts) if parts else None)


class AnatidSession:
    """Conversation history for one `session_id`, stored in the anatid file.

    `writer` is the tag memory writes made through this session's tools carry
    (default ``"session:<session_id>"``).
    """

    def __init__(self, session_id: str, db, *, writer: str | None = None, session_settings=None):
        self.session_id = validate.text(session_id, "session_id", max_chars=validate.MAX_NAME_CHARS)
        self.db = db
        self.writer = validate.optional_text(writer, "writer") or f"session:{self.session_id}"
        self.session_settings = session_settings
        ensure_tables(db)

    def _params(self, **extra) -> dict:
        return {"tenant": self.db.tenant, "session_id": self.session_id, **extra}

    # -- the Session protocol ----------------------------------------------------------------------
    async def get_items(self, limit: int | None = None) -> list[dict]:
        """The history in chronological order; with `limit`, only the newest `limit` items."""
        if limit is None and self.session_settings is not None:
            limit = getattr(self.session_settings, "limit", None)
        cur = self.db.connection
        if limit is None:
            rows = cur.execute(_ALL_ITEMS, self._params()).fetchall()
        else:
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
                raise ValidationError("limit", f"{limit!r} is not a count", "None or an integer >= 0")
            rows = cur.execute(_LATEST_ITEMS, self._params(limit=limit)).fetchall() if limit else []
        return [json.loads(r[0]) for r in rows]

    async def add_items(self, items: list) -> None:
        """Append items in order, in one transaction."""
        if not items:
            return
        encoded, roles, texts = [], [], []
        for i, item in enumerate(items):
            try:
                encoded.append(json.dumps(item, ensure_ascii=False))
            except (TypeError, ValueError) as exc:
                raise ValidationError(f"items[{i}]", f"is not JSON-serializable ({exc})",
                                      "the SDK's input items (plain dicts)") from exc
            role, text = item_role_and_text(item)
            roles.append(role)
            texts.append(text)
        with self.db.transaction():
            cur = self.db.connection
            ids = sorted(r[0] for r in cur.execute(_NEXT_IDS, {"n": len(items)}).fetchall())
            cur.execute(_INSERT_ITEMS, self._params(ids=ids, items=encoded, roles=roles, texts=texts,
                                                    now=to_db(utcnow(), "now")))

    async def pop_item(self) -> dict | None:
        """Remove and return the newest item; None when the session is empty."""
        with self.db.transaction():
            row = self.db.connection.execute(_POP_ITEM, self._params()).fetchone()
        return None if row is None else json.loads(row[0])

    async def clear_session(self) -> None:
        """Remove every item of this session. The record of memory writes stays: it is audit."""
        with self.db.transaction():
            self.db.connection.execute(_CLEAR, self._params())

    # -- joins with the memory graph ---------------------------------------------------------------
    async def entities_mentioned(self) -> list[Entity]:
        """Entities named anywhere in this conversation, in order of first mention."""
        rows = self.db.connection.execute(_ENTITIES_MENTIONED, self._params()).fetchall()
        return [Entity(int(r[0]), int(r[1]), r[2], r[3], from_db(r[4])) for r in rows]

    async def memories_written_here(self) -> list[SessionWrite]:
        """Every memory write this conversation's tools committed, oldest first."""
        rows = self.db.connection.execute(_WRITTEN_HERE, self._params()).fetchall()
        return [SessionWrite(int(r[0]), r[1], None if r[2] is None else int(r[2]), r[3], r[4], from_db(r[5]), r[6])
                for r in rows]

    def record_write(self, memory_id: int, verb: str, *, related_id: int | None = None,
                     call_id: str | None = None) -> None:
        """Called by the memory tools inside the write's own transaction."""
        self.db.connection.execute(_RECORD_WRITE, self._params(
            memory_id=memory_id, verb=verb, related_id=related_id, call_id=call_id, writer=self.writer,
            now=to_db(utcnow(), "now")))

    def __repr__(self) -> str:
        return f"AnatidSession({self.session_id!r}, writer={self.writer!r})"
