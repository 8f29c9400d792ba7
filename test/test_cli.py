"""The `anatid` command line, driven as `python -m anatid ...` in subprocesses:
output, --json, exit codes, and the read-only guarantees of `sql` and `doctor`."""
from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from anatid import Anatid
from anatid.cli import EXIT_OK, EXIT_OPEN, EXIT_PROBLEM, EXIT_USAGE, build_parser
from anatid.cli._render import table
from anatid.cli.contract import jsonable
from anatid.cli.progress import terminal_progress

from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]


def anatid(*args, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = subprocess_env()
    return subprocess.run([sys.executable, "-m", "anatid", *map(str, args)], input=stdin, capture_output=True,
                          text=True, env=env, timeout=60)


@pytest.fixture(scope="module")
def memory_file(tmp_path_factory):
    """Written at wall-clock time, so the commands' current view sees it."""
    path = tmp_path_factory.mktemp("cli") / "m.anatid"
    with Anatid.open(str(path), embedding_dim=4) as db:
        tea = db.remember("alice drinks green tea every morning", entities=["Alice"], embedding=[1, 0, 0, 0])
        coffee = db.remember("bob prefers coffee", entities=["Bob"])
        db.relate("Alice", "Bob")
    return path, {"tea": tea.memory_id, "coffee": coffee.memory_id}


@pytest.fixture
def copy(memory_file, tmp_path):
    path, ids = memory_file
    target = tmp_path / "copy.anatid"
    shutil.copy(path, target)
    return target, ids


def test_doctor_clean_and_broken(copy):
    path, ids = copy
    r = anatid("doctor", path)
    assert r.returncode == EXIT_OK, r.stderr
    assert r.stdout.splitlines()[-1].startswith("ok:")
    with Anatid.open(str(path)) as db:
        db.connection.execute("UPDATE anatid_memories SET confidence = 2.0 WHERE memory_id = $id", {"id": ids["tea"]})
    r = anatid("doctor", path, "--json")
    assert r.returncode == EXIT_PROBLEM
    report = json.loads(r.stdout)
    assert report["ok"] is False
    found = {f["check"]: f for f in report["findings"]}
    assert found["confidence_out_of_range"]["sample_ids"] == [str(ids["tea"])]
    human = anatid("doctor", path)
    assert human.returncode == EXIT_PROBLEM and "confidence_out_of_range" in human.stdout
    assert human.stdout.splitlines()[-1].startswith("NOT OK")


def test_missing_file_exits_3(tmp_path):
    for command in (["doctor"], ["recall"], ["stats"], ["turns"]):
        args = command + [tmp_path / "absent.anatid"] + (["q"] if command[0] in ("sql", "recall") else [])
        r = anatid(*args)
        assert r.returncode == EXIT_OPEN, (command, r.stderr)
        assert "no such file" in r.stderr
    assert not (tmp_path / "absent.anatid").exists()


def test_sql_select_table_and_json(copy):
    path, ids = copy
    before = path.read_bytes()
    r = anatid("sql", path, "SELECT memory_id, content FROM anatid_memories ORDER BY memory_id")
    assert r.returncode == EXIT_OK, r.stderr
    assert "alice drinks green tea" in r.stdout and r.stdout.rstrip().endswith("(2 rows)")
    r = anatid("sql", path, "--json", stdin="SELECT memory_id, 1.5 AS x FROM anatid_memories ORDER BY memory_id")
    assert json.loads(r.stdout) == [{"memory_id": str(ids["tea"]), "x": 1.5},
                                    {"memory_id": str(ids["coffee"]), "x": 1.5}]
    assert path.read_bytes() == before          # opened read_only: the file is untouched


def test_sql_refuses_what_is_not_a_select(memory_file):
    path, _ = memory_file
    r = anatid("sql", path, "DELETE FROM anatid_memories")
    assert r.returncode == EXIT_USAGE and "refused a DELETE statement" in r.stderr


@pytest.mark.parametrize("query,expect", [
    ("SELECT 1", None), ("EXPLAIN SELECT 1", None), ("WITH a AS (SELECT 1) SELECT * FROM a", None),
    ("FROM range(3)", None), ("SHOW TABLES", None),
    ("DELETE FROM t", "refused a DELETE statement"), ("DROP TABLE t", "refused a DROP statement"),
    # (not PRAGMA database_list: DuckDB 1.5 rewrites it into a SELECT over a table function)
    ("PRAGMA enable_profiling", "refused a PRAGMA statement"), ("PRAGMA threads=1", "refused a SET"), ("CALL pragma_version()", "refused a CALL"),
    ("COPY t TO 'x.csv'", "refused a COPY"), ("ATTACH 'x.db'", "refused a ATTACH"),
    ("SELECT 1; SELECT 2", "exactly one statement"), ("", "exactly one statement, got 0"),
    ("SELEC 1", "cannot parse"),
])
def test_sql_classifier(query, expect):
    import duckdb
    from anatid.cli.cmd_sql import classify
    refused = classify(duckdb.connect(), query)
    assert refused is None if expect is None else expect in refused


def test_sql_writes_are_stopped_by_duckdb_too(copy):
    """A writable CTE classifies as SELECT; the read-only file and transaction stop it."""
    path, _ = copy
    r = anatid("sql", path, "WITH d AS (DELETE FROM anatid_memories RETURNING *) SELECT count(*) FROM d")
    # DuckDB 2.x parses it (then the read-only file and transaction stop it); 1.5 refuses to parse it
    assert (r.returncode == EXIT_PROBLEM and "read-only" in r.stderr) or \
           (r.returncode == EXIT_USAGE and "cannot parse" in r.stderr), r.stderr
    r = anatid("sql", path, "SELECT count(*) AS n FROM anatid_memories", "--json")
    assert json.loads(r.stdout) == [{"n": 2}]
    r = anatid("sql", path, "SELECT * FROM no_such_table")
    assert r.returncode == EXIT_PROBLEM and "no_such_table" in r.stderr


def test_recall_json_and_table(memory_file):
    path, ids = memory_file
    r = anatid("recall", path, "green tea", "--json", "--k", "5")
    assert r.returncode == EXIT_OK, r.stderr
    out = json.loads(r.stdout)
    assert out["hits"][0]["memory_id"] == str(ids["tea"])
    assert out["hits"][0]["sources"][0] == "text" and isinstance(out["hits"][0]["score"], float)
    r = anatid("recall", path, "coffee", "--seed", "Alice", "--k", "1")
    assert r.returncode == EXIT_OK
    assert str(ids["coffee"]) in r.stdout and "engine:" in r.stdout
    r = anatid("recall", path, "tea", "--as-of", "2000-01-01T00:00:00+00:00", "--json")
    assert json.loads(r.stdout)["hits"] == []
    r = anatid("recall", path, "tea", "--as-of", "2000-01-01")
    assert r.returncode == EXIT_USAGE and "as_of" in r.stderr


def test_maintain(copy):
    path, _ = copy
    with Anatid.open(str(path), read_only=True) as db:
        native = db.native.loaded
    r = anatid("maintain", path)
    if not hasattr(Anatid, "maintain_indexes"):
        assert r.returncode == EXIT_USAGE and "not available in this build" in r.stderr
    elif native:
        assert r.returncode == EXIT_OK, r.stderr
        assert r.stderr == ""        # no progress bar when stderr is not a terminal
    else:                            # an index that needs the extension says so, without a traceback
        if r.returncode == EXIT_OK:  # the others are built; the graph is reported skipped
            assert "load_failure" in r.stdout
        else:
            assert r.returncode in (EXIT_PROBLEM, EXIT_USAGE) and r.stderr.startswith("anatid maintain: ")
        assert "Traceback" not in r.stderr


def test_maintain_policy_flags_force_and_dry_run(copy):
    path, _ = copy
    with Anatid.open(str(path), read_only=True) as db:
        if not db.native.loaded:
            pytest.skip("needs the native extension (the graph index is built natively)")
    r = anatid("maintain", path, "--dry-run", "--json")
    assert r.returncode == EXIT_OK, r.stderr
    assert {(e["index"], e["reason"], e["would_build"]) for e in json.loads(r.stdout)} == {
        ("graph", "absent", True), ("text", "absent", True), ("vector", "absent", True)}
    r = anatid("maintain", path, "--json")
    assert r.returncode == EXIT_OK, r.stderr
    assert all(json.loads(r.stdout)[i]["tenants"] for i in ("graph", "text", "vector"))
    with Anatid.open(str(path)) as db:
        db.remember("carol likes tea", entities=["Carol"], embedding=[0, 1, 0, 0])
    # one journal row: not due under a 5-row policy, due under the default and a tiny ratio
    r = anatid("maintain", path, "--max-journal-rows", "5", "--max-age", "1h", "--json")
    assert r.returncode == EXIT_OK, r.stderr
    report = json.loads(r.stdout)
    assert not any(report[i]["tenants"] for i in ("graph", "text", "vector"))
    assert {s["reason"] for i in report for s in report[i]["skipped"]} == {"fresh"}   # under that policy
    r = anatid("maintain", path, "--dry-run", "--max-journal-ratio", "0.01", "--index", "text", "--json")
    assert [(e["index"], e["would_build"]) for e in json.loads(r.stdout)] == [("text", True)]
    r = anatid("maintain", path, "--force", "--index", "vector", "--json")
    report = json.loads(r.stdout)
    assert r.returncode == EXIT_OK and list(report) == ["vector"] and report["vector"]["tenants"]
    r = anatid("maintain", path)                     # the rest, as a table for people
    assert r.returncode == EXIT_OK and r.stdout.splitlines()[0].split()[0] == "index"


@pytest.mark.parametrize("flags, says", [(["--max-journal-rows", "0"], "max_journal_rows"),
                                         (["--max-journal-ratio", "-1"], "max_journal_ratio"),
                                         (["--max-age", "soon"], "not an age"),
                                         (["--index", "postings"], "invalid choice")])
def test_maintain_refuses_bad_flags_before_opening(copy, flags, says, capsys):
    from anatid.cli import main
    path, _ = copy
    try:
        code = main(["maintain", str(path), *flags])
    except SystemExit as exc:                # argparse's own refusals
        code = exc.code
    assert code == EXIT_USAGE and says in capsys.readouterr().err


def test_maintain_without_the_extension_exits_1(copy):
    """The graph index is built natively: still due afterwards, and the exit code says so."""
    path, _ = copy
    env = subprocess_env(ANATID_NATIVE="0")
    r = subprocess.run([sys.executable, "-m", "anatid", "maintain", str(path), "--json"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == EXIT_PROBLEM and "graph@0 (load_failure" in r.stderr, r.stderr
    report = json.loads(r.stdout)
    assert report["text"]["tenants"] and report["graph"]["skipped"] == [{"tenant": 0, "reason": "load_failure"}]


def test_maintain_report_rendering():
    """One row per index and tenant: its generation and counts, never a dict's repr."""
    from anatid.cli.cmd_maintain import render
    report = {"graph": {"tenants": [{"tenant": 0, "generation_id": 2 ** 60, "entities": 4, "edges": 2,
                                     "validated": "recounts"}], "skipped": [], "seconds": 0.2},
              "text": {"tenants": [], "skipped": [{"tenant": 0, "reason": "fresh"}]}}
    lines = render(report).splitlines()
    assert lines[0].split() == ["index", "tenant", "result", "generation", "counts"]
    assert lines[2].split() == ["graph", "0", "built", str(2 ** 60), "entities=4,", "edges=2"]
    assert lines[3].split() == ["text", "0", "skipped:", "fresh"]
    assert "{" not in "\n".join(lines) and "validated" not in "\n".join(lines)
    assert render(None) == "done"


def test_progress_bar_only_on_a_terminal():
    quiet = io.StringIO()
    with terminal_progress(stream=quiet) as p:
        p(1, 4, "graph")
    assert quiet.getvalue() == ""

    class Tty(io.StringIO):
        def isatty(self):
            return True

    loud = Tty()
    with terminal_progress(stream=loud) as p:
        p(1, 4, "graph")
        p(4, 4, "vector")
    assert "1/4" in loud.getvalue() or "4/4" in loud.getvalue()
    assert "vector" in loud.getvalue() and "\x1b[" in loud.getvalue()
    off = Tty()
    with terminal_progress(stream=off, enabled=False) as p:      # --quiet
        p(1, 4, "graph")
    assert off.getvalue() == ""


def test_render_helpers():
    assert jsonable({"id": 2 ** 60, "n": 3, "xs": (1, 2 ** 53)}) == {"id": str(2 ** 60), "n": 3,
                                                                       "xs": [1, str(2 ** 53)]}
    lines = table(["a", "n"], [["x", 1], ["yy", 10]]).splitlines()
    assert [line.split() for line in lines[:1] + lines[2:]] == [["a", "n"], ["x", "1"], ["yy", "10"]]
    assert lines[2].endswith(" 1") and lines[3].endswith("10")       # numbers right-aligned
    long = "advice " * 40
    wrapped = table(["check", "what it means"], [["c", long + "END"]], width=60)
    assert "END" in wrapped and "…" not in wrapped                    # wrapped, never cut
    assert "[bold]" in table(["x"], [["[bold]"]])                      # no markup interpretation


def test_tables_never_drop_a_character():
    """doctor's advice at every terminal width: wrapped or folded, every character still there."""
    from collections import Counter
    from anatid.cli._render import cell
    advice = "memory versions with confidence outside [0, 1] or NaN; run doctor, then anatid maintain --force."
    headers = ["severity", "check", "count", "sample ids", "what it means"]
    rows = [["error", "confidence_out_of_range", 4, [str(2 ** 60), str(2 ** 60 + 7)], advice],
            ["warning", "x", 12345, [], advice + " more words here"]]
    want = Counter("".join(headers + [cell(v) for r in rows for v in r]).replace(" ", ""))
    for width in range(30, 200):
        out = table(headers, rows, width=width)
        assert Counter(out.replace(" ", "").replace("\n", "").replace("─", "")) == want, width
    wide = table(headers, rows, width=120)
    assert "confidence_out_of_range" in wide                         # names stay whole when they fit


def test_every_command_is_documented():
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    ours = {"doctor", "stats", "maintain", "recall", "sql"}
    assert ours <= set(sub.choices)
    missing = [name for name in ours if not re.search(rf"^## `anatid {name}\b", doc, re.M)]
    assert missing == []
    for name in ours:                      # every option of ours appears in the docs
        for action in sub.choices[name]._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert flag in doc, (name, flag)


def test_stats_shows_index_health_when_the_build_has_it(memory_file, monkeypatch, capsys):
    import argparse
    from anatid.cli import cmd_stats
    path, _ = memory_file
    monkeypatch.setattr(Anatid, "index_health", lambda self: [
        {"index": "graph", "tenant": 0, "reason": "fresh"}, {"index": "text", "tenant": 0, "reason": "absent"}],
        raising=False)
    assert cmd_stats.run(argparse.Namespace(db=str(path), tenant=0, json=False)) == EXIT_OK
    assert "graph@0=fresh, text@0=absent" in capsys.readouterr().out
    assert cmd_stats.run(argparse.Namespace(db=str(path), tenant=0, json=True)) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["index_health"][1]["reason"] == "absent"
