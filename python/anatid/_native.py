"""Find, load and check the native DuckDB extension; the only module that does.

`connect()` owns connection creation because DuckDB accepts unsigned extensions only
when the database is opened with `allow_unsigned_extensions`, and refuses a second
same-process connection to a file with a different configuration. Whatever happens,
the caller gets a working connection and a `NativeStatus` saying whether the native
path is on and, if not, why and what to do about it. Nothing is ever INSTALLed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from anatid._version import __version__

EXTENSION_FILENAME = "anatid.duckdb_extension"
ENV_EXTENSION_PATH = "ANATID_EXTENSION_PATH"  # development override of the binary
ENV_NATIVE = "ANATID_NATIVE"  # "0" turns the native path off
# New files are written in the storage format of DuckDB 1.5, which every DuckDB we support
# (pyproject: duckdb>=1.5.5) and the duckdb-cli shell on PyPI read; DuckDB 2.x's own default
# would make a file the 1.5 shell refuses ("can only read versions between 64 and 68").
# Files that already exist keep the format they were written in.
STORAGE_COMPATIBILITY = "v1.5.0"
CONNECT_CONFIG = {"allow_unsigned_extensions": "true", "storage_compatibility_version": STORAGE_COMPATIBILITY}

_REBUILD_HINT = "reinstall with pip install . (needs cmake and a C++ compiler)"


@dataclass(frozen=True)
class NativeStatus:
    loaded: bool
    reason: str | None = None  # why not loaded, with the fix; None when loaded
    path: str | None = None  # the binary we used or looked for
    version: str | None = None  # what anatid_version() reported, if it ran


def extension_path() -> Path | None:
    """The extension binary to load, or None if there is none.

    `ANATID_EXTENSION_PATH` (a file) wins over the copy bundled next to this module.
    """
    candidate = _candidate_path()
    return candidate if candidate.is_file() else None


def _candidate_path() -> Path:
    override = os.environ.get(ENV_EXTENSION_PATH)
    if override:
        return Path(override).expanduser().resolve()
    return (Path(__file__).resolve().parent / EXTENSION_FILENAME)


def native_disabled() -> bool:
    return os.environ.get(ENV_NATIVE, "").strip() == "0"


def connect(path: str, read_only: bool = False) -> tuple[duckdb.DuckDBPyConnection, NativeStatus]:
    """Open `path` with the config anatid needs and load the extension if possible.

    Raises duckdb.Error only when the database itself cannot be opened.
    """
    try:
        con = duckdb.connect(path, read_only=read_only, config=dict(CONNECT_CONFIG))
    except duckdb.ConnectionException as exc:
        if "different configuration" not in str(exc):
            raise
        # Another connection in this process opened the file without our config.
        # Share its configuration and stay on the SQL path (unless it already loaded us).
        try:
            con = duckdb.connect(path, read_only=read_only)
        except duckdb.Error:
            raise exc from None
        status = _load(con)
        if not status.loaded:
            status = NativeStatus(
                False,
                f"{path!r} is already open in this process with a different configuration "
                "(without allow_unsigned_extensions), so the native extension cannot be loaded; "
                "close the other connection or open the file through anatid first",
                status.path,
                status.version,
            )
        return con, status
    return con, _load(con)


def _load(con: duckdb.DuckDBPyConnection) -> NativeStatus:
    candidate = _candidate_path()
    shown = str(candidate)
    if native_disabled():
        return NativeStatus(False, f"disabled by {ENV_NATIVE}=0 (unset it to use the native extension)", shown)
    if not candidate.is_file():
        where = f" ({ENV_EXTENSION_PATH} is set)" if os.environ.get(ENV_EXTENSION_PATH) else ""
        return NativeStatus(False, f"extension binary not found at {shown}{where}; {_REBUILD_HINT}", shown)

    literal = "'" + shown.replace("'", "''") + "'"  # LOAD takes no parameters
    try:
        con.execute(f"LOAD {literal}")  # a no-op if this database already loaded anatid
    except duckdb.Error as exc:
        if _loaded_version(con) is None:
            return NativeStatus(False, f"LOAD {literal} failed: {exc}; {_REBUILD_HINT}", shown)
    version = _loaded_version(con)
    if version is None:
        return NativeStatus(False, f"LOAD of {shown} succeeded but anatid_version() is missing; {_REBUILD_HINT}", shown)
    if version != __version__:
        return NativeStatus(
            False,
            f"extension at {shown} is version {version} but the anatid package is {__version__}; "
            f"rebuild it (pip install . or make build) or point {ENV_EXTENSION_PATH} at a matching binary",
            shown,
            version,
        )
    macro_status = con.execute("SELECT anatid_macro_status()").fetchone()[0]
    if macro_status != "ok":
        return NativeStatus(False, f"anatid macro catalog unavailable: {macro_status}", shown, version)
    return NativeStatus(True, None, shown, version)


def _loaded_version(con: duckdb.DuckDBPyConnection) -> str | None:
    """anatid_version() if some build of the extension is loaded in this database."""
    try:
        return con.execute("SELECT anatid_version()").fetchone()[0]
    except duckdb.CatalogException:
        return None
