"""`anatid stats DB`: what is in the file, for people (table) or scripts (--json)."""
from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("stats", help="counts, schema version and native status of a memory file")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("--tenant", type=int, default=0)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..db import Anatid
    with Anatid.open(args.db, tenant=args.tenant, read_only=True) as db:
        s = db.stats()
    if args.json:
        print(json.dumps(s, default=str, indent=2))
        return 0
    width = max(len(k) for k in s)
    for key, value in s.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items() if v is not None)
        print(f"{key:<{width}}  {value}")
    return 0
