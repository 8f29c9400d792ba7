"""The DuckDB metadata footer: layout of append_footer.py and of the shipped binary."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from anatid import _native
from anatid._version import __version__

SCRIPT = Path(__file__).resolve().parents[1] / "extension" / "append_footer.py"


def load_script():
    spec = importlib.util.spec_from_file_location("append_footer", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_fields(blob: bytes) -> list[str]:
    """The eight metadata fields in logical order (they are stored reversed)."""
    metadata = blob[-512:-256]
    stored = [metadata[i:i + 32].rstrip(b"\0").decode("ascii") for i in range(0, 256, 32)]
    return list(reversed(stored))


def test_footer_layout():
    footer = load_script().footer("linux_amd64", "v1.2.0", "v9.9.9")
    assert len(footer) == 22 + 512
    assert footer[-256:] == b"\0" * 256  # unsigned
    assert parse_fields(footer) == ["4", "linux_amd64", "v1.2.0", "v9.9.9", "C_STRUCT", "", "", ""]


def test_footer_rejects_long_fields():
    with pytest.raises(ValueError):
        load_script().footer("x" * 33, "v1.2.0", "v1")


def test_shipped_binary_footer():
    path = _native.extension_path()
    if path is None:
        pytest.skip("native extension binary not built; pip install . builds it")
    blob = path.read_bytes()
    assert blob[:4] == b"\x7fELF" or blob[:4] in (b"\xcf\xfa\xed\xfe", b"MZ\x90\x00")
    fields = parse_fields(blob)
    assert fields[0] == "4"
    assert fields[1] == load_script().duckdb_platform()
    assert fields[2:5] == ["v1.2.0", f"v{__version__}", "C_STRUCT"]
