"""RunStateStore: interrupted runs parked in the anatid file, reviewed and
resumed later, by another process if need be.

A run that stops on approvals is parked with the SDK's own serialization
(`RunState.to_string()`), the calls awaiting a decision and the caller's
metadata. A reviewer lists the queue, approves or rejects each call (each
decision is an audit event), and `resume()` loads the state, applies the
decisions, runs the agent on, and either completes the parked run or parks
the next interruption under the same run id. Nothing is ever deleted: a
resolved run keeps its row and every event.

Only the application touches this store. The states hold approvals, so they
must never be loaded from anything a client or a model supplied.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...errors import AnatidError, ConflictError, NotFoundError, ValidationError
from ...timeutil import from_db, to_db, utcnow
from ._common import dumps, ensure_tables, jsonable, require_agents

_INSERT_RUN = """
INSERT INTO anatid_run_states (run_id, tenant_id, status, agent_name, session_id, state, pending, metadata,
                               final_output, created_at, updated_at)
VALUES ($run_id, $tenant, 'pending', $agent_name, $session_id, $state, $pending, $metadata, NULL, $now, $now)
"""

_RUN_COLUMNS = ("run_id, status, agent_name, session_id, pending, metadata, final_output, created_at, "
                "updated_at")

_GET_RUN = f"SELECT {_RUN_COLUMNS} FROM anatid_run_states WHERE tenant_id = $tenant AND run_id = $run_id"

_LIST_RUNS = f"""
SELECT {_RUN_COLUMNS} FROM anatid_run_states
WHERE tenant_id = $tenant AND ($status IS NULL OR status = $status)
ORDER BY created_at, run_id
"""

_GET_STATE = "SELECT state FROM anatid_run_states WHERE tenant_id = $tenant AND run_id = $run_id"

# Claiming is a conditional update, so two resumers in one process cannot both run it.
_CLAIM = """
UPDATE anatid_run_states SET status = 'resuming', updated_at = $now
WHERE tenant_id = $tenant AND run_id = $run_id AND status IN ('pending', 'failed')
RETURNING run_id
"""

_REPARK = """
UPDATE anatid_run_states SET status = 'pending', state = $state, pending = $pending, updated_at = $now
WHERE tenant_id = $tenant AND run_id = $run_id
"""

_FINISH = """
UPDATE anatid_run_states SET status = $status, final_output = $final_output, updated_at = $now
WHERE tenant_id = $tenant AND run_id = $run_id
"""

_EVENT = """
INSERT INTO anatid_run_state_events (event_id, tenant_id, run_id, happened_at, action, call_id, tool_name, actor, detail)
VALUES (nextval('anatid_run_state_event_seq'), $tenant, $run_id, $now, $action, $call_id, $tool_name, $actor,
        $detail)
"""

_EVENTS = """
SELECT event_id, happened_at, action, call_id, tool_name, actor, detail FROM anatid_run_state_events
WHERE tenant_id = $tenant AND run_id = $run_id ORDER BY event_id
"""

# The latest approve/reject per call since the run was last parked.
_DECISIONS = """
SELECT call_id, arg_max(action, event_id) AS action, arg_max(detail, event_id) AS detail
FROM anatid_run_state_events
WHERE tenant_id = $tenant AND run_id = $run_id AND action IN ('approved', 'rejected')
  AND event_id > (SELECT max(event_id) FROM anatid_run_state_events
                  WHERE tenant_id = $tenant AND run_id = $run_id AND action = 'parked')
GROUP BY call_id
"""


@dataclass(frozen=True)
class PendingCall:
    """A tool call awaiting a person's decision."""

    call_id: str
    tool_name: str | None
    arguments: Any              # parsed JSON when the model sent valid JSON, else the raw text


@dataclass(frozen=True)
class ParkedRun:
    run_id: str
    status: str                 # pending | resuming | completed | failed
    agent_name: str | None
    session_id: str | None
    pending: tuple[PendingCall, ...]
    metadata: dict = field(default_factory=dict)
    final_output: Any = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True)
class RunEvent:
    event_id: int
    at: datetime
    action: str                 # parked | approved | rejected | resumed | completed | failed
    call_id: str | None
    tool_name: str | None
    actor: str | None
    detail: dict | None


