"""Memory tools through the real Agents SDK Runner, with a scripted model.

Writes stop the run until a person approves; reads never do; a hard forget
stops even under approve_low_risk(); anatid errors come back to the model as
JSON it can read.
"""
from __future__ import annotations

import asyncio
import json
import sys

import pytest

agents = pytest.importorskip("agents", reason='openai-agents not installed: pip install "anatid[agents]"')
testing = pytest.importorskip("agents.testing", reason="this openai-agents has no agents.testing")

from agents import Agent, Runner, set_tracing_disabled  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from anatid.integrations.openai_agents import (READ_TOOLS, WRITE_TOOLS, AnatidSession,  # noqa: E402
                                               WriteRequest, approve_low_risk, create_memory_tools,
                                               never_ask)

from conftest import at  # noqa: E402

set_tracing_disabled(True)


def run(coro):
    return asyncio.run(coro)


def remember_args(content, entities=None, kind=None, episode=None):
    return {"content": content, "entities": entities, "kind": kind, "episode": episode}


def count_memories(db) -> int:
    return db.connection.execute("SELECT count(*) FROM anatid_memories").fetchone()[0]


def tool_outputs(call) -> dict[str, dict]:
    """call_id -> the parsed output the model received, from a recorded model call."""
    out = {}
    for item in call.input:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            try:
                out[item["call_id"]] = json.loads(item["output"])
            except ValueError:
                out[item["call_id"]] = item["output"]
    return out


def make_agent(db, steps, *, session=None, policy=None, **kw):
    model = ScriptedModel(steps)
    tools = create_memory_tools(db, session=session, approval_policy=policy, **kw)
    return Agent(name="assistant", model=model, tools=tools), model


def test_the_six_tools_and_which_are_gated(db):
    tools = create_memory_tools(db)
    assert [t.name for t in tools] == list(READ_TOOLS + WRITE_TOOLS)
    for t in tools:
        assert (t.needs_approval is False) == (t.name in READ_TOOLS)
        # nothing in any tool's arguments speaks for a reviewer
        assert not any("approv" in p for p in t.params_json_schema["properties"])


def test_remember_waits_for_approval_then_writes_with_the_session_tag(db):
    session = AnatidSession("conv-1", db)
    agent, model = make_agent(db, [
        [function_call("anatid_remember", remember_args("Ada switched to decaf", ["Ada"]), call_id="c1")],
        [assistant_message("Noted.")],
    ], session=session)
    result = run(Runner.run(agent, "Ada switched to decaf, remember that", session=session))
    assert [i.tool_name for i in result.interruptions] == ["anatid_remember"]
    assert json.loads(result.interruptions[0].raw_item.arguments)["content"] == "Ada switched to decaf"
    assert count_memories(db) == 0                          # nothing reached the file

    state = result.to_state()
    state.approve(result.interruptions[0])
    result = run(Runner.run(agent, state, session=session))
    assert result.interruptions == [] and result.final_output == "Noted."
    rows = db.connection.execute("SELECT memory_id, content, writer FROM anatid_memories").fetchall()
    assert [(r[1], r[2]) for r in rows] == [("Ada switched to decaf", "session:conv-1")]
    out = tool_outputs(model.last_call)["c1"]
    assert out["ok"] is True and out["memory"]["memory_id"] == str(rows[0][0])
    assert int(out["memory"]["memory_id"]) > 2 ** 53
    written = run(session.memories_written_here())
    assert [(w.memory_id, w.verb, w.call_id, w.writer) for w in written] == [
        (rows[0][0], "remember", "c1", "session:conv-1")]
    # the history holds both turns' items exactly once
    items = run(session.get_items())
    assert [i.get("type", "message") for i in items] == ["message", "function_call", "function_call_output",
                                                         "message"]


def test_rejection_writes_nothing_and_the_model_reads_the_message(db):
    session = AnatidSession("conv-1", db)
    agent, model = make_agent(db, [
        [function_call("anatid_remember", remember_args("Ada hates tea", ["Ada"]), call_id="c1")],
        [assistant_message("Understood, I will not store that.")],
    ], session=session)
    result = run(Runner.run(agent, "remember that Ada hates tea", session=session))
    assert len(result.interruptions) == 1
    state = result.to_state()
    state.reject(result.interruptions[0], rejection_message="Rejected by a reviewer: ask Ada herself first.")
    result = run(Runner.run(agent, state, session=session))
    assert result.final_output == "Understood, I will not store that."
    assert count_memories(db) == 0
    assert run(session.memories_written_here()) == []
    assert tool_outputs(model.last_call)["c1"] == "Rejected by a reviewer: ask Ada herself first."


def test_reads_never_interrupt(db):
    m = db.remember("Ada prefers dark roast", entities=["Ada"], now=at(1))
    agent, model = make_agent(db, [
        [function_call("anatid_recall", {"query": "roast", "k": None, "seed_entity": None}, call_id="r1"),
         function_call("anatid_context", {"entity": "Ada", "hops": None, "limit": None}, call_id="r2"),
         function_call("anatid_provenance", {"memory_id": str(m.memory_id)}, call_id="r3")],
        [assistant_message("Ada likes it dark.")],
    ])
    result = run(Runner.run(agent, "how does Ada take her coffee?"))
    assert result.interruptions == [] and result.final_output == "Ada likes it dark."
    outs = tool_outputs(model.last_call)
    assert outs["r1"]["hits"][0]["memory_id"] == str(m.memory_id)
    assert outs["r2"]["hits"][0]["content"] == "Ada prefers dark roast"
    assert outs["r3"]["chain"][0]["memory_id"] == str(m.memory_id)


