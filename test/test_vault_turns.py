"""The Stop hook: reads only the new tail of a transcript, one row per turn, never
raises, prints nothing; `anatid turns --stats` shows the totals."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from anatid import Anatid
from anatid.vault.turns import parse_turns

from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]


def _line(kind, content, **extra):
    return json.dumps({"type": kind, "sessionId": "s1", "message": {"role": kind, "content": content}, **extra})


TURN_1 = [
    _line("user", "fix the failing test"),
    _line("assistant", [{"type": "text", "text": "Running it."},
                        {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q"}}]),
    _line("user", [{"type": "tool_result", "content": "1 failed"}]),
    _line("assistant", [{"type": "tool_use", "name": "Edit", "input": {"file_path": "src/db.py"}},
                        {"type": "text", "text": "Fixed an off-by-one in db.py."}]),
]
TURN_2 = [
    _line("user", [{"type": "text", "text": "now document it"}]),
    _line("assistant", [{"type": "tool_use", "name": "Write", "input": {"file_path": "docs/db.md"}},
                        {"type": "text", "text": "Documented."}]),
]


def _hook(payload: str, db: Path) -> subprocess.CompletedProcess:
    env = subprocess_env()
    return subprocess.run([sys.executable, "-m", "anatid", "hook", "stop", "--db", str(db)], input=payload,
                          capture_output=True, text=True, timeout=60, env=env)


def test_parse_turns_collects_ask_summary_files_tools_commands():
    (t,) = parse_turns(TURN_1)
    assert t["ask"] == "fix the failing test" and t["summary"] == "Fixed an off-by-one in db.py."
    assert (t["files"], t["tools"], t["commands"]) == (["src/db.py"], ["Bash", "Edit"], ["pytest -q"])


def test_stop_hook_appends_only_the_new_tail(tmp_path):
    transcript, db = tmp_path / "t.jsonl", tmp_path / "turns.anatid"
    payload = json.dumps({"session_id": "s1", "transcript_path": str(transcript), "hook_event_name": "Stop"})
    transcript.write_text("\n".join(TURN_1) + "\n")
    out = _hook(payload, db)
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    with open(transcript, "a") as f:
        f.write("\n".join(TURN_2) + "\n" + TURN_2[0][:20])     # a line still being written
    assert _hook(payload, db).stdout == ""
    assert _hook(payload, db).stdout == ""                      # nothing new: no new row
    with Anatid.open(str(db), read_only=True) as handle:
        rows = handle.connection.execute("SELECT ask, files, tools FROM anatid_turns ORDER BY recorded_at, rowid"
                                         ).fetchall()
    assert rows == [("fix the failing test", ["src/db.py"], ["Bash", "Edit"]),
                    ("now document it", ["docs/db.md"], ["Write"])]


def test_stop_hook_never_raises_and_prints_nothing(tmp_path):
    db = tmp_path / "turns.anatid"
    for payload in ["", "not json", "[1, 2]", json.dumps({"transcript_path": str(tmp_path / "missing.jsonl")}),
                    json.dumps({"transcript_path": 42})]:
        out = _hook(payload, db)
        assert (out.returncode, out.stdout, out.stderr) == (0, "", ""), payload
    (tmp_path / "dir.anatid").mkdir()                            # a database path that cannot be opened
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(TURN_1) + "\n")
    out = _hook(json.dumps({"transcript_path": str(transcript)}), tmp_path / "dir.anatid")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


def test_turns_stats_command(tmp_path):
    transcript, db = tmp_path / "t.jsonl", tmp_path / "turns.anatid"
    transcript.write_text("\n".join(TURN_1 + TURN_2) + "\n")
    _hook(json.dumps({"transcript_path": str(transcript)}), db)
    env = subprocess_env()
    out = subprocess.run([sys.executable, "-m", "anatid", "turns", str(db), "--stats"], capture_output=True,
                         text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert "turns     2" in out.stdout and "Bash 1" in out.stdout
