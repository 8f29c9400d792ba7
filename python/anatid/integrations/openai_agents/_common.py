"""What every module of the integration shares: the lazy SDK import, the
integration's tables, and JSON that carries ids as decimal strings."""
from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from importlib import resources
from typing import Any

from ...errors import AnatidError, ReadOnlyError
from ...schema import split_sql

EXTRA_HINT = 'the OpenAI Agents SDK is not installed: pip install "anatid[agents]"'

TABLES = ("anatid_session_items", "anatid_session_writes", "anatid_run_states", "anatid_run_state_events")


def require_agents():
    """Import the SDK on first use, with an error that names the extra."""
    try:
        import agents
    except ImportError as exc:
        raise ImportError(EXTRA_HINT) from exc
    return agents


def tables_sql() -> str:
    return resources.files(__package__).joinpath("tables.sql").read_text(encoding="utf-8")


def ensure_tables(db) -> None:
    """Create the integration's tables once per file; a read-only handle needs them to exist."""
    cur = db.connection
    have = cur.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                       "AND schema_name = current_schema() AND table_name IN (SELECT unnest($names))",
                       {"names": list(TABLES)}).fetchone()[0]
    if have == len(TABLES):
        return
    try:
        with db.transaction():
            for statement in split_sql(tables_sql()):
                cur.execute(statement)
    except ReadOnlyError:
        raise
    except Exception as exc:
        if "read-only" in str(exc).lower() or "read only" in str(exc).lower():
            raise ReadOnlyError("the agents integration's tables do not exist yet and this handle is "
                                "read-only: open the file once read-write") from exc
        raise


ID_KEYS = frozenset({"supersedes", "superseded_by"})


def is_id_key(key: str) -> bool:
    return key.endswith("_id") or key in ID_KEYS


def jsonable(value: Any, key: str = "") -> Any:
    """JSON-ready copy: an int under an id key (`*_id`, `supersedes`, `superseded_by`) becomes a
    decimal string, since ids exceed 2**53; instants become ISO-8601; dataclasses become dicts."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return value
    if isinstance(value, int):
        return str(value) if is_id_key(key) else value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, key) for v in value]
    return str(value)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def error_payload(exc: AnatidError, aliases: dict[str, str] | None = None) -> dict:
    """A structured tool error the model can read and act on. `aliases` renames a verb's
    argument to the tool's name for it, so the model reads the name it sent."""
    err: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    argument = getattr(exc, "argument", None)
    if argument is not None:
        err["argument"] = (aliases or {}).get(argument, argument)
        if err["argument"] != argument:
            err["message"] = f'{err["argument"]}: {getattr(exc, "problem", exc)}'
    if getattr(exc, "accepted", None) is not None:
        err["accepted"] = exc.accepted
    if hasattr(exc, "retryable"):
        err["retryable"] = exc.retryable
    return {"ok": False, "error": err}
