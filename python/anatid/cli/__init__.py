"""The `anatid` command line. Each subcommand lives in its own module of this package
and exposes `register(subparsers)`; COMMANDS lists them in help order, one line each.

Every command keeps the contract of contract.py (docs/cli.md): `--json` prints one JSON
document on stdout; exit 0 success, 1 the command ran and found a problem, 2 bad usage,
3 the memory file could not be opened; a user error is one line on stderr, never a
traceback; a failed command creates no file; progress only on a terminal's stderr.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .contract import EXIT_OK, EXIT_OPEN, EXIT_PROBLEM, EXIT_USAGE, print_error, run_command  # noqa: F401

COMMANDS = [
    "demo",
    "stats",
    "doctor",
    "maintain",
    "recall",
    "sql",
    "ingest",
    "ask",
    "eval",
    "hook",
    "turns",
    "show",
    "extension",
]


class Parser(argparse.ArgumentParser):
    """argparse with the contract's error line: one line on stderr, exit 2."""

    def error(self, message: str):
        print_error(self.prog, f"{message} (see {self.prog} --help)")
        sys.exit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    from .._version import __version__
    parser = Parser(prog="anatid", description="Embedded bitemporal graph memory on DuckDB.")
    parser.add_argument("--version", action="version", version=f"anatid {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"anatid.cli.cmd_{name}").register(sub)
    for leaf in leaves(parser):
        leaf.set_defaults(_prog=leaf.prog)      # the prefix of the command's error lines
    return parser


def leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers that run something: every subcommand without subcommands of its own."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        return [parser]
    out = []
    for group in groups:
        for child in dict.fromkeys(group.choices.values()):     # aliases share a parser
            out += leaves(child)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return run_command(getattr(args, "_prog", f"anatid {args.command}"), args.run, args)
