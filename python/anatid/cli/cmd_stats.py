"""`anatid stats DB`: what is in the file, for people (table) or scripts (--json)."""
from __future__ import annotations

from .contract import EXIT_OK, add_json, open_db, print_json


def register(sub) -> None:
    p = sub.add_parser("stats", help="counts, schema version and native status of a memory file")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("--tenant", type=int, default=0)
    add_json(p)
    p.set_defaults(run=run)


def run(args) -> int:
    with open_db(args.db, tenant=args.tenant, read_only=True) as db:
        s = db.stats()
        health = getattr(db, "index_health", None)
        if health is not None:           # builds with derived indexes: one line per index
            s["index_health"] = health()
    if args.json:
        print_json(s)
        return EXIT_OK
    from ._render import key_values
    print(key_values({k: _health_line(v) if k == "index_health" else v for k, v in s.items()}))
    return EXIT_OK


def _health_line(entries) -> str:
    """`graph@0=fresh, text@0=absent`: index, tenant and reason of each index_health() entry."""
    from .contract import jsonable
    plain = jsonable(entries)
    if isinstance(plain, dict):
        plain = [{"index": k, **v} if isinstance(v, dict) else {"index": k, "reason": v} for k, v in plain.items()]
    parts = []
    for e in plain if isinstance(plain, list) else []:
        if isinstance(e, dict):
            where = e.get("index", e.get("name", "?"))
            tenant = e.get("tenant", e.get("tenant_id"))
            parts.append(f"{where}{'' if tenant is None else '@' + str(tenant)}={e.get('reason', e.get('status'))}")
    return ", ".join(parts) or str(plain)
