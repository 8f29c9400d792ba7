"""anatid-mcp end to end: the real console script over stdio, driven by the mcp client."""
from __future__ import annotations

import os
import subprocess
import sys

import anyio
import pytest

pytest.importorskip("mcp", reason='the MCP tests need the mcp package: pip install "anatid[mcp]"')

from anatid import Anatid, DatabaseLocked  # noqa: E402
from anatid.integrations.mcp.tools import DESTRUCTIVE, READS, WRITES  # noqa: E402
from test_mcp_support import error_text, mcp_session, payload, server_command, server_env  # noqa: E402


def run(coro_fn, *args):
    return anyio.run(coro_fn, *args)


def is_decimal_id(value) -> bool:
    return isinstance(value, str) and value.isdigit() and int(value) > 2**53


def test_lists_every_tool_with_annotations_and_descriptions(tmp_path):
    async def go():
        async with mcp_session(tmp_path / "m.anatid") as s:
            return (await s.list_tools()).tools
    tools = {t.name: t for t in run(go)}
    assert list(tools) == [*READS, *WRITES]  # no sql unless --enable-sql
    for name, tool in tools.items():
        assert len(tool.description) > 60, name
        assert tool.annotations.read_only_hint is (name in READS), name
        assert tool.annotations.destructive_hint is (name in DESTRUCTIVE), name
        assert tool.annotations.open_world_hint is False
    ids = tools["get"].input_schema["properties"]["memory_id"]
    assert {"type": "string"} in ids["anyOf"] and {"type": "integer"} in ids["anyOf"]
    assert "as_of" in tools["recall"].input_schema["properties"]


def test_read_only_lists_only_reads_and_serves_them(tmp_path):
    path = tmp_path / "m.anatid"
    with Anatid.open(str(path)) as db:
        mid = db.remember("Ada prefers dark roast coffee", entities=["Ada", "coffee"]).memory_id

    async def go():
        async with mcp_session(path, "--read-only", "--enable-sql") as s:
            names = [t.name for t in (await s.list_tools()).tools]
            hits = payload(await s.call_tool("recall", {"query": "coffee"}))
            got = payload(await s.call_tool("get", {"memory_id": str(mid)}))
            refused = error_text(await s.call_tool("remember", {"content": "x"}))
            return names, hits, got, refused
    names, hits, got, refused = run(go)
    assert names == [*READS, "sql"]
    assert hits["hits"][0]["memory_id"] == str(mid)
    assert got["content"] == "Ada prefers dark roast coffee" and got["memory_id"] == str(mid)
    assert "remember" in refused


def test_remember_then_recall_in_one_session_with_string_ids(tmp_path):
    async def go():
        async with mcp_session(tmp_path / "m.anatid") as s:
            edge = payload(await s.call_tool("relate", {"a": "Ada", "b": "Kestrel", "rel_kind": "leads"}))
            m = payload(await s.call_tool("remember", {"content": "Ada prefers dark roast coffee",
                                                       "entities": ["Ada", "coffee"], "kind": "preference",
                                                       "episode": "Standup: Ada takes it dark."}))
            hits = payload(await s.call_tool("recall", {"query": "coffee", "seed_entity": "Ada", "k": 3}))
            ctx = payload(await s.call_tool("context", {"entity": "Kestrel", "hops": 1}))
            by_int = payload(await s.call_tool("get", {"memory_id": int(m["memory_id"])}))
            stats = payload(await s.call_tool("stats", {}))
            return edge, m, hits, ctx, by_int, stats
    edge, m, hits, ctx, by_int, stats = run(go)
    assert is_decimal_id(edge["edge_id"]) and is_decimal_id(edge["src_id"]) and is_decimal_id(edge["dst_id"])
    assert is_decimal_id(m["memory_id"]) and m["entities"] == ["Ada", "coffee"] and m["is_current"]
    assert [h["memory_id"] for h in hits["hits"]] == [m["memory_id"]]
    assert all(is_decimal_id(h["memory_id"]) for h in hits["hits"])
    assert [h["memory_id"] for h in ctx["hits"]] == [m["memory_id"]] and ctx["hits"][0]["hop"] == 1
    assert by_int["memory_id"] == m["memory_id"]  # ids come in as int too
    assert stats["current_memories"] == 1 and stats["open_relations"] == 1


