"""Helpers of the MCP tests: start the real `anatid-mcp` over stdio, snapshot a file."""
from __future__ import annotations

import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]


def server_command() -> tuple[str, list[str]]:
    """The installed console script next to this interpreter, else `python -m` of the same entry point."""
    for name in ("anatid-mcp", "anatid-mcp.exe"):
        script = Path(sys.executable).with_name(name)
        if script.exists():
            return str(script), []
    return sys.executable, ["-m", "anatid.integrations.mcp"]


def server_env() -> dict[str, str]:
    # Run the anatid this test run imports (installed, or the source tree of a `make build` checkout).
    env = {"PYTHONPATH": subprocess_env()["PYTHONPATH"]}
    for key in ("ANATID_NATIVE", "ANATID_EXTENSION_PATH"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


@asynccontextmanager
async def mcp_session(db_path, *flags: str):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command, args = server_command()
    params = StdioServerParameters(command=command, args=[*args, "--db", str(db_path), *flags], env=server_env())
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def payload(result) -> dict:
    """The structured result of a successful tool call (also checked against its text form)."""
    assert not result.is_error, result.content[0].text
    data = result.structured_content
    assert json.loads(result.content[0].text) == data
    return data


def error_text(result) -> str:
    assert result.is_error, f"expected a tool error, got {result.structured_content}"
    return result.content[0].text


def snapshot(con) -> dict:
    """Every table's rows plus the user catalog, to prove a file unchanged."""
    out = {"tables": con.execute("SELECT database_name, schema_name, table_name FROM duckdb_tables() "
                                 "ORDER BY ALL").fetchall(),
           "views": con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY ALL").fetchall(),
           "macros": con.execute("SELECT function_name FROM duckdb_functions() WHERE NOT internal "
                                 "AND function_type LIKE '%macro%' ORDER BY ALL").fetchall(),
           "databases": con.execute("SELECT database_name FROM duckdb_databases() ORDER BY ALL").fetchall()}
    for _db, _schema, table in out["tables"]:
        out[table] = con.execute(f'SELECT * FROM "{table}" ORDER BY ALL').fetchall()
    return out
