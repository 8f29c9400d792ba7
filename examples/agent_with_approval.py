"""An agent whose memory writes wait for a person, end to end.

    pip install "anatid[agents]"
    python examples/agent_with_approval.py            # offline: a scripted model
    OPENAI_API_KEY=... python examples/agent_with_approval.py   # the same flow with a real model
    python examples/agent_with_approval.py --reject   # the reviewer says no instead

What happens: the agent recalls (reads never wait), then asks to remember a
fact; the run stops on that write. The interrupted run is parked in the same
anatid file as the memory; a reviewer lists the queue, decides, and resumes.
Only then does the fact reach the memory, tagged with the session's writer.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))  # run from a checkout, uninstalled

from anatid import Anatid
from anatid.integrations.openai_agents import AnatidSession, RunStateStore, create_memory_tools

try:
    from agents import Agent, set_tracing_disabled
except ImportError:
    sys.exit('this example needs the OpenAI Agents SDK: pip install "anatid[agents]"')

QUESTION = "Ada told me she switched to decaf. Remember that."
INSTRUCTIONS = ("You keep long-term memory for a small team. Check what you already know with "
                "anatid_recall before storing anything, then store new facts with anatid_remember, "
                "one sentence each, filed under the people they are about.")


def scripted_model(stage: str):
    """What a model would do here, without a network. Before review: recall, then ask to
    remember. After review: answer, having read the tool's result (or the rejection)."""
    from agents.testing import ScriptedModel, assistant_message, function_call
    if stage == "before review":
        return ScriptedModel([
            [function_call("anatid_recall", {"query": "Ada coffee", "k": 5, "seed_entity": None},
                           call_id="call-1")],
            [function_call("anatid_remember", {"content": "Ada switched to decaf", "entities": ["Ada"],
                                               "kind": "preference", "episode": QUESTION}, call_id="call-2")],
        ])
    return ScriptedModel([[assistant_message("Done: I have reported back on the decaf note.")]])


def build_agent(db, session, stage: str):
    """The same agent in both processes: same name, same tools (the parked state names them)."""
    live = bool(os.environ.get("OPENAI_API_KEY"))
    if not live:
        set_tracing_disabled(True)
    tools = create_memory_tools(db, session=session)   # 3 reads, 3 writes that ask first
    return Agent(name="assistant", instructions=INSTRUCTIONS, tools=tools,
                 **({} if live else {"model": scripted_model(stage)}))


async def main(path: str, reject: bool) -> None:
    from agents import Runner

    # 1. The agent's process: run until a write needs a person, then park the run.
    with Anatid.open(path, tenant=1) as db:
        db.remember("Ada takes her coffee black", entities=["Ada"], kind="preference", writer="seed")
        session = AnatidSession("conv-1", db)
        agent = build_agent(db, session, "before review")
        result = await Runner.run(agent, QUESTION, session=session)
        for item in result.interruptions:
            print("waiting for review:", item.tool_name, item.raw_item.arguments)
        if not result.interruptions:
            print("the model stored nothing; final answer:", result.final_output)
            return
        run_id = RunStateStore(db).park(result, session_id=session.session_id, metadata={"channel": "example"})
        print("parked run", run_id, "| memories now:", db.connection.execute(
            "SELECT count(*) FROM anatid_memories").fetchone()[0])

    # 2. The reviewer, later and possibly elsewhere: only the file is shared.
    with Anatid.open(path, tenant=1) as db:
        store = RunStateStore(db)
        for parked in store.pending():
            for call in parked.pending:
                if reject:
                    store.reject(parked.run_id, call.call_id, reviewer="you",
                                 message="A reviewer declined this write: confirm it with Ada first.")
                else:
                    store.approve(parked.run_id, call.call_id, reviewer="you")
            session = AnatidSession(parked.session_id, db)
            agent = build_agent(db, session, "after review")
            result = await store.resume(parked.run_id, agent, session=session)
            while result.interruptions:      # a live model may ask for more writes: same decision
                decide = store.reject if reject else store.approve
                decide(parked.run_id, reviewer="you")
                result = await store.resume(parked.run_id, agent, session=session)
            print("final answer:", result.final_output)
            print("audit trail:", [e.action for e in store.history(parked.run_id)])
            print("written by this conversation:", [(w.verb, w.content, w.writer)
                                                    for w in await session.memories_written_here()])
            print("entities mentioned:", [e.name for e in await session.entities_mentioned()])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="anatid file to use (default: a fresh temporary one)")
    parser.add_argument("--reject", action="store_true", help="reject the write instead of approving it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(args.db or str(Path(tmp) / "agent.anatid"), args.reject))