def test_supersede_then_provenance_and_as_of(tmp_path):
    async def go():
        async with mcp_session(tmp_path / "m.anatid") as s:
            old = payload(await s.call_tool("remember", {"content": "Ada drinks dark roast", "entities": ["Ada"],
                                                         "episode": "Ada, March: dark roast please"}))
            before = payload(await s.call_tool("stats", {}))
            t0 = old["tx_from"]
            new = payload(await s.call_tool("supersede", {"old_id": old["memory_id"],
                                                          "content": "Ada switched to decaf", "writer": "agent-1"}))
            prov = payload(await s.call_tool("provenance", {"memory_id": new["memory_id"]}))
            old_now = payload(await s.call_tool("get", {"memory_id": old["memory_id"]}))
            then = payload(await s.call_tool("recall", {"query": "Ada", "as_of": t0}))
            now = payload(await s.call_tool("recall", {"query": "Ada"}))
            prov_then = payload(await s.call_tool("provenance", {"memory_id": old["memory_id"], "as_of": t0}))
            stats_then = payload(await s.call_tool("stats", {"as_of": t0}))
            return old, new, prov, old_now, then, now, prov_then, stats_then, before
    old, new, prov, old_now, then, now, prov_then, stats_then, before = run(go)
    assert new["supersedes"] == old["memory_id"] and is_decimal_id(new["supersedes"])
    assert [c["memory_id"] for c in prov["chain"]] == [old["memory_id"], new["memory_id"]]
    assert prov["chain"][0]["superseded_by"] == new["memory_id"]  # nested ids are strings too
    assert prov["episodes"][0]["content"] == "Ada, March: dark roast please"
    assert is_decimal_id(prov["episodes"][0]["episode_id"])
    assert prov["writers"] == ["agent-1"]
    assert prov["audit"][0]["verb"] == "supersede" and prov["audit"][0]["subject_id"] == old["memory_id"]
    assert not old_now["is_current"]
    assert [h["content"] for h in then["hits"]] == ["Ada drinks dark roast"]
    assert [h["content"] for h in now["hits"]] == ["Ada switched to decaf"]
    assert [c["memory_id"] for c in prov_then["chain"]] == [old["memory_id"]] and prov_then["audit"] == []
    assert stats_then["current_memories"] == before["current_memories"] == 1


BAD_CALLS = [
    ("remember", {"content": "   "}, "content"),
    ("remember", {"content": "x", "entities": ["Ada", ""]}, "entities"),
    ("remember", {"content": "x", "confidence": 2}, "confidence"),
    ("remember", {"content": "x", "valid_from": "2026-01-01T00:00:00"}, "valid_from"),
    ("relate", {"a": "Ada", "b": " ada "}, "b"),
    ("supersede", {"old_id": "12abc", "content": "x"}, "old_id"),
    ("supersede", {"old_id": "-5", "content": "x"}, "old_id"),
    ("reinforce", {"memory_id": True}, "memory_id"),
    ("forget", {"memory_id": "0"}, "memory_id"),
    ("prune", {"older_than_days": -1, "dry_run": False}, "older_than_days"),
    ("get", {"memory_id": "abc"}, "memory_id"),
    ("get", {"memory_id": [1]}, "memory_id"),
    ("recall", {"query": "x", "k": 0}, "k"),
    ("recall", {"query": "x", "as_of": "yesterday"}, "as_of"),
    ("context", {"entity": "Ada", "hops": 9}, "hops"),
    ("provenance", {"memory_id": "1"}, "memory 1 does not exist"),
]


def test_bad_arguments_are_tool_errors_naming_the_argument_and_write_nothing(tmp_path):
    path = tmp_path / "m.anatid"

    async def go():
        async with mcp_session(path) as s:
            errors = [error_text(await s.call_tool(name, args)) for name, args, _ in BAD_CALLS]
            return errors, payload(await s.call_tool("stats", {}))
    errors, stats = run(go)
    for (name, _args, needle), text in zip(BAD_CALLS, errors):
        assert needle in text, (name, text)
    assert (stats["memories"], stats["entities"], stats["open_relations"]) == (0, 0, 0)


def test_rebuild_fts_index_calls_the_facade_or_says_why_not(tmp_path):
    async def go():
        async with mcp_session(tmp_path / "m.anatid") as s:
            return await s.call_tool("rebuild_fts_index", {})
    result = run(go)
    if hasattr(Anatid, "rebuild_fts_index"):
        assert payload(result)["rebuilt"] is True
    else:
        assert "needs no rebuild" in error_text(result)


def test_second_writer_is_told_what_to_do(tmp_path):
    path = tmp_path / "m.anatid"
    command, args = server_command()

    async def go():
        async with mcp_session(path) as s:
            payload(await s.call_tool("remember", {"content": "held open"}))
            second = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [command, *args, "--db", str(path)], env={**os.environ, **server_env()},
                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60))
            with pytest.raises(DatabaseLocked, match="another process"):
                Anatid.open(str(path))
            return second
    second = run(go)
    assert second.returncode == 3            # docs/cli.md: the file could not be opened
    assert "held by another process" in second.stderr and "--read-only" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1 and "Traceback" not in second.stderr
    assert second.stderr.startswith("anatid-mcp: ")


def test_missing_mcp_names_the_extra(tmp_path):
    code = ("import sys; sys.modules['mcp'] = None\n"
            "from anatid.integrations.mcp import main\n"
            f"sys.exit(main(['--db', {str(tmp_path / 'm.anatid')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **server_env()},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert 'pip install "anatid[mcp]"' in proc.stderr
    assert not (tmp_path / "m.anatid").exists()     # refused before the file was created
