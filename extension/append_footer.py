#!/usr/bin/env python3
"""Write a DuckDB loadable extension: the linked shared library plus the metadata footer.

DuckDB reads the last 512 bytes of an extension file before dlopen-ing it:
256 bytes of eight 32-byte, zero-padded ASCII fields stored in *reverse* order

    field 1  magic "4"            field 5  ABI type ("C_STRUCT")
    field 2  platform             field 6-8  unused (empty)
    field 3  C API version        (for C_STRUCT: the minimum C API, e.g. v1.2.0)
    field 4  extension version

followed by 256 signature bytes (zeros: the binary is unsigned, so DuckDB needs
allow_unsigned_extensions / `duckdb -unsigned`). DuckDB's own tooling also writes a
22-byte WebAssembly custom-section header first; native loads ignore it, and we
keep it so the layout matches DuckDB's byte for byte.

Input and output are separate files, so a rebuild never appends twice.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

FIELD = 32
SIGNATURE = 256
# WebAssembly custom section: id 0, LEB128 length 531, name length 16, name,
# LEB128 payload length 512.
WASM_HEADER = b"\x00\x93\x04\x10duckdb_signature\x80\x04"


def duckdb_platform() -> str:
    """DuckDB's platform string for this machine, e.g. linux_amd64 or osx_arm64."""
    system = {"linux": "linux", "darwin": "osx", "windows": "windows"}.get(
        platform.system().lower(), platform.system().lower()
    )
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return f"{system}_{arch}"


def field(text: str) -> bytes:
    raw = text.encode("ascii")
    if len(raw) > FIELD:
        raise ValueError(f"metadata field {text!r} is longer than {FIELD} bytes")
    return raw.ljust(FIELD, b"\x00")


def footer(platform_name: str, capi_version: str, extension_version: str, abi: str = "C_STRUCT") -> bytes:
    fields = ["4", platform_name, capi_version, extension_version, abi, "", "", ""]
    metadata = b"".join(field(f) for f in reversed(fields))
    assert len(metadata) == 8 * FIELD
    return WASM_HEADER + metadata + b"\x00" * SIGNATURE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", type=Path, help="linked shared library")
    parser.add_argument("output", type=Path, help="the .duckdb_extension file to write")
    parser.add_argument("--extension-version", required=True)
    parser.add_argument("--capi-version", default="v1.2.0")
    parser.add_argument("--platform", default="", help="default: this machine, e.g. linux_amd64")
    args = parser.parse_args(argv)

    data = args.library.read_bytes()
    tail = footer(args.platform or duckdb_platform(), args.capi_version, args.extension_version)
    tmp = args.output.with_name(args.output.name + ".tmp")
    tmp.write_bytes(data + tail)
    os.chmod(tmp, 0o755)
    os.replace(tmp, args.output)  # atomic: a half-written extension is never loadable
    return 0


if __name__ == "__main__":
    sys.exit(main())
