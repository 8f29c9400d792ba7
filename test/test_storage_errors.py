"""A write the disk refuses is a StorageError naming the file, not a retryable ConflictError.

Before: a full disk (here: a file-size limit, RLIMIT_FSIZE with SIGXFSZ ignored, so the
write fails with EFBIG instead of killing the process) surfaced as ConflictError("a
concurrent transaction changed the same rows", retryable=True), and atomic() re-ran the
whole callback eight times with backoff. Now the first failure raises StorageError, the
transaction is rolled back, and the file keeps every earlier write.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import duckdb
import pytest

import anatid
from anatid import Anatid, AnatidError, ConflictError, StorageError
from anatid.store import translate_duckdb_error

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32",
                                reason="RLIMIT_FSIZE and SIGXFSZ are POSIX")

# Runs in a child: the file-size limit applies to the whole process.
_CHILD = r"""
import json, os, resource, signal, sys
from anatid import Anatid
path = sys.argv[1]
out = {}
db = Anatid.open(path, tenant=1)
for i in range(3):
    db.remember(f"earlier fact {i}", entities=["ada"])
db.relate("ada", "bob")
db.connection.execute("CHECKPOINT")     # the earlier writes in the file, the WAL empty
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = os.path.getsize(path) + 64 * 1024   # no file may grow past this: the WAL of a big batch will
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
calls = []
def big(d):
    calls.append(1)
    d.remember_many([{"content": f"big {i} " + "lorem ipsum " * 70_000} for i in range(4)])
for verb, fn in (("atomic", lambda: db.atomic(big, base_delay=0)), ("remember_many", lambda: big(db))):
    try:
        fn()
        out[verb] = {"raised": None}
    except Exception as exc:
        out[verb] = {"raised": type(exc).__name__, "message": str(exc), "path": getattr(exc, "path", None),
                     "retryable": getattr(exc, "retryable", None)}
out["atomic_calls"] = len(calls) - 1   # the second call was the plain remember_many
db.remember("small write after the failure")  # fits under the limit: the handle still works
db.close()
print(json.dumps(out))
"""


def test_a_refused_write_is_a_storage_error_naming_the_file_and_the_file_stays_consistent(tmp_path):
    path = str(tmp_path / "full.anatid")
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(anatid.__file__))}
    run = subprocess.run([sys.executable, "-c", _CHILD, path], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    for verb in ("atomic", "remember_many"):
        got = out[verb]
        assert got["raised"] == "StorageError", got
        assert got["path"] == path and path in got["message"]
        assert "File too large" in got["message"] and "not retryable" in got["message"]
        assert got["retryable"] is None      # not a ConflictError at all
    assert out["atomic_calls"] == 1          # before: 9 calls (8 retries)

    # reopened without the limit: every earlier write, nothing of the refused batch, doctor clean
    with Anatid.open(path, tenant=1) as db:
        contents = sorted(r[0] for r in db.connection.execute(
            "SELECT content FROM anatid_memories WHERE tenant_id = 1").fetchall())
        assert contents == ["earlier fact 0", "earlier fact 1", "earlier fact 2", "small write after the failure"]
        assert not db.recall("lorem ipsum")
        assert len(db.context("bob", hops=1)) == 3                # ada's facts, through the relate edge
        report = db.doctor()
        assert report.ok, report.to_dict()


def test_only_write_write_conflicts_are_conflict_errors():
    """DuckDB reports both through TransactionException: the message tells them apart."""
    full = duckdb.TransactionException('TransactionContext Error: Failed to commit: Could not write file '
                                       '"/data/x.anatid.wal": No space left on device')
    io = duckdb.IOException('IO Error: Could not write file "/data/x.anatid": Input/output error')
    for exc in (full, io):
        mapped = translate_duckdb_error(exc, "/data/x.anatid")
        assert isinstance(mapped, StorageError) and not isinstance(mapped, ConflictError)
        assert mapped.path == "/data/x.anatid" and "/data/x.anatid" in str(mapped)
    for text in ("TransactionContext Error: Conflict on update!",
                 'TransactionContext Error: Failed to commit: PRIMARY KEY or UNIQUE constraint violation: '
                 'duplicate key "5"'):
        mapped = translate_duckdb_error(duckdb.TransactionException(text), "/data/x.anatid")
        assert isinstance(mapped, ConflictError) and mapped.retryable
    assert issubclass(StorageError, AnatidError) and "StorageError" in anatid.__all__


def test_a_file_that_cannot_be_opened_is_a_storage_error_naming_it(tmp_path):
    """Before: DuckDB's raw IOException."""
    path = str(tmp_path / "no such folder" / "x.anatid")
    with pytest.raises(StorageError) as err:
        Anatid.open(path)
    assert err.value.path == path and "could not open" in str(err.value) and "folder" in str(err.value)
