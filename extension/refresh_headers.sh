#!/usr/bin/env bash
# Re-vendor DuckDB's C API headers from the PyPI source distribution.
#
# We compile against the OLDEST DuckDB we support: newer headers silently admit
# functions that older engines only had as unstable. Bump DUCKDB_VERSION here and
# in the Makefile together.
#
# Usage: extension/refresh_headers.sh [duckdb-version]
set -euo pipefail

DUCKDB_VERSION="${1:-1.5.5}"
here="$(cd "$(dirname "$0")" && pwd)"
dest="$here/include"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# --no-binary duckdb (not :all:): otherwise pip compiles CMake from source.
python3 -m pip download --quiet --no-deps --no-binary duckdb \
    "duckdb==${DUCKDB_VERSION}" -d "$tmp"

sdist="$tmp/duckdb-${DUCKDB_VERSION}.tar.gz"
root="duckdb-${DUCKDB_VERSION}/external/duckdb"
tar -xzf "$sdist" -C "$tmp" \
    "$root/src/include/duckdb.h" \
    "$root/src/include/duckdb_extension.h" \
    "$root/LICENSE"

mkdir -p "$dest"
cp "$tmp/$root/src/include/duckdb.h" "$dest/duckdb.h"
cp "$tmp/$root/src/include/duckdb_extension.h" "$dest/duckdb_extension.h"
{
    echo "duckdb.h and duckdb_extension.h in this directory are copied unchanged from"
    echo "DuckDB ${DUCKDB_VERSION} (PyPI sdist duckdb-${DUCKDB_VERSION}.tar.gz,"
    echo "external/duckdb/src/include/) by extension/refresh_headers.sh."
    echo "They are distributed under DuckDB's licence, reproduced below."
    echo
    cat "$tmp/$root/LICENSE"
    echo
} > "$dest/DUCKDB_LICENSE"

echo "vendored DuckDB ${DUCKDB_VERSION} headers into $dest"
