"""The contract of docs/cli.md, checked on every command the parser knows.

Commands are discovered from the parser (anatid.cli.leaves), so a command added later
without `--json`, or one that prints a traceback or leaves a file behind, fails here. A
command whose positional argument has a name no command used before needs one line in
samples(); everything else is generic.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import subprocess_env

from anatid import Anatid
from anatid.cli import EXIT_OPEN, EXIT_USAGE, build_parser, leaves, main

ROOT = Path(__file__).resolve().parents[1]
HOOKS = {"anatid hook stop"}        # the agent hook's contract: never fails, prints nothing (exit 0 always)
ESC = "\x1b"

NOTES = {
    "Alice.md": "# Alice\n\nAlice drinks green tea every morning and works with [[Bob]].\n",
    "Bob.md": "# Bob\n\nBob prefers coffee. He leads [[Kestrel]] with [[Alice]].\n",
    "Kestrel.md": "# Kestrel\n\nKestrel ships on Fridays; [[Bob]] runs the releases.\n",
}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A small ingested vault (hashing embedder: no model) with a gold file and a turn-free ledger."""
    from anatid.vault import ingest_vault
    root = tmp_path_factory.mktemp("contract")
    vault = root / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    db_path = root / "small.anatid"
    with Anatid.open(str(db_path)) as db:
        ingest_vault(db, str(vault), embedder="hashing")
        native = db.native.loaded
    from anatid.vault.gold import build_gold, write_gold
    gold = root / "gold.jsonl"
    write_gold(build_gold(str(vault), n_per_class=2, seed=0), str(gold))
    return {"root": root, "vault": vault, "db": db_path, "gold": gold, "native": native}


def commands() -> list[argparse.ArgumentParser]:
    return leaves(build_parser())


def words(parser) -> list[str]:
    return parser.prog.split()[1:]          # "anatid eval run" -> ["eval", "run"]


def positionals(parser):
    return [a for a in parser._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]


def option(parser, dest):
    return next((a for a in parser._actions if a.option_strings and a.dest == dest), None)


def samples(work: Path, small) -> dict:
    """A value for each positional, by its dest (SAMPLES_BY_PROG where one command reads it differently)."""
    return {
        "db": str(work / "small.anatid"), "vault": str(small["vault"]), "query": "tea", "question": "green tea",
        "entity": "Alice", "out": str(work / "out"),
    }


SAMPLES_BY_PROG = {"anatid sql": {"query": "SELECT count(*) AS n FROM anatid_memories"}}


EXTRA = {   # what a command needs beyond its positionals to succeed on the small file
    "anatid ingest": lambda w, s: ["--db", str(w / "new.anatid"), "--embedder", "hashing"],
    "anatid demo": lambda w, s: ["--db", str(w / "demo.anatid")],
    "anatid show": lambda w, s: ["-o", str(w / "alice.html")],
    "anatid eval run": lambda w, s: ["--gold", str(s["gold"]), "--modes", "vector", "--no-record"],
    "anatid eval build-gold": lambda w, s: ["-o", str(w / "gold-out.jsonl"), "--n-per-class", "1"],
    "anatid eval synth": lambda w, s: ["--notes", "20"],
    "anatid eval convo": lambda w, s: ["--conversations", "1"],
    "anatid hook stop": lambda w, s: ["--db", str(w / "turns.anatid")],
}


def argv_for(parser, work: Path, small, **override) -> list[str]:
    values = {**samples(work, small), **SAMPLES_BY_PROG.get(parser.prog, {}), **override}
    argv = words(parser)
    for action in positionals(parser):
        if action.dest not in values:
            pytest.fail(f"{parser.prog}: no sample for the positional {action.dest!r}; add one to samples()")
        argv.append(values[action.dest])
    return argv + EXTRA.get(parser.prog, lambda w, s: [])(work, small)


def workdir(tmp_path, small) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(small["db"], work / "small.anatid")
    return work


def listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def clean_env() -> dict:
    env = {k: v for k, v in subprocess_env().items()     # the anatid this run imports, binary included
           if k not in ("FORCE_COLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")}
    return env


def anatid(argv, cwd, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "anatid", *argv], cwd=cwd, input=stdin, capture_output=True,
                          text=True, env=clean_env(), timeout=120)


