"""RunStateStore: park an interrupted run in the file, review it, resume it
(in a fresh process, from the file alone), and keep the audit trail."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap

import pytest

agents = pytest.importorskip("agents", reason='openai-agents not installed: pip install "anatid[agents]"')
pytest.importorskip("agents.testing", reason="this openai-agents has no agents.testing")

from agents import Agent, Runner, set_tracing_disabled  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from anatid import ConflictError, NotFoundError, ValidationError  # noqa: E402
from anatid.integrations.openai_agents import AnatidSession, RunStateStore, create_memory_tools  # noqa: E402

from conftest import open_db, subprocess_env  # noqa: E402

set_tracing_disabled(True)


def run(coro):
    return asyncio.run(coro)


def remember(content, call_id):
    return function_call("anatid_remember", {"content": content, "entities": ["Ada"], "kind": None,
                                             "episode": None}, call_id=call_id)


def build(db, steps, session):
    model = ScriptedModel(steps)
    return Agent(name="assistant", model=model, tools=create_memory_tools(db, session=session)), model


def memories(db):
    return db.connection.execute("SELECT content, writer FROM anatid_memories ORDER BY tx_from").fetchall()


def park_one(db, content="Ada switched to decaf"):
    session = AnatidSession("conv-1", db)
    agent, _ = build(db, [[remember(content, "c1")]], session)
    result = run(Runner.run(agent, f"remember: {content}", session=session))
    store = RunStateStore(db)
    return store, store.park(result, metadata={"ticket": 7, "user_id": 2 ** 60}, session_id="conv-1",
                             actor="worker-1")


CHILD = textwrap.dedent("""
    import asyncio, json, sys
    from agents import Agent, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message
    from anatid import Anatid
    from anatid.integrations.openai_agents import AnatidSession, RunStateStore, create_memory_tools

    set_tracing_disabled(True)
    path, run_id = sys.argv[1], sys.argv[2]

    async def main():
        db = Anatid.open(path, tenant=1)
        store = RunStateStore(db)
        [parked] = store.pending()
        assert parked.run_id == run_id, parked
        session = AnatidSession(parked.session_id, db)
        agent = Agent(name="assistant", model=ScriptedModel([[assistant_message("Saved.")]]),
                      tools=create_memory_tools(db, session=session))
        for call in parked.pending:
            store.approve(run_id, call.call_id, reviewer="alice", note="checked with Ada")
        result = await store.resume(run_id, agent, session=session, actor="review-process")
        print(json.dumps({"final_output": result.final_output, "status": store.get(run_id).status}))
        db.close()

    asyncio.run(main())
""")


def test_park_then_resume_in_a_fresh_process(db_path, tmp_path):
    db = open_db(db_path)
    store, run_id = park_one(db)
    [parked] = store.pending()
    assert parked.run_id == run_id and parked.status == "pending" and parked.session_id == "conv-1"
    assert [(c.call_id, c.tool_name, c.arguments["content"]) for c in parked.pending] == [
        ("c1", "anatid_remember", "Ada switched to decaf")]
    assert parked.metadata == {"ticket": 7, "user_id": str(2 ** 60)}   # id-like ints leave as strings
    assert memories(db) == []
    db.close()

    child = tmp_path / "resume_child.py"
    child.write_text(CHILD)
    env = subprocess_env()
    proc = subprocess.run([sys.executable, str(child), str(db_path), run_id], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"final_output": "Saved.", "status": "completed"}

    db = open_db(db_path)
    try:
        assert memories(db) == [("Ada switched to decaf", "session:conv-1")]
        store = RunStateStore(db)
        assert store.pending() == []
        done = store.get(run_id)
        assert done.status == "completed" and done.final_output == "Saved."
        trail = store.history(run_id)
        assert [(e.action, e.call_id, e.actor) for e in trail] == [
            ("parked", None, "worker-1"), ("approved", "c1", "alice"), ("resumed", None, "review-process"),
            ("completed", None, "review-process")]
        assert trail[1].detail == {"note": "checked with Ada"}
        # the conversation carried on in the same session, in the same file
        items = run(AnatidSession("conv-1", db).get_items())
        assert items[-1]["content"][0]["text"] == "Saved."
        with pytest.raises(ConflictError, match="completed"):
            store.approve(run_id)
    finally:
        db.close()


def test_reject_through_the_store(db):
    store, run_id = park_one(db, "Ada hates tea")
    store.reject(run_id, message="Not stored: hearsay.", reviewer="bob")
    session = AnatidSession("conv-1", db)
    agent, model = build(db, [[assistant_message("Fine, not stored.")]], session)
    result = run(store.resume(run_id, agent, session=session))
    assert result.final_output == "Fine, not stored."
    assert memories(db) == []
    outputs = [i for i in model.last_call.input if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs] == ["Not stored: hearsay."]
    assert [e.action for e in store.history(run_id)] == ["parked", "rejected", "resumed", "completed"]


def test_a_second_interruption_parks_again_under_the_same_id(db):
    store, run_id = park_one(db, "first fact")
    store.approve(run_id)
    session = AnatidSession("conv-1", db)
    agent, _ = build(db, [[remember("second fact", "c2")], [assistant_message("Both saved.")]], session)
    result = run(store.resume(run_id, agent, session=session))
    assert [i.tool_name for i in result.interruptions] == ["anatid_remember"]
    [parked] = store.pending()
    assert parked.run_id == run_id and [c.call_id for c in parked.pending] == ["c2"]
    assert [m[0] for m in memories(db)] == ["first fact"]
    with pytest.raises(ConflictError, match="undecided"):
        run(store.resume(run_id, agent, session=session))
    store.approve(run_id, "c2")
    result = run(store.resume(run_id, agent, session=session))
    assert result.final_output == "Both saved." and store.get(run_id).status == "completed"
    assert [m[0] for m in memories(db)] == ["first fact", "second fact"]
    assert [e.action for e in store.history(run_id)] == [
        "parked", "approved", "resumed", "parked", "approved", "resumed", "completed"]


def test_a_failed_resume_is_recorded_and_can_be_retried(db):
    store, run_id = park_one(db)
    store.approve(run_id)
    session = AnatidSession("conv-1", db)
    broken, _ = build(db, [RuntimeError("model is down")], session)
    with pytest.raises(RuntimeError, match="model is down"):
        run(store.resume(run_id, broken, session=session))
    assert store.get(run_id).status == "failed"
    assert store.history(run_id)[-1].detail == {"error": "RuntimeError: model is down"}
    agent, _ = build(db, [[assistant_message("Saved.")]], session)
    assert run(store.resume(run_id, agent, session=session)).final_output == "Saved."
    assert store.get(run_id).status == "completed"


def test_errors_are_typed(db):
    store = RunStateStore(db)
    with pytest.raises(NotFoundError):
        store.get("nope")
    with pytest.raises(NotFoundError):
        run(store.load("nope", Agent(name="assistant")))
    session = AnatidSession("conv-1", db)
    agent, _ = build(db, [[assistant_message("hi")]], session)
    finished = run(Runner.run(agent, "hello", session=session))
    with pytest.raises(ValidationError, match="no pending approvals"):
        store.park(finished)
    store, run_id = park_one(db)
    with pytest.raises(NotFoundError, match="no pending call"):
        store.approve(run_id, "c9")
