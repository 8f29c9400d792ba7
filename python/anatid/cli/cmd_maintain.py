"""`anatid maintain DB`: build every derived-index generation that is due.

Takes the file's write lock (maintenance publishes new generations). The policy flags
map onto MaintenancePolicy; `--force` rebuilds whether due or not; `--dry-run` only says
what is due. Exit codes (docs/cli.md): 0 nothing is left due, 1 something due was not
built (a failed validation, a build error, an index that needs the missing extension),
2 bad usage, 3 the file could not be opened. Builds without index maintenance exit 2.
"""
from __future__ import annotations

import inspect
import re
from datetime import timedelta

import duckdb

from ._render import key_values, table
from .contract import EXIT_OK, EXIT_PROBLEM, CliError, UsageError, add_json, open_db, print_error, print_json
from .progress import terminal_progress

INDEXES = ("graph", "text", "vector")
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def register(sub) -> None:
    p = sub.add_parser("maintain", help="build the derived-index generations that are due (takes the write lock)")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("--tenant", type=int, default=0)
    p.add_argument("--all-tenants", action="store_true", help="maintain every tenant in the file, not only --tenant")
    p.add_argument("--index", action="append", choices=INDEXES, help="only this index (repeatable; default all)")
    p.add_argument("--force", action="store_true", help="rebuild whether due or not")
    p.add_argument("--max-journal-rows", type=int, metavar="N",
                   help="due when the journal holds N rows or more")
    p.add_argument("--max-journal-ratio", type=float, metavar="R",
                   help="due when the journal holds R times the base's rows or more (e.g. 0.1)")
    p.add_argument("--max-age", type=age, metavar="AGE",
                   help="due when the base is older than AGE (90, 90s, 15m, 1h, 2d) and its journal is not empty")
    p.add_argument("--dry-run", action="store_true", help="say what is due under the policy; build nothing")
    add_json(p)
    p.set_defaults(run=run)


def age(text: str) -> timedelta:
    m = _AGE.match(text)
    if m is None:
        import argparse
        raise argparse.ArgumentTypeError(f"{text!r} is not an age: a number of seconds, or with s, m, h or d")
    return timedelta(seconds=float(m.group(1)) * _UNIT[m.group(2)])


def policy_of(args):
    """The MaintenancePolicy the flags describe, or None (maintain_indexes' default: any
    journal row makes a generation due). A flag not given is a trigger that never fires."""
    if args.max_journal_rows is None and args.max_journal_ratio is None and args.max_age is None:
        return None
    from ..indexes.policy import MaintenancePolicy
    return MaintenancePolicy(max_journal_rows=args.max_journal_rows, max_journal_ratio=args.max_journal_ratio,
                             max_age=args.max_age)    # ValidationError (exit 2) names a bad value


def run(args) -> int:
    policy = policy_of(args)          # before opening: a usage error takes no lock
    with open_db(args.db, tenant=args.tenant, read_only=args.dry_run) as db:
        maintain = getattr(db, "maintain_indexes", None)
        if maintain is None:
            raise UsageError("index maintenance is not available in this build of anatid "
                             "(no maintain_indexes())", "reads use the SQL oracle and stay correct")
        if args.dry_run:
            return dry_run(db, args, policy)
        kwargs = {"all_tenants": args.all_tenants, "force": args.force, "policy": policy,
                  "indexes": tuple(args.index or INDEXES)}
        from ..errors import ConflictError
        from ..verbs.indexes import IndexValidationError
        with terminal_progress() as progress:
            if _accepts(maintain, "progress"):
                kwargs["progress"] = progress
            else:
                progress(0, None, "maintaining indexes")   # no steps to show: say it is working
            try:
                result = maintain(**kwargs)
            except (duckdb.Error, IndexValidationError, ConflictError) as exc:
                # nothing is published half-built: the build's transaction rolled back
                raise CliError(f"index maintenance failed: {str(exc).strip().splitlines()[0]}",
                               "the old generations and their journals still answer every read") from None
    if args.json:
        print_json(result)
    else:
        print(render(result))
    left = unbuilt(result)
    if left:
        print_error(getattr(args, "_prog", "anatid maintain"), "still due, not built: " + ", ".join(left))
        return EXIT_PROBLEM
    return EXIT_OK


def unbuilt(result) -> list[str]:
    """index@tenant entries maintenance skipped although they stay due (load_failure)."""
    out = []
    for index, entry in (result or {}).items():
        for s in entry.get("skipped", []) if isinstance(entry, dict) else []:
            if s.get("reason") == "load_failure":
                out.append(f"{index}@{s['tenant']} (load_failure: the native extension is not loaded)")
    return out


def dry_run(db, args, policy) -> int:
    wanted = set(args.index or INDEXES)
    entries = [e for e in db.index_health(all_tenants=args.all_tenants, policy=policy, deep=False)
               if e["index"] in wanted]
    for e in entries:
        e["would_build"] = bool(args.force or e["due"])
    if args.json:
        print_json(entries)
    else:
        cols = ["index", "tenant", "reason", "would_build", "base_rows", "pending_rows", "ratio", "age_seconds"]
        print(table(cols, [[e.get(c) for c in cols] for e in entries]))
    return EXIT_OK


def _accepts(fn, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params      # named explicitly: **kw may forward to a verb that refuses it


def render(result) -> str:
    """maintain_indexes()' report as a table: one row per index and tenant, built or skipped.

    A built tenant shows its generation and what it counted (`rows=3`, `entities=4, edges=2`);
    a skipped one its reason. The validation text and timings stay in `--json`."""
    from .contract import jsonable
    plain = jsonable(result)
    if not isinstance(plain, dict) or not all(isinstance(v, dict) for v in plain.values()):
        return "done" if plain is None else key_values(plain) if isinstance(plain, dict) else str(plain)
    rows = []
    for index, entry in plain.items():
        for t in entry.get("tenants") or []:
            t = t if isinstance(t, dict) else {"tenant": t}
            counts = {k: v for k, v in t.items() if k not in ("tenant", "generation_id", "validated")}
            rows.append([index, t.get("tenant"), "built", t.get("generation_id"), counts or None])
        for s in entry.get("skipped") or []:
            s = s if isinstance(s, dict) else {"reason": s}
            rows.append([index, s.get("tenant"), f"skipped: {s.get('reason')}", None, None])
        if not entry.get("tenants") and not entry.get("skipped"):
            rows.append([index, None, "nothing due", None, None])
    return table(["index", "tenant", "result", "generation", "counts"], rows)
