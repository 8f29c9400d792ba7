"""The newcomer's path in the `duckdb` shell (duckdb-cli on PyPI, often an older DuckDB than
the Python package's): a file written by the package opens there, `anatid extension`
installs the bundled binary where `LOAD anatid` finds it by name, and both table macros
answer as they do in Python."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from anatid import Anatid, _native

from conftest import ROOT, subprocess_env
from test_cli_load import _cli, _unavailable

HYBRID = "SELECT memory_id FROM anatid.anatid_hybrid('engine notes', k := 5)"
TWO_HOP = "SELECT memory_id, hop FROM anatid.anatid_recall_2hop(0, ['Ada'])"


def _needs_cli() -> str:
    if _native.native_disabled():
        pytest.skip("native extension disabled by ANATID_NATIVE=0")
    if _native.extension_path() is None:
        _unavailable("native extension binary not built; pip install . builds it")
    cli = _cli()
    if cli is None:
        _unavailable("duckdb CLI not found; pip install duckdb-cli (part of the [test] extra)")
    return cli


def _anatid(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "anatid", "extension", *args], capture_output=True, text=True,
                          env=subprocess_env(HOME=str(home)), timeout=60)


def _shell(cli: str, db: Path, sql: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([cli, "-unsigned", "-csv", "-noheader", str(db), "-c", sql], capture_output=True,
                          text=True, env=subprocess_env(HOME=str(home)), timeout=60)


def _rows(text: str) -> list[tuple[int, ...]]:
    return [tuple(int(x) for x in line.split(",")) for line in text.split()]


@pytest.fixture
def memory_file(tmp_path):
    """A fresh file (no maintain_indexes()) and what Python answers on it."""
    path = tmp_path / "fresh.anatid"
    with Anatid.open(str(path)) as db:
        if not db.native.loaded:
            pytest.skip(db.native.reason)
        db.relate("Ada", "Babbage")
        db.relate("Babbage", "Menabrea")
        db.remember("Ada wrote the engine notes", ["Ada"])
        db.remember("Babbage built the difference engine", ["Babbage"])
        db.remember("Menabrea published the notes in French", ["Menabrea"], kind="event")
        db.remember("tea at four", ["Ada"])
        con = db.connection
        want = {"hybrid": con.execute(HYBRID).fetchall(), "2hop": con.execute(TWO_HOP).fetchall(),
                "py_2hop": [(h.memory_id, h.hop) for h in db.recall_2hop("Ada")]}
    assert len(want["2hop"]) == 4 and want["hybrid"]
    return path, want


def test_shell_opens_the_file_and_loads_anatid_by_name(tmp_path, memory_file):
    cli = _needs_cli()
    path, want = memory_file
    home = tmp_path / "home"
    home.mkdir()
    before = _shell(cli, path, "LOAD anatid;", home)
    assert before.returncode != 0 and "not found" in before.stderr, before.stderr   # not installed yet

    done = _anatid("--cli", cli, home=home)
    assert done.returncode == 0, done.stderr
    installed = Path(done.stdout.strip())
    version = subprocess.run([cli, "-csv", "-noheader", "-c", "SELECT library_version FROM pragma_version()"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    assert installed.is_file() and installed.parent.parent.name == version
    assert installed.is_relative_to(home / ".duckdb" / "extensions")
    assert installed.read_bytes() == _native.extension_path().read_bytes()

    got = _shell(cli, path, f"LOAD anatid; {HYBRID}; {TWO_HOP};", home)
    assert got.returncode == 0, got.stderr          # also: the shell reads the file's storage version
    rows = _rows(got.stdout)
    n = len(want["hybrid"])
    assert rows[:n] == want["hybrid"]
    assert rows[n:] == want["2hop"] == want["py_2hop"]


def test_dir_and_json(tmp_path, memory_file):
    cli = _needs_cli()
    path, want = memory_file
    target = tmp_path / "exts"
    done = _anatid("--cli", cli, "--dir", str(target), "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert Path(report["path"]).is_file() and Path(report["path"]).is_relative_to(target)
    assert report["load"].startswith("SET extension_directory")
    got = _shell(cli, path, f"{report['load']} {TWO_HOP};", tmp_path)
    assert got.returncode == 0, got.stderr
    assert _rows(got.stdout) == want["2hop"]


def test_default_target_is_this_process_duckdb(tmp_path):
    import duckdb
    if _native.extension_path() is None:
        pytest.skip("native extension binary not built")
    done = _anatid("--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["duckdb_version"] == "v" + duckdb.__version__
    assert Path(report["path"]) == (tmp_path / ".duckdb" / "extensions" / report["duckdb_version"]
                                    / report["platform"] / "anatid.duckdb_extension")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true", "home_directory": str(tmp_path)})
    con.execute("LOAD anatid")
    assert con.execute("SELECT anatid_version()").fetchone()[0] == _native.__version__


def test_bad_arguments_exit_2_and_write_nothing(tmp_path):
    if _native.extension_path() is None:
        pytest.skip("native extension binary not built")
    for args, said in ((["--duckdb-version", "latest"], "--duckdb-version"),
                       (["--cli", str(tmp_path / "no-such-duckdb")], "--cli")):
        done = _anatid(*args, home=tmp_path)
        assert done.returncode == 2 and said in done.stderr, done.stderr
    assert not (tmp_path / ".duckdb").exists()


def test_files_of_the_newer_storage_format_still_open(tmp_path, monkeypatch):
    """A file an older anatid wrote in DuckDB 2's own format opens, reads and writes as before."""
    import duckdb
    path = str(tmp_path / "older.anatid")
    monkeypatch.setattr(_native, "CONNECT_CONFIG", {"allow_unsigned_extensions": "true"})
    with Anatid.open(path) as db:
        first = db.remember("written by an older anatid", ["Ada"])
    monkeypatch.undo()
    with Anatid.open(path) as db:
        second = db.remember("and again", ["Ada"])
        assert [h.memory_id for h in db.recall_2hop("Ada")] == [second.memory_id, first.memory_id]
    con = duckdb.connect(path, config=dict(_native.CONNECT_CONFIG))
    assert con.execute("SELECT count(*) FROM anatid_memories").fetchone()[0] == 2
    con.close()


def test_extension_command_is_documented():
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert re.search(r"^## `anatid extension`", doc, re.M)
    for flag in ("--cli", "--dir", "--duckdb-version", "--json"):
        assert flag in doc.split("## `anatid extension`")[1], flag
