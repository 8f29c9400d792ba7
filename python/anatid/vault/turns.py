"""The per-turn ledger: after every assistant turn an agent's Stop hook hands us
the transcript path; we read only the bytes added since the last call and
append one row per turn (ask, summary, files touched, tools, commands).

The hook never raises and prints nothing: a ledger that breaks the agent, or
talks into its output, is worse than no ledger. A failed write leaves the
offset where it was, so the next turn's call picks the rows up.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from ..timeutil import utcnow
from . import tables

ASK_CHARS = 1000
SUMMARY_CHARS = 1000
FILE_KEYS = ("file_path", "notebook_path", "path")


def default_db() -> str:
    return os.environ.get("ANATID_TURNS_DB") or str(Path.home() / ".anatid" / "turns.anatid")


def _blocks(message) -> list:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _ask_text(entry) -> str | None:
    """The text of a user line that is a person's ask (not a tool result, not a meta line)."""
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isSidechain"):
        return None
    blocks = _blocks(entry.get("message"))
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
        return None
    text = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text").strip()
    return text or None


def parse_turns(lines: list[str]) -> list[dict]:
    """Turns in these transcript lines; assistant lines before the first ask form a turn with no ask."""
    turns: list[dict] = []
    cur = None
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        ask = _ask_text(entry)
        if ask is not None:
            cur = {"ask": ask[:ASK_CHARS], "summary": None, "files": [], "tools": [], "commands": [],
                   "session_id": entry.get("sessionId"), "turn_at": entry.get("timestamp")}
            turns.append(cur)
            continue
        if entry.get("type") != "assistant" or entry.get("isSidechain"):
            continue
        if cur is None:
            cur = {"ask": None, "summary": None, "files": [], "tools": [], "commands": [],
                   "session_id": entry.get("sessionId"), "turn_at": entry.get("timestamp")}
            turns.append(cur)
        for b in _blocks(entry.get("message")):
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text" and b.get("text", "").strip():
                cur["summary"] = b["text"].strip()[:SUMMARY_CHARS]
            elif b.get("type") == "tool_use":
                name = str(b.get("name") or "?")
                cur["tools"].append(name)
                inp = b.get("input") if isinstance(b.get("input"), dict) else {}
                for key in FILE_KEYS:
                    if isinstance(inp.get(key), str) and inp[key] not in cur["files"]:
                        cur["files"].append(inp[key])
                if isinstance(inp.get("command"), str):
                    cur["commands"].append(inp["command"][:500])
    return turns


def record_stop(payload: dict, db_path: str) -> int:
    """Append the turns added to payload['transcript_path'] since the last call. Returns rows added."""
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        return 0
    transcript = Path(path).expanduser()
    if not transcript.is_file():
        return 0
    from ..db import Anatid
    Path(db_path).expanduser().parent.mkdir(parents=True, exist_ok=True)
    with Anatid.open(str(Path(db_path).expanduser())) as db:
        cur = db.connection
        tables.ensure(cur)
        key = str(transcript.resolve())
        row = cur.execute("SELECT byte_offset FROM anatid_turn_offsets WHERE transcript_path = $p",
                          {"p": key}).fetchone()
        offset = int(row[0]) if row else 0
        size = transcript.stat().st_size
        if size < offset:  # rewritten or truncated: start again
            offset = 0
        with open(transcript, "rb") as f:
            f.seek(offset)
            data = f.read()
        end = data.rfind(b"\n")
        if end < 0:
            return 0
        chunk = data[:end + 1]
        turns = parse_turns(chunk.decode("utf-8", errors="replace").splitlines())
        now = utcnow().replace(tzinfo=None)
        with db.transaction():
            for t in turns:
                cur.execute("INSERT INTO anatid_turns VALUES ($s, $p, $at, $now, $ask, $sum, $files, $tools, $cmds)",
                            {"s": t["session_id"] or payload.get("session_id"), "p": key, "at": t["turn_at"],
                             "now": now, "ask": t["ask"], "sum": t["summary"], "files": t["files"],
                             "tools": t["tools"], "cmds": t["commands"]})
            cur.execute("DELETE FROM anatid_turn_offsets WHERE transcript_path = $p", {"p": key})
            cur.execute("INSERT INTO anatid_turn_offsets VALUES ($p, $o)", {"p": key, "o": offset + len(chunk)})
        return len(turns)


def stats(db) -> dict:
    cur = db.connection
    n, sessions = cur.execute("SELECT count(*), count(DISTINCT session_id) FROM anatid_turns").fetchone()
    tools, files, cmds = Counter(), Counter(), 0
    for t, f, c in cur.execute("SELECT tools, files, len(commands) FROM anatid_turns").fetchall():
        tools.update(t)
        files.update(f)
        cmds += c
    return {"turns": n, "sessions": sessions, "commands": cmds, "top_tools": tools.most_common(5),
            "top_files": files.most_common(5)}
