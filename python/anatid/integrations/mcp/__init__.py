"""anatid over the Model Context Protocol: `anatid-mcp --db FILE` or `build_server(...)`.

Needs the optional `mcp` package (`pip install "anatid[mcp]"`); it is imported only when a
server is built, so importing this package never fails for want of it.
"""
from __future__ import annotations


def build_server(db_path, tenant: int = 0, read_only: bool = False, enable_sql: bool = False, **kw):
    from .server import build_server as _build
    return _build(db_path, tenant=tenant, read_only=read_only, enable_sql=enable_sql, **kw)


def main(argv=None) -> int:
    from .server import main as _main
    return _main(argv)


__all__ = ["build_server", "main"]