def test_low_risk_lets_a_small_remember_through_and_still_stops_a_hard_forget(db):
    old = db.remember("Ada's old phone number is 555-0100", entities=["Ada"], now=at(1))
    session = AnatidSession("conv-1", db)
    agent, _ = make_agent(db, [
        [function_call("anatid_remember", remember_args("Ada likes oat milk", ["Ada"]), call_id="c1")],
        [function_call("anatid_forget", {"memory_id": str(old.memory_id), "hard": True, "reason": None},
                       call_id="c2")],
        [assistant_message("Done.")],
    ], session=session, policy=approve_low_risk())
    result = run(Runner.run(agent, "note the oat milk, and erase the old number", session=session))
    assert [i.tool_name for i in result.interruptions] == ["anatid_forget"]
    contents = {r[0] for r in db.connection.execute("SELECT content FROM anatid_memories").fetchall()}
    assert contents == {"Ada likes oat milk", "Ada's old phone number is 555-0100"}   # forget has not run

    state = result.to_state()
    state.approve(result.interruptions[0])
    result = run(Runner.run(agent, state, session=session))
    assert result.final_output == "Done."
    contents = {r[0] for r in db.connection.execute("SELECT content FROM anatid_memories").fetchall()}
    assert contents == {"Ada likes oat milk"}
    assert [w.verb for w in run(session.memories_written_here())] == ["remember", "forget_hard"]


def test_hard_forget_runs_unreviewed_only_after_an_explicit_opt_out(db):
    m = db.remember("scratch", now=at(1))
    args = {"memory_id": str(m.memory_id), "hard": True, "reason": "test"}
    agent, _ = make_agent(db, [[function_call("anatid_forget", args, call_id="c1")]],
                          policy=never_ask())
    assert [i.tool_name for i in run(Runner.run(agent, "erase it")).interruptions] == ["anatid_forget"]
    agent, _ = make_agent(db, [[function_call("anatid_forget", args, call_id="c1")], [assistant_message("ok")]],
                          policy=never_ask(), hard_forget_needs_approval=False)
    assert run(Runner.run(agent, "erase it")).interruptions == []
    assert count_memories(db) == 0


def test_anatid_errors_come_back_as_tool_output_not_crashes(db):
    agent, model = make_agent(db, [
        [function_call("anatid_supersede", {"memory_id": "123456789012345678", "content": "x", "entities": None},
                       call_id="e1"),
         function_call("anatid_forget", {"memory_id": "not-an-id", "hard": False, "reason": None}, call_id="e2"),
         function_call("anatid_remember", remember_args("   "), call_id="e3"),
         function_call("anatid_recall", '{"query": "x", "bogus": 1}', call_id="e4"),
         function_call("anatid_supersede", {"memory_id": "-3", "content": "x", "entities": None}, call_id="e5"),
         function_call("anatid_context", {"entity": " ", "hops": None, "limit": None}, call_id="e6")],
        [assistant_message("I will fix my calls.")],
    ], policy=never_ask())
    result = run(Runner.run(agent, "go"))
    assert result.final_output == "I will fix my calls."
    outs = tool_outputs(model.last_call)
    assert outs["e1"]["ok"] is False and outs["e1"]["error"]["type"] == "NotFoundError"
    assert outs["e2"]["error"]["type"] == "ValidationError" and outs["e2"]["error"]["argument"] == "memory_id"
    assert outs["e3"]["error"]["argument"] == "content"
    assert outs["e4"]["error"]["type"] == "AnatidArgumentsError" and "bogus" in outs["e4"]["error"]["message"]
    # the verbs' own argument names (old_id, seed) reach the model as the tool's names
    assert outs["e5"]["error"]["argument"] == "memory_id" and outs["e5"]["error"]["message"].startswith("memory_id:")
    assert outs["e6"]["error"]["argument"] == "entity"
    assert count_memories(db) == 0


def test_approve_low_risk_policy():
    p = approve_low_risk(max_chars=20)
    small = WriteRequest("anatid_remember", "remember", remember_args("Ada likes tea", ["Ada"]))
    assert p(small) is False
    assert p(WriteRequest("anatid_remember", "remember", remember_args("x" * 21))) is True
    assert p(WriteRequest("anatid_remember", "remember", remember_args("short", kind="instruction"))) is True
    assert p(WriteRequest("anatid_remember", "remember", remember_args("short", episode="y" * 20))) is True
    assert p(WriteRequest("anatid_remember", "remember", remember_args("short", entities=list("abcdefghi")))) is True
    assert p(WriteRequest("anatid_remember", "remember", {"content": 5})) is True
    assert p(WriteRequest("anatid_supersede", "supersede", {"memory_id": "1", "content": "x"})) is True
    assert p(WriteRequest("anatid_forget", "forget", {"memory_id": "1", "hard": False})) is True


@pytest.mark.parametrize("policy", [lambda r: 1 / 0, lambda r: "no", lambda r: None])
def test_a_broken_policy_asks(db, policy):
    agent, _ = make_agent(db, [[function_call("anatid_remember", remember_args("a"), call_id="c1")]],
                          policy=policy)
    assert len(run(Runner.run(agent, "go")).interruptions) == 1
    assert count_memories(db) == 0


def test_async_policy(db):
    async def policy(request):
        return request.arguments["content"] != "fine"
    agent, _ = make_agent(db, [[function_call("anatid_remember", remember_args("fine"), call_id="c1")],
                               [assistant_message("ok")]], policy=policy)
    assert run(Runner.run(agent, "go")).interruptions == []
    assert count_memories(db) == 1


def test_missing_sdk_names_the_extra(db, monkeypatch):
    monkeypatch.setitem(sys.modules, "agents", None)
    with pytest.raises(ImportError, match=r"anatid\[agents\]"):
        create_memory_tools(db)
