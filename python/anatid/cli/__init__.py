"""The `anatid` command line. Each subcommand lives in its own module of this
package and exposes `register(subparsers)`; COMMANDS lists them in help order.

Exit codes: 0 success, 1 the command ran and found a problem (e.g. doctor
errors), 2 bad usage or arguments, 3 the file could not be opened.
"""
from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = ["demo", "stats"]
# Optional subcommands added by other parts of the package; a missing module is skipped.
OPTIONAL_COMMANDS = ["doctor", "maintain", "recall", "sql", "ingest", "ask", "eval", "hook", "turns", "show", "extension"]

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_OPEN = 0, 1, 2, 3


def build_parser() -> argparse.ArgumentParser:
    from .._version import __version__
    parser = argparse.ArgumentParser(prog="anatid", description="Embedded bitemporal graph memory on DuckDB.")
    parser.add_argument("--version", action="version", version=f"anatid {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS + OPTIONAL_COMMANDS:
        try:
            module = importlib.import_module(f"anatid.cli.cmd_{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"anatid.cli.cmd_{name}":
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    from ..errors import AnatidError, DatabaseLocked, SchemaVersionError
    try:
        return int(args.run(args) or 0)
    except (DatabaseLocked, SchemaVersionError) as exc:
        print(f"anatid: {exc}", file=sys.stderr)
        return EXIT_OPEN
    except AnatidError as exc:
        print(f"anatid: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_USAGE
