"""Shared fixtures and helpers of the Python suite.

Instants: tests pass explicit `now=` values from `at(seconds)`, aware UTC
datetimes in 2090 so that every write lies after the wall clock and the
current view (which reads at max(wall clock, last write)) sits exactly at the
last write. Files: every test gets its own file in tmp_path, so the per-file
write clock and id allocator start clean.
"""
from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import importlib.util
import os

ROOT = Path(__file__).resolve().parents[1]
# Test the installed package when there is one (CI installs it, binary included);
# a bare checkout falls back to the source tree (make build links the binary there).
if importlib.util.find_spec("anatid") is None and str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

import anatid  # noqa: E402
from anatid import Anatid  # noqa: E402

# The directory holding the anatid this run imports: the installed package's parent
# (site-packages) after `pip install .`, or ROOT/python in a `make build` checkout.
PACKAGE_PARENT = str(Path(anatid.__file__).resolve().parents[1])


def subprocess_env(**overrides: str) -> dict[str, str]:
    """os.environ for a child Python that imports the same anatid as this test run.

    Forcing PYTHONPATH to the source tree would test a package with no binary on a
    fresh clone (pip installs the binary beside the installed copy, not the sources)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PACKAGE_PARENT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(overrides)
    return env


def pytest_sessionstart(session):
    """In CI the native run must really be native: a silent fallback would test SQL twice."""
    if os.environ.get("CI") == "true" and os.environ.get("ANATID_NATIVE", "1") != "0":
        from anatid import _native
        con, status = _native.connect(":memory:")
        con.close()
        if not status.loaded:
            raise pytest.UsageError(f"CI expects the native extension, but it did not load: {status.reason}")

os.environ.setdefault("ANATID_SIMULATED_TIME", "1")  # at() lies in 2090: lift the now= bound (timeutil)
BASE = datetime(2090, 1, 1, tzinfo=timezone.utc)
DIM = 4


def at(seconds: float) -> datetime:
    """An aware UTC instant `seconds` after BASE."""
    return BASE + timedelta(seconds=seconds)


def vec(*head: float) -> list[float]:
    """A DIM-long embedding starting with `head`, zero-padded."""
    v = [float(x) for x in head] + [0.0] * (DIM - len(head))
    return v[:DIM]


def anatid_tables(con) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND table_name LIKE 'anatid\\_%' ESCAPE '\\' ORDER BY table_name").fetchall()]


def snapshot(db) -> dict[str, list[tuple]]:
    """Every row of every anatid_% table, in a total order: the file's content."""
    con = db.connection
    return {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in anatid_tables(con)}


def all_text(db) -> list[tuple[str, str, str]]:
    """(table, column, value) of every VARCHAR column of every table in the file."""
    con = db.connection
    cols = con.execute("""
        SELECT table_name, column_name FROM duckdb_columns()
        WHERE database_name = current_database() AND data_type = 'VARCHAR'
        ORDER BY table_name, column_name""").fetchall()
    out = []
    for table, column in cols:
        for (value,) in con.execute(f'SELECT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL').fetchall():
            out.append((table, column, value))
    return out


def open_db(path, tenant: int = 1, dim: int | None = DIM) -> Anatid:
    return Anatid.open(str(path), tenant=tenant, embedding_dim=dim)


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "test.anatid"


@pytest.fixture
def db(db_path):
    d = open_db(db_path)
    yield d
    d.close()
