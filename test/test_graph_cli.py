"""anatid.anatid_recall_2hop from the `duckdb -unsigned` shell (duckdb-cli on PyPI), on a
file written by the Python package: the macro and its generation cache work outside Python."""
from __future__ import annotations

import subprocess

import pytest

import anatid
from anatid import _native

from test_cli_load import _cli, _unavailable


def test_recall_2hop_macro_in_the_cli(tmp_path):
    path = _native.extension_path()
    if path is None or _native.native_disabled():
        pytest.skip("needs the built extension")
    cli = _cli()
    if cli is None:
        _unavailable("duckdb CLI not found; pip install duckdb-cli (part of the [test] extra)")
    db_path = tmp_path / "cli.anatid"
    with anatid.Anatid.open(str(db_path)) as db:
        if not db.native.loaded:
            pytest.skip(db.native.reason)
        db.relate("Ada", "Babbage")
        first = db.remember("Ada wrote notes", ["Ada"])
        db.maintain_indexes()
        second = db.remember("Babbage built engines", ["Babbage"])  # journal only
        want = [(h.memory_id, h.hop) for h in db.recall_2hop("Ada")]
    assert want == [(first.memory_id, 0), (second.memory_id, 1)]
    # the CLI may be an older DuckDB than the wheel that wrote the file: files are written in
    # DuckDB 1.5's storage format (anatid._native.STORAGE_COMPATIBILITY), so it reads them
    literal = "'" + str(path).replace("'", "''") + "'"
    sql = f"LOAD {literal}; SELECT memory_id, hop FROM anatid.anatid_recall_2hop(0, ['ada']);"
    done = subprocess.run([cli, "-unsigned", "-csv", "-noheader", str(db_path), "-c", sql],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = [tuple(int(x) for x in line.split(",")) for line in done.stdout.split()]
    assert got == want
