"""`anatid extension`: copy the bundled binary where DuckDB's `LOAD anatid` finds it.

DuckDB loads an extension by name from
`<extension directory>/v<version>/<platform>/<name>.duckdb_extension`, the extension
directory being `~/.duckdb/extensions` unless `SET extension_directory` says otherwise.
The Python package and the `duckdb` shell may be different DuckDB versions (duckdb 2.x
from PyPI, duckdb-cli 1.5.x), so the version and platform come from the DuckDB named:
this process's by default, a shell's with `--cli`, or `--duckdb-version`. Nothing is
downloaded: this is DuckDB's `INSTALL` done from the package's own file.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE

# DuckDB names the version directory after a release tag, and after the source id otherwise.
_RELEASE = re.compile(r"v?(\d+\.\d+\.\d+)")
_PROBE = "SELECT library_version, source_id, (SELECT platform FROM pragma_platform()) FROM pragma_version()"


class _Refused(Exception):
    """Bad usage (exit 2); the message names the fix."""


def register(sub) -> None:
    p = sub.add_parser("extension", help="install the bundled extension so DuckDB's `LOAD anatid` finds it")
    p.add_argument("--dir", help="extension directory (DuckDB's extension_directory); default ~/.duckdb/extensions")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--cli", nargs="?", const="", metavar="PATH",
                        help="install for this duckdb shell's version and platform "
                             "(no PATH: the duckdb beside this Python, else on PATH)")
    target.add_argument("--duckdb-version", metavar="VERSION", help="install for this DuckDB release, e.g. 1.5.6")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args) -> int:
    from .. import _native
    source = _native.extension_path()
    if source is None:
        return _fail(f"no extension binary at {_native._candidate_path()}; {_native._REBUILD_HINT}", EXIT_PROBLEM)
    try:
        version, platform = _target(args)
        root = Path(args.dir).expanduser().resolve() if args.dir else _default_root()
    except _Refused as exc:
        return _fail(str(exc), EXIT_USAGE)
    dest = root / version / platform / _native.EXTENSION_FILENAME
    try:
        _copy(source, dest)
    except OSError as exc:
        return _fail(f"cannot write {dest}: {exc.strerror or exc}; pass --dir to a writable directory", EXIT_PROBLEM)
    literal = "'" + str(root).replace("'", "''") + "'"
    load = f"SET extension_directory = {literal}; LOAD anatid;" if args.dir else "LOAD anatid;"
    if args.json:
        print(json.dumps({"path": str(dest), "duckdb_version": version, "platform": platform,
                          "source": str(source), "load": load}, indent=2))
    else:
        print(dest)
        print(f"in a duckdb {version} shell started with -unsigned: {load}", file=sys.stderr)
    return EXIT_OK


def _target(args) -> tuple[str, str]:
    """(version directory, platform) of the DuckDB the user named."""
    if args.duckdb_version is not None:
        match = _RELEASE.fullmatch(args.duckdb_version.strip())
        if not match:
            raise _Refused(f"--duckdb-version {args.duckdb_version!r} is not a release like 1.5.6")
        return f"v{match.group(1)}", _ask_this_duckdb()[2]
    if args.cli is not None:
        return _version_dir(*_probe_cli(args.cli or _find_cli()))
    return _version_dir(*_ask_this_duckdb())


def _ask_this_duckdb() -> tuple[str, str, str]:
    import duckdb
    con = duckdb.connect()
    try:
        return con.execute(_PROBE).fetchone()
    finally:
        con.close()


def _version_dir(library_version: str, source_id: str, platform: str) -> tuple[str, str]:
    match = _RELEASE.fullmatch(library_version)
    return (f"v{match.group(1)}" if match else source_id), platform


def _find_cli() -> str:
    beside = Path(sys.executable).parent / "duckdb"
    found = str(beside) if beside.is_file() else shutil.which("duckdb")
    if not found:
        raise _Refused("no duckdb shell beside this Python or on PATH; pip install duckdb-cli or pass --cli PATH")
    return found


def _probe_cli(cli: str) -> tuple[str, str, str]:
    try:
        done = subprocess.run([cli, "-csv", "-noheader", "-c", _PROBE], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise _Refused(f"cannot run --cli {cli}: {exc.strerror or exc}") from None
    row = done.stdout.strip().split(",")
    if done.returncode != 0 or len(row) != 3:
        raise _Refused(f"--cli {cli} did not answer as a duckdb shell: {(done.stderr or done.stdout).strip()}")
    return row[0], row[1], row[2]


def _default_root() -> Path:
    # DuckDB's default: ~/.duckdb/extensions, ~ being $HOME (home_directory is unset by default).
    return Path(os.path.expanduser("~")) / ".duckdb" / "extensions"


def _copy(source: Path, dest: Path) -> None:
    """Replace `dest` whole: a shell loading it meanwhile sees the old file or the new one."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".anatid-")
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fail(message: str, code: int) -> int:
    print(f"anatid: {message}", file=sys.stderr)
    return code