def in_process(argv, capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:               # argparse's refusals
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(prog: str, err: str) -> None:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(("anatid:", f"{prog}:", f"{prog} ")), err   # a sub-step may name itself


# -- the parser -------------------------------------------------------------------------------------
def test_every_command_takes_json():
    missing = [p.prog for p in commands() if option(p, "json") is None]
    assert missing == []
    assert {"anatid stats", "anatid ingest", "anatid ask", "anatid turns", "anatid demo", "anatid show",
            "anatid eval run"} <= {p.prog for p in commands()}


# -- success: one JSON document, clean pipes ---------------------------------------------------------
@pytest.mark.parametrize("prog", [p.prog for p in commands()])
def test_json_on_the_small_file(prog, small, tmp_path):
    parser = next(p for p in commands() if p.prog == prog)
    work = workdir(tmp_path, small)
    r = anatid([*argv_for(parser, work, small), "--json"], cwd=work, stdin="{}")
    assert "Traceback" not in r.stderr, r.stderr
    if not (prog == "anatid maintain" and not small["native"]):   # the graph index needs the extension
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""               # pipes get no progress bar
    json.loads(r.stdout)                    # exactly one JSON document
    assert ESC not in r.stdout and ESC not in r.stderr


def test_people_output_has_no_escape_codes_in_a_pipe(small, tmp_path):
    work = workdir(tmp_path, small)
    for argv in (["doctor", work / "small.anatid"], ["stats", work / "small.anatid"],
                 ["maintain", work / "small.anatid"], ["ingest", small["vault"], "--db", work / "n.anatid",
                                                      "--embedder", "hashing"]):
        r = anatid(list(map(str, argv)), cwd=work)
        assert ESC not in r.stdout and ESC not in r.stderr and "Traceback" not in r.stderr, argv
        assert r.stdout.strip(), argv


# -- failure: exit codes, one line, nothing created ---------------------------------------------------
@pytest.mark.parametrize("prog", [p.prog for p in commands() if p.prog not in HOOKS])
def test_missing_memory_file_exits_3_and_creates_nothing(prog, small, tmp_path, capsys, monkeypatch):
    parser = next(p for p in commands() if p.prog == prog)
    work = workdir(tmp_path, small)
    monkeypatch.chdir(work)
    if any(a.dest == "db" for a in positionals(parser)):
        absent = work / "absent.anatid"      # a file the command reads
        argv = argv_for(parser, work, small, db=str(absent))
    elif option(parser, "db") is not None:
        absent = work / "no-such-folder" / "new.anatid"     # a file the command would create
        argv = [*argv_for(parser, work, small), "--db", str(absent)]
    else:
        pytest.skip(f"{prog} opens no memory file")
    before = listing(work)
    code, out, err = in_process(argv, capsys)
    assert code == EXIT_OPEN, err
    one_error_line(prog, err)
    assert out == ""
    assert listing(work) == before


@pytest.mark.parametrize("prog", [p.prog for p in commands()])
def test_bad_arguments_exit_2_and_create_nothing(prog, small, tmp_path, capsys, monkeypatch):
    parser = next(p for p in commands() if p.prog == prog)
    work = workdir(tmp_path, small)
    monkeypatch.chdir(work)
    before = listing(work)
    code, out, err = in_process([*argv_for(parser, work, small), "--no-such-option"], capsys)
    assert code == EXIT_USAGE and out == ""
    one_error_line(prog, err)
    ints = [a for a in parser._actions if a.option_strings and a.type is int]
    for action in ints:                     # every integer option refuses a word
        code, out, err = in_process([*argv_for(parser, work, small), action.option_strings[0], "many"], capsys)
        assert code == EXIT_USAGE and out == "", (action.option_strings, err)
        one_error_line(prog, err)
    assert listing(work) == before


def test_user_errors_name_the_fix(small, tmp_path, capsys, monkeypatch):
    work = workdir(tmp_path, small)
    monkeypatch.chdir(work)
    db = str(work / "small.anatid")
    cases = [
        (["stats", "absent.anatid"], EXIT_OPEN, "no such file"),
        (["ingest", "no-vault", "--db", "new.anatid", "--embedder", "hashing"], EXIT_USAGE, "no such folder"),
        (["ingest", str(small["vault"]), "--db", "new.anatid", "--embedder", "nope"], EXIT_USAGE, "unknown embedder"),
        (["recall", db, "tea", "--k", "0"], EXIT_USAGE, "k"),
        (["recall", db, "tea", "--as-of", "2000-01-01"], EXIT_USAGE, "as_of"),
        (["ask", db, "tea", "-k", "0"], EXIT_USAGE, "-k 0"),
        (["sql", db, "DELETE FROM anatid_memories"], EXIT_USAGE, "refused a DELETE"),
        (["show", db, "Alice", "-o", "x.png"], EXIT_USAGE, ".html or .svg"),
        (["show", db, "Alice", "-o", "no-such-folder/x.html"], EXIT_USAGE, "does not exist"),
        (["show", db, "Alice", "-o", "-", "--json"], EXIT_USAGE, "--json"),
        (["eval", "run", db, "--gold", "absent.jsonl"], EXIT_USAGE, "build-gold"),
        (["demo", "--db", "no-such-folder/demo.anatid"], EXIT_OPEN, "does not exist"),
    ]
    before = listing(work)
    for argv, expect, says in cases:
        code, out, err = in_process(argv, capsys)
        assert code == expect, (argv, err)
        one_error_line(f"anatid {argv[0]}", err)
        assert says in err, (argv, err)
    assert listing(work) == before


def test_a_failed_ingest_leaves_no_memory_file(small, tmp_path, monkeypatch, capsys):
    """An ingest that fails after creating its file removes it (here: the embedder dies mid-way)."""
    from anatid.vault import embed
    work = workdir(tmp_path, small)

    def broken(self, texts):
        raise ValueError("the embedder broke")
    monkeypatch.setattr(embed.HashingEmbedder, "embed", broken)
    code, out, err = in_process(["ingest", str(small["vault"]), "--db", str(work / "new.anatid"),
                                 "--embedder", "hashing"], capsys)
    assert code == EXIT_USAGE and "the embedder broke" in err
    assert not (work / "new.anatid").exists() and not (work / "new.anatid.wal").exists()


@pytest.mark.parametrize("argv", [["stats"], ["ask", "q"], ["turns"]])
def test_missing_file_in_a_real_process(argv, tmp_path):
    r = anatid([argv[0], str(tmp_path / "absent.anatid"), *argv[1:]], cwd=tmp_path)
    assert r.returncode == EXIT_OPEN and r.stdout == ""
    one_error_line(f"anatid {argv[0]}", r.stderr)
    assert list(tmp_path.iterdir()) == []


def test_anatid_mcp_missing_file_exits_3(tmp_path):
    env = clean_env()
    for argv, absent in ((["--db", str(tmp_path / "absent.anatid"), "--read-only"], tmp_path / "absent.anatid"),
                         (["--db", str(tmp_path / "nodir" / "m.anatid")], tmp_path / "nodir")):
        r = subprocess.run([sys.executable, "-m", "anatid.integrations.mcp", *argv], capture_output=True, text=True,
                           env=env, timeout=60, stdin=subprocess.DEVNULL)
        assert r.returncode == EXIT_OPEN, r.stderr
        one_error_line("anatid-mcp", r.stderr)
        assert not absent.exists()
    r = subprocess.run([sys.executable, "-m", "anatid.integrations.mcp", "--tenant", "x", "--db", "m.anatid"],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == EXIT_USAGE and list(tmp_path.iterdir()) == []
    one_error_line("anatid-mcp", r.stderr)


# -- progress: on a terminal only ---------------------------------------------------------------------
def test_progress_only_on_a_terminal(small, tmp_path):
    import pty
    work = workdir(tmp_path, small)
    def argv(name):
        return [sys.executable, "-m", "anatid", "ingest", str(small["vault"]), "--db", str(work / name),
                "--embedder", "hashing"]
    piped = subprocess.run(argv("p.anatid"), capture_output=True, text=True, env=clean_env(), timeout=120)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    master, slave = pty.openpty()
    try:
        tty = subprocess.run(argv("q.anatid"), stdout=subprocess.PIPE, stderr=slave, env=clean_env(), timeout=120)
        os.close(slave)
        drawn = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:                 # the terminal closed
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(master)
    assert tty.returncode == 0
    text = drawn.decode("utf-8", "replace")
    assert ESC in text and "read" in text and "write" in text     # rich's bar, phase by phase
    assert ESC.encode() not in tty.stdout and b"3 notes" in tty.stdout


def test_ingest_progress_is_a_callback_checked_before_any_write(small, tmp_path):
    """ingest_vault reports each phase to progress(done, total, label); it draws nothing itself."""
    from anatid.errors import ValidationError
    from anatid.vault import ingest_vault
    path = tmp_path / "p.anatid"
    with Anatid.open(str(path)) as db:
        tables = db.connection.execute("SELECT count(*) FROM information_schema.tables").fetchone()[0]
        with pytest.raises(ValidationError, match="progress"):
            ingest_vault(db, str(small["vault"]), embedder="hashing", progress=True)
        assert db.connection.execute("SELECT count(*) FROM information_schema.tables").fetchone()[0] == tables
        seen = []
        ingest_vault(db, str(small["vault"]), embedder="hashing",
                     progress=lambda done, total, label: seen.append((label, done, total)))
    assert [s for s in seen if s[1] == s[2]] == [("read", 3, 3), ("embed", 3, 3), ("write", 3, 3)]