def _pending_calls(interruptions) -> list[PendingCall]:
    calls = []
    for item in interruptions:
        raw = item.raw_item
        get = raw.get if isinstance(raw, dict) else (lambda k, d=None: getattr(raw, k, d))
        arguments = get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        calls.append(PendingCall(str(get("call_id") or get("id") or ""), item.tool_name or get("name"), arguments))
    return calls


def _parked(row) -> ParkedRun:
    pending = tuple(PendingCall(p["call_id"], p.get("tool_name"), p.get("arguments")) for p in json.loads(row[4]))
    return ParkedRun(row[0], row[1], row[2], row[3], pending, json.loads(row[5]) if row[5] else {},
                     json.loads(row[6]) if row[6] else None, from_db(row[7]), from_db(row[8]))


def _final_output_json(output: Any) -> str:
    if hasattr(output, "model_dump"):
        output = output.model_dump(mode="json")
    try:
        return json.dumps(output, ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(str(output), ensure_ascii=False)


class RunStateStore:
    """A review queue of interrupted Agents SDK runs, in the anatid file."""

    def __init__(self, db):
        self.db = db
        ensure_tables(db)

    def _p(self, run_id: str | None = None, **extra) -> dict:
        """Bound parameters: DuckDB refuses names a statement does not use, so only those asked for."""
        p = {"tenant": self.db.tenant, **extra}
        if run_id is not None:
            p["run_id"] = run_id
        return p

    def _pw(self, run_id: str, **extra) -> dict:
        """Parameters of a statement that writes, with the instant it writes at."""
        return self._p(run_id, now=to_db(utcnow(), "now"), **extra)

    def _event(self, cur, run_id: str, action: str, *, call_id=None, tool_name=None, actor=None, detail=None):
        cur.execute(_EVENT, self._pw(run_id, action=action, call_id=call_id, tool_name=tool_name, actor=actor,
                                    detail=None if detail is None else dumps(jsonable(detail))))

    # -- parking -----------------------------------------------------------------------------------
    def park(self, result_or_state, *, metadata: dict | None = None, session_id: str | None = None,
             actor: str | None = None) -> str:
        """Store an interrupted run (a RunResult or a RunState); return its run id."""
        state = result_or_state.to_state() if hasattr(result_or_state, "to_state") else result_or_state
        interruptions = state.get_interruptions()
        if not interruptions:
            raise ValidationError("result_or_state", "the run has no pending approvals",
                                  "a RunResult or RunState with interruptions")
        if metadata is not None and not isinstance(metadata, dict):
            raise ValidationError("metadata", f"expected a dict, got {type(metadata).__name__}", "a JSON object")
        calls = _pending_calls(interruptions)
        agent = getattr(result_or_state, "last_agent", None) or getattr(state, "_current_agent", None)
        run_id = uuid.uuid4().hex
        with self.db.transaction():
            cur = self.db.connection
            cur.execute(_INSERT_RUN, self._pw(
                run_id, agent_name=getattr(agent, "name", None), session_id=session_id, state=state.to_string(),
                pending=dumps(jsonable(calls)),
                metadata=dumps(jsonable(metadata)) if metadata else None))
            self._event(cur, run_id, "parked", actor=actor, detail={"pending": [c.call_id for c in calls]})
        return run_id

    # -- the review queue --------------------------------------------------------------------------
    def get(self, run_id: str) -> ParkedRun:
        row = self.db.connection.execute(_GET_RUN, self._p(run_id)).fetchone()
        if row is None:
            raise NotFoundError(f"no parked run {run_id!r} in tenant {self.db.tenant}")
        return _parked(row)

    def pending(self) -> list[ParkedRun]:
        """Runs waiting for a review, oldest first."""
        return self.list(status="pending")

    def list(self, status: str | None = None) -> list[ParkedRun]:
        return [_parked(r) for r in self.db.connection.execute(_LIST_RUNS, self._p(status=status)).fetchall()]

    def history(self, run_id: str) -> list[RunEvent]:
        """The audit trail of one run, in order."""
        self.get(run_id)
        return [RunEvent(int(r[0]), from_db(r[1]), r[2], r[3], r[4], r[5], json.loads(r[6]) if r[6] else None)
                for r in self.db.connection.execute(_EVENTS, self._p(run_id)).fetchall()]

    def approve(self, run_id: str, call_id: str | None = None, *, reviewer: str | None = None,
                note: str | None = None) -> None:
        """Approve one pending call, or every one when `call_id` is None."""
        self._decide(run_id, call_id, "approved", reviewer, {"note": note} if note else None)

    def reject(self, run_id: str, call_id: str | None = None, *, message: str | None = None,
               reviewer: str | None = None) -> None:
        """Reject one pending call (or all); `message` is what the model will read instead of a result."""
        self._decide(run_id, call_id, "rejected", reviewer, {"message": message} if message else None)

    def _decide(self, run_id, call_id, action, reviewer, detail) -> None:
        run = self.get(run_id)
        if run.status != "pending":
            raise ConflictError(f"run {run_id} is {run.status}, not pending: nothing to decide", retryable=False)
        calls = [c for c in run.pending if call_id is None or c.call_id == call_id]
        if not calls:
            raise NotFoundError(f"run {run_id} has no pending call {call_id!r}; pending: "
                                f"{[c.call_id for c in run.pending]}")
        with self.db.transaction():
            cur = self.db.connection
            for c in calls:
                self._event(cur, run_id, action, call_id=c.call_id, tool_name=c.tool_name, actor=reviewer,
                            detail=detail)

    def decisions(self, run_id: str) -> dict[str, tuple[str, dict | None]]:
        """call_id -> ('approved' | 'rejected', detail) for the current interruption."""
        rows = self.db.connection.execute(_DECISIONS, self._p(run_id)).fetchall()
        return {r[0]: (r[1], json.loads(r[2]) if r[2] else None) for r in rows}

    # -- resuming ----------------------------------------------------------------------------------
    async def load(self, run_id: str, agent):
        """The parked RunState, rebuilt against `agent` (the same agent graph, with its tools)."""
        agents = require_agents()
        row = self.db.connection.execute(_GET_STATE, self._p(run_id)).fetchone()
        if row is None:
            raise NotFoundError(f"no parked run {run_id!r} in tenant {self.db.tenant}")
        return await agents.RunState.from_string(agent, row[0])

    async def resume(self, run_id: str, agent, *, session=None, actor: str | None = None, **run_kwargs):
        """Apply the recorded decisions, run the agent on and return the SDK's RunResult.

        Every pending call needs a decision first. If the run stops on new
        approvals it is parked again under the same id (status 'pending');
        otherwise it is completed with its final output. Pass the `session`
        the run started with; without one, an AnatidSession for the parked
        session id is opened on this file.
        """
        agents = require_agents()
        run = self.get(run_id)
        decisions = self.decisions(run_id)
        undecided = [c.call_id for c in run.pending if c.call_id not in decisions]
        if run.status == "pending" and undecided:
            raise ConflictError(f"run {run_id} still has undecided calls {undecided}: approve or reject them "
                                f"first", retryable=False)
        with self.db.transaction():
            cur = self.db.connection
            if cur.execute(_CLAIM, self._pw(run_id)).fetchone() is None:
                raise ConflictError(f"run {run_id} is {run.status}: only a pending or failed run resumes",
                                    retryable=False)
            self._event(cur, run_id, "resumed", actor=actor)
        try:
            state = await self.load(run_id, agent)
            for item in state.get_interruptions():
                call = _pending_calls([item])[0]
                action, detail = decisions.get(call.call_id, (None, None))
                if action == "approved":
                    state.approve(item)
                elif action == "rejected":
                    state.reject(item, rejection_message=(detail or {}).get("message"))
            if session is None and run.session_id is not None:
                from .session import AnatidSession
                session = AnatidSession(run.session_id, self.db)
            if session is not None:
                run_kwargs["session"] = session
            result = await agents.Runner.run(agent, state, **run_kwargs)
        except BaseException as exc:
            with self.db.transaction():
                cur = self.db.connection
                cur.execute(_FINISH, self._pw(run_id, status="failed", final_output=None))
                self._event(cur, run_id, "failed", actor=actor, detail={"error": f"{type(exc).__name__}: {exc}"})
            raise
        with self.db.transaction():
            cur = self.db.connection
            if result.interruptions:
                new_state = result.to_state()
                calls = _pending_calls(new_state.get_interruptions())
                cur.execute(_REPARK, self._pw(run_id, state=new_state.to_string(),
                                             pending=dumps(jsonable(calls))))
                self._event(cur, run_id, "parked", actor=actor, detail={"pending": [c.call_id for c in calls]})
            else:
                cur.execute(_FINISH, self._pw(run_id, status="completed",
                                             final_output=_final_output_json(result.final_output)))
                self._event(cur, run_id, "completed", actor=actor)
        return result
