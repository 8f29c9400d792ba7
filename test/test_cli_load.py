"""The same binary loads into the `duckdb` command-line shell (duckdb-cli on PyPI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from anatid import _native
from anatid._version import __version__


def _cli() -> str | None:
    beside_python = Path(sys.executable).parent / "duckdb"
    if beside_python.is_file():
        return str(beside_python)
    return shutil.which("duckdb")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true, so this is an error, not a skip)")
    pytest.skip(reason)


def test_cli_loads_extension():
    if _native.native_disabled():
        pytest.skip("native extension disabled by ANATID_NATIVE=0")
    path = _native.extension_path()
    if path is None:
        _unavailable("native extension binary not built; pip install . builds it")
    cli = _cli()
    if cli is None:
        _unavailable("duckdb CLI not found; pip install duckdb-cli (part of the [test] extra)")
    literal = "'" + str(path).replace("'", "''") + "'"
    sql = (f"LOAD {literal}; SELECT anatid_version(), anatid_macro_status(); "
           "SELECT count(*) FROM anatid.anatid_functions();")
    done = subprocess.run([cli, "-unsigned", "-csv", "-noheader", "-c", sql],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert lines[0] == f"{__version__},ok", done.stdout
    assert int(lines[1]) >= 3, done.stdout


def test_cli_refuses_without_unsigned():
    """Guards the reason we own connection creation: unsigned needs opting in."""
    path = _native.extension_path()
    cli = _cli()
    if path is None or cli is None or _native.native_disabled():
        pytest.skip("needs the built extension and the duckdb CLI")
    done = subprocess.run([cli, "-c", f"LOAD '{path}';"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "unsigned" in (done.stderr + done.stdout).lower()
