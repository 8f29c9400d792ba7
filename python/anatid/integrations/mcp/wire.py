"""What anatid values look like on the MCP wire: plain JSON, ids as decimal strings.

anatid ids exceed 2**53, the largest integer a JavaScript client holds exactly, so a
client that parsed them as numbers would silently address the wrong row. Two rules,
applied at any depth: a value under an id key (`memory_id`, `supersedes`, `candidates`,
...) is a decimal string, and so is any other integer beyond 2**53.
"""
from __future__ import annotations

import base64
import dataclasses
import math
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from ...models import RecallHits

MAX_SAFE_INT = 2**53 - 1

# Keys whose values are ids (or lists of ids) although they do not end in `_id`/`_ids`.
ID_KEYS = frozenset({"supersedes", "superseded_by", "candidates", "forgotten", "new_memory_id"})


def is_id_key(key: str) -> bool:
    return key.endswith("_id") or key.endswith("_ids") or key in ID_KEYS


def to_wire(value: Any, *, as_id: bool = False) -> Any:
    """A JSON-ready copy of `value` (dataclasses, RecallHits, datetimes, nested containers)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value) if as_id or abs(value) > MAX_SAFE_INT else value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, RecallHits):
        return {"hits": [to_wire(h) for h in value], "bm25_stale": value.bm25_stale,
                "arms": list(value.arms), "notes": list(value.notes), "engine": value.engine}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if hasattr(type(value), "is_current"):
            out["is_current"] = value.is_current
        return to_wire(out)
    if isinstance(value, dict):
        return {str(k): to_wire(v, as_id=as_id or is_id_key(str(k))) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_wire(v, as_id=as_id) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, (Decimal, UUID)):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return to_wire(value.tolist(), as_id=as_id)
    return str(value)
