"""A file written by a newer schema is refused, by name, and left untouched."""
from __future__ import annotations

import hashlib

import duckdb
import pytest

from anatid import Anatid, SchemaVersionError
from anatid.schema import SCHEMA_VERSION

from conftest import at, open_db


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _bump(path, version) -> None:
    con = duckdb.connect(str(path))
    con.execute("UPDATE anatid_meta SET value = ? WHERE key = 'schema_version'", [str(version)])
    con.execute("CHECKPOINT")
    con.close()


def test_new_file_stores_the_current_version(db):
    assert db.connection.execute("SELECT value FROM anatid_meta WHERE key = 'schema_version'").fetchone() == \
        (str(SCHEMA_VERSION),)
    assert db.stats()["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize("read_only", [False, True])
def test_newer_schema_is_refused_and_file_unchanged(db_path, read_only):
    with open_db(db_path) as db:
        db.remember("kept", entities=["A"], now=at(1))
    newer = SCHEMA_VERSION + 41
    _bump(db_path, newer)
    before = _digest(db_path)
    with pytest.raises(SchemaVersionError) as info:
        Anatid.open(str(db_path), tenant=1, read_only=read_only)
    msg = str(info.value)
    assert str(newer) in msg and str(SCHEMA_VERSION) in msg and "upgrade" in msg
    assert _digest(db_path) == before
    # the refused open let go of the file: another configuration can open it at once
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("SELECT value FROM anatid_meta WHERE key = 'schema_version'").fetchone() == (str(newer),)
    assert con.execute("SELECT content FROM anatid_memories").fetchall() == [("kept",)]
    con.close()
    assert _digest(db_path) == before


def test_same_version_reopens(db_path):
    with open_db(db_path) as db:
        m = db.remember("kept", now=at(1))
    with open_db(db_path) as db:
        assert db.get(m.memory_id).content == "kept"
        assert db.stats()["schema_version"] == SCHEMA_VERSION


def test_read_only_open_of_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(SchemaVersionError):
        Anatid.open(str(path), read_only=True)
