"""`anatid maintain DB`: build every derived-index generation that is due.

Takes the file's write lock (maintenance publishes new generations). Builds
without index maintenance exit 2 and say so.
"""
from __future__ import annotations

import inspect

import duckdb

from . import EXIT_OK, EXIT_OPEN, EXIT_PROBLEM, EXIT_USAGE
from ._render import OpenFailed, Progress, fail, key_values, open_db, print_json, table


def register(sub) -> None:
    p = sub.add_parser("maintain", help="build the derived-index generations that are due (takes the write lock)")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("--tenant", type=int, default=0)
    p.add_argument("--all-tenants", action="store_true", help="maintain every tenant in the file, not only --tenant")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args) -> int:
    try:
        db = open_db(args.db, tenant=args.tenant, read_only=False)
    except OpenFailed as exc:
        return fail(str(exc), EXIT_OPEN)
    with db:
        maintain = getattr(db, "maintain_indexes", None)
        if maintain is None:
            return fail("index maintenance is not available in this build of anatid "
                        "(no maintain_indexes()); reads use the SQL oracle and stay correct", EXIT_USAGE)
        kwargs = {"all_tenants": True} if args.all_tenants else {}
        with Progress() as progress:
            if _accepts(maintain, "progress"):
                kwargs["progress"] = progress
            else:
                progress(0, None, "maintaining indexes…")   # no steps to show: say it is working
            try:
                result = maintain(**kwargs)
            except duckdb.Error as exc:     # nothing is published half-built: the build's transaction rolled back
                progress.close()
                return fail(f"index maintenance failed: {str(exc).splitlines()[0]}", EXIT_PROBLEM)
    if args.json:
        print_json(result)
    else:
        print(render(result))
    return EXIT_OK


def _accepts(fn, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params      # named explicitly: **kw may forward to a verb that refuses it


def render(result) -> str:
    """Whatever maintain_indexes() returned, as a table when it is a list of records."""
    from ._render import jsonable
    plain = jsonable(result)
    if isinstance(plain, dict) and all(isinstance(v, dict) for v in plain.values()) and plain:
        plain = [{"index": k, **v} for k, v in plain.items()]
    if isinstance(plain, list) and plain and all(isinstance(r, dict) for r in plain):
        headers = list(dict.fromkeys(k for r in plain for k in r))
        return table(headers, [[r.get(h) for h in headers] for r in plain])
    if isinstance(plain, dict):
        return key_values(plain)
    return "done" if plain is None else str(plain)
