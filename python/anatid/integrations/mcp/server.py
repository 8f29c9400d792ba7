"""`anatid-mcp`: an anatid file served over the Model Context Protocol (stdio).

Targets the `mcp` SDK 2.x (`mcp.server.mcpserver.MCPServer`); see docs/mcp.md for why.
"""
from __future__ import annotations

import argparse

from ..._version import __version__
from ...db import Anatid
from ...errors import AnatidError, DatabaseLocked
from . import sql_guard

EXTRA_HINT = 'the MCP server needs the mcp package: pip install "anatid[mcp]"'


def _import_mcp():
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import ToolAnnotations
    except ImportError as exc:
        raise ImportError(f"{EXTRA_HINT} ({exc})") from exc
    return MCPServer, ToolAnnotations


def _annotations(ToolAnnotations, name: str):
    from .tools import DESTRUCTIVE, READS
    read = name in READS or name == "sql"
    return ToolAnnotations(
        title=name.replace("_", " "),
        read_only_hint=read,
        destructive_hint=name in DESTRUCTIVE,
        idempotent_hint=read or name in ("relate", "rebuild_fts_index"),
        open_world_hint=False,
    )


def open_memory(db_path: str, *, tenant: int = 0, read_only: bool = False) -> Anatid:
    """Open the file, turning DuckDB's lock error into advice for an MCP user."""
    try:
        return Anatid.open(db_path, tenant=tenant, read_only=read_only)
    except DatabaseLocked as exc:
        raise DatabaseLocked(
            f"{db_path} is held by another process (DuckDB allows one writing process per file, and while "
            "it runs no other process can open the file). Stop the other process (for instance another "
            "anatid-mcp on this file), or reach the memory through that process's tools. Several "
            "servers can share a file when all of them run with --read-only.") from exc


def build_server(db_path, tenant: int = 0, read_only: bool = False, enable_sql: bool = False, *,
                 db: Anatid | None = None, sql_max_rows: int = sql_guard.DEFAULT_MAX_ROWS,
                 sql_timeout_s: float = sql_guard.DEFAULT_TIMEOUT_S):
    """An MCPServer exposing the anatid verbs of one file and tenant.

    `read_only` registers only the read tools and opens the file read-only. `enable_sql` adds
    the read-only `sql` tool and turns DuckDB's external access off for this file's database
    instance in this process (DuckDB cannot turn it back on). Pass `db` to serve an already
    open handle instead of opening `db_path`.
    """
    MCPServer, ToolAnnotations = _import_mcp()
    from .tools import INSTRUCTIONS, build_tools

    if db is None:
        db = open_memory(str(db_path), tenant=tenant, read_only=read_only)
    if enable_sql:
        sql_guard.harden(db.connection)
    server = MCPServer(name="anatid", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    for name, fn in build_tools(db, read_only=read_only, enable_sql=enable_sql, sql_max_rows=sql_max_rows,
                                sql_timeout_s=sql_timeout_s):
        server.add_tool(fn, name=name, annotations=_annotations(ToolAnnotations, name), structured_output=True)
    server.anatid = db  # the handle, for embedding code that wants to close it
    return server


def _parser() -> argparse.ArgumentParser:
    from ...cli import Parser             # one-line usage errors, exit 2 (docs/cli.md)
    p = Parser(prog="anatid-mcp", description="Serve an anatid memory file over MCP (stdio).")
    p.add_argument("--db", required=True, help="the anatid file (created if absent, unless --read-only)")
    p.add_argument("--tenant", type=int, default=0, help="tenant id to serve (default 0)")
    p.add_argument("--read-only", action="store_true", help="register only the read tools; open the file read-only")
    p.add_argument("--enable-sql", action="store_true", help="add the read-only sql tool (off by default)")
    p.add_argument("--version", action="version", version=f"anatid-mcp {__version__}")
    return p


def main(argv: list[str] | None = None) -> int:
    """The console script. Exit codes are the CLI's (docs/cli.md): 2 bad usage or no mcp
    package, 3 the file could not be opened (absent with --read-only, locked, newer schema)."""
    import duckdb

    from ...cli.contract import OpenError, as_cli_error, creating, print_error, require_creatable, require_file
    args = _parser().parse_args(argv)
    try:
        (require_file if args.read_only else require_creatable)(args.db)
        _import_mcp()                     # before the file is created: a missing package leaves none
        with creating(args.db):
            try:
                server = build_server(args.db, tenant=args.tenant, read_only=args.read_only,
                                      enable_sql=args.enable_sql)
            except duckdb.Error as exc:
                raise OpenError(f"{args.db}: {(str(exc).strip().splitlines() or ['cannot open'])[0]}") from None
    except (AnatidError, ImportError, OpenError) as exc:
        err = as_cli_error(exc)
        print_error("anatid-mcp", str(err))
        return err.code
    try:
        server.run("stdio")
    finally:
        server.anatid.close()
    return 0
