"""Pins the exact SQL surface the native extension adds.

Adding a function or macro must update EXPECTED here (and the docs): the public
surface is reviewed, never grown by accident.
"""

from __future__ import annotations

import duckdb
import pytest

from anatid import _native
from anatid._version import __version__

# (name, where): "system" for native functions, "anatid" for macros in its catalog.
EXPECTED = {
    ("anatid_version", "system"),
    ("anatid_macro_status", "system"),
    ("anatid_functions", "anatid"),
    ("anatid_graph_build", "system"),
    ("anatid_graph_recall", "system"),
    ("anatid_graph_load", "system"),
    ("anatid_graph_resident", "system"),
    ("anatid_graph_cache_stats", "system"),
    ("anatid_graph_request", "system"),
    ("anatid_recall_2hop", "anatid"),
    ("anatid_hybrid_rank", "system"),
    ("anatid_hybrid_cached", "system"),
    ("anatid_hybrid_recall", "system"),
    ("anatid_text_content", "system"),
    ("anatid_hybrid", "anatid"),
    ("anatid_ann_build", "system"),
    ("anatid_ann_load", "system"),
    ("anatid_ann_resident", "system"),
    ("anatid_ann_search", "system"),
    ("anatid_ann_info", "system"),
}

SURFACE_SQL = """
SELECT DISTINCT function_name, database_name
FROM duckdb_functions()
WHERE function_name LIKE 'anatid\\_%' ESCAPE '\\' OR database_name = 'anatid'
"""


@pytest.fixture(scope="module")
def extension():
    if _native.native_disabled():
        pytest.skip("native extension disabled by ANATID_NATIVE=0")
    path = _native.extension_path()
    if path is None:
        pytest.skip("native extension binary not built; pip install . builds it")
    return path


def test_native_loads_and_reports_version(extension):
    con, status = _native.connect(":memory:")
    assert status.loaded, status.reason
    assert status.reason is None
    assert status.version == __version__
    assert status.path == str(extension)


def test_native_surface_is_exactly_expected(extension):
    con = duckdb.connect(":memory:", config=dict(_native.CONNECT_CONFIG))
    before = set(con.execute(SURFACE_SQL).fetchall())
    con.execute(f"LOAD '{extension}'")
    after = set(con.execute(SURFACE_SQL).fetchall())
    assert before == set()
    assert after == EXPECTED
    # The extension's own list agrees with the catalog.
    listed = {name for (name,) in con.execute("SELECT name FROM anatid.anatid_functions()").fetchall()}
    assert listed == {name for name, _ in EXPECTED}
    assert all(name.startswith("anatid_") for name in listed)


def test_macros_are_visible_from_cursors(extension):
    con, status = _native.connect(":memory:")
    assert status.loaded, status.reason
    cur = con.cursor()
    assert cur.execute("SELECT count(*) FROM anatid.anatid_functions()").fetchone()[0] == len(EXPECTED)


def test_native_status_is_frozen_and_complete():
    status = _native.NativeStatus(False, "why", None, None)
    with pytest.raises(AttributeError):
        status.loaded = True  # type: ignore[misc]


def test_disabled_by_env(monkeypatch):
    monkeypatch.setenv("ANATID_NATIVE", "0")
    con, status = _native.connect(":memory:")
    assert not status.loaded
    assert "ANATID_NATIVE=0" in status.reason
    # Same configuration either way, so toggling never collides with open handles.
    assert con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()[0] is True


def test_missing_binary_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.delenv("ANATID_NATIVE", raising=False)
    missing = tmp_path / "nope" / "anatid.duckdb_extension"
    monkeypatch.setenv("ANATID_EXTENSION_PATH", str(missing))
    assert _native.extension_path() is None
    con, status = _native.connect(":memory:")
    assert not status.loaded
    assert str(missing) in status.reason and "pip install ." in status.reason


def test_load_error_is_reported(monkeypatch, tmp_path):
    monkeypatch.delenv("ANATID_NATIVE", raising=False)
    bogus = tmp_path / "anatid.duckdb_extension"
    bogus.write_bytes(b"not an extension")
    monkeypatch.setenv("ANATID_EXTENSION_PATH", str(bogus))
    con, status = _native.connect(":memory:")
    assert not status.loaded
    assert status.reason.startswith("LOAD ") and "failed" in status.reason
    assert con.execute("SELECT 42").fetchone()[0] == 42  # the connection still works


def test_catalog_collision_is_reported(extension, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    con, status = _native.connect(str(tmp_path / "anatid.duckdb"))
    try:
        assert not status.loaded
        assert "already attached" in status.reason
        assert status.version == __version__
    finally:
        con.close()


def test_other_config_in_process_is_reported(extension, tmp_path):
    path = str(tmp_path / "memory.duckdb")
    plain = duckdb.connect(path)
    try:
        con, status = _native.connect(path)
        assert not status.loaded
        assert "different configuration" in status.reason
        con.close()
    finally:
        plain.close()
