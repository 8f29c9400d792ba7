"""The contract every `anatid` command keeps (docs/cli.md), in one place.

* Exit codes: one table (EXIT_*), the same for every command and for `anatid-mcp`.
* Errors: a user error never shows a traceback. A command raises CliError (or lets an
  anatid error through); `run_command` prints one line on stderr, `anatid CMD: problem
  (fix)`, and returns the documented code. On exit 2 or 3 stdout stays empty.
* Output: `--json` (add_json) prints exactly one JSON document on stdout (print_json),
  with every integer outside +-2^53 (every anatid id) as a decimal string.
* Files: a failed command creates nothing. open_db checks that the file exists before
  DuckDB opens it (DuckDB creates what it cannot find); creating() removes a file the
  command created when the command then fails.
"""
from __future__ import annotations

import json
import math
import os
import sys
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

EXIT_OK = 0        # success (doctor: no errors)
EXIT_PROBLEM = 1   # the command ran and found a problem (doctor errors, a failed query, an unbuilt index)
EXIT_USAGE = 2     # bad usage: unknown option, invalid argument, missing input other than the memory file
EXIT_OPEN = 3      # the memory file could not be opened: absent, locked by another process, newer schema
EXIT_INTERRUPTED = 130   # Ctrl-C: the work in progress rolled back

_SAFE_INT = 2 ** 53


# -- errors -----------------------------------------------------------------------------------------
class CliError(Exception):
    """A user error: `problem` says what is wrong, `fix` what to do; `code` is the exit code."""

    code = EXIT_PROBLEM

    def __init__(self, problem: str, fix: str | None = None, *, code: int | None = None):
        super().__init__(problem)
        self.problem, self.fix = problem, fix
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.problem + (f" ({self.fix})" if self.fix else "")


class UsageError(CliError):
    """Exit 2: an argument, option or input the command cannot use."""
    code = EXIT_USAGE


class OpenError(CliError):
    """Exit 3: the memory file could not be opened."""
    code = EXIT_OPEN


def as_cli_error(exc: BaseException) -> CliError | None:
    """The CliError a user-facing exception stands for, or None for a bug (which keeps its traceback)."""
    from ..errors import AnatidError, ConflictError, DatabaseLocked, SchemaVersionError
    if isinstance(exc, CliError):
        return exc
    if isinstance(exc, (DatabaseLocked, SchemaVersionError)):
        return OpenError(str(exc))
    if isinstance(exc, ConflictError):
        return CliError(str(exc), "retry when the other writer is done" if exc.retryable else None)
    if isinstance(exc, AnatidError):
        return UsageError(str(exc))
    if isinstance(exc, ImportError):          # an optional dependency; our messages name the extra
        return UsageError(str(exc))
    return None


def print_error(prog: str, message: str) -> None:
    """One line on stderr, prefixed with the command."""
    text = " ".join(str(message).split())          # one line, whatever the exception held
    print(f"{prog}: {text}", file=sys.stderr)


def run_command(prog: str, fn, args) -> int:
    """Run one command: its exit code, or the documented code and one stderr line for a user error."""
    try:
        return int(fn(args) or 0)
    except KeyboardInterrupt:
        print_error(prog, "interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:                       # `anatid sql ... | head`: the reader left
        _silence_stdout()
        return EXIT_OK
    except Exception as exc:
        err = as_cli_error(exc)
        if err is None:
            raise
        print_error(prog, str(err))
        return err.code


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# -- files ------------------------------------------------------------------------------------------
MISSING_FIX = "check the path; `anatid demo` or `anatid ingest VAULT --db FILE` create a memory file"


def require_file(path: str) -> None:
    """OpenError unless `path` is an existing file (or ':memory:'): checked before DuckDB opens it."""
    if path == ":memory:":
        return
    p = Path(path)
    if not p.exists():
        raise OpenError(f"{path}: no such file", MISSING_FIX)
    if p.is_dir():
        raise OpenError(f"{path}: is a directory, not a memory file", "give the path of the .anatid file")


def require_creatable(path: str) -> None:
    """OpenError unless `path` exists or can be created (its folder exists)."""
    p = Path(path)
    if p.is_dir():
        raise OpenError(f"{path}: is a directory, not a memory file", "give the path of the .anatid file")
    if not p.exists() and not p.resolve().parent.is_dir():
        raise OpenError(f"{path}: the folder {p.resolve().parent} does not exist", "create it first")


def open_db(path: str, *, tenant: int = 0, read_only: bool = True, create: bool = False,
            embedding_dim: int | None = None):
    """Anatid.open with the exit-3 errors a person can act on. Without `create`, a missing
    file is refused before DuckDB would create it."""
    import duckdb

    from ..db import Anatid
    if create and not read_only:
        require_creatable(path)
    else:
        require_file(path)
    try:
        return Anatid.open(path, tenant=tenant, read_only=read_only, embedding_dim=embedding_dim)
    except duckdb.Error as exc:
        raise OpenError(f"{path}: {_first_line(exc)}") from None


_SIDECARS = (".wal", ".tmp")


@contextmanager
def creating(path: str):
    """Remove `path` (and DuckDB's sidecars) if it did not exist before and the block fails:
    a failed command leaves no file behind. The block must close its handle before leaving."""
    fresh = path != ":memory:" and not Path(path).exists()
    try:
        yield fresh
    except BaseException:
        if fresh:
            for suffix in ("", *_SIDECARS):
                try:
                    os.remove(path + suffix)
                except FileNotFoundError:
                    pass
        raise


# -- JSON -------------------------------------------------------------------------------------------
def add_json(parser) -> None:
    """The `--json` flag every command takes."""
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document on stdout (ids as decimal strings)")


def jsonable(value):
    """Plain JSON types: big ints as strings, datetimes as ISO-8601, dataclasses as dicts."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)     # JSON has no NaN or infinity
    if isinstance(value, Decimal):
        return jsonable(float(value))
    if isinstance(value, int):
        return str(value) if abs(value) >= _SAFE_INT else value
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Path):
        return str(value)
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):                  # numpy scalars and arrays
        return jsonable(value.tolist())
    return str(value)


def print_json(value) -> None:
    """The command's one JSON document, on stdout."""
    print(json.dumps(jsonable(value), indent=2, ensure_ascii=False))
