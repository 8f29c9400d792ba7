"""`anatid turns DB`: the per-turn ledger the Stop hook wrote (`--stats` for totals)."""
from __future__ import annotations

from .contract import EXIT_OK, UsageError, add_json, open_db, print_json


def register(sub) -> None:
    p = sub.add_parser("turns", help="show the per-turn ledger written by `anatid hook stop`")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("--stats", action="store_true", help="totals: turns, sessions, top tools and files")
    p.add_argument("-n", type=int, default=10, help="how many recent turns to list")
    add_json(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..vault.turns import stats
    if args.n < 0:
        raise UsageError(f"-n {args.n}: must be 0 or more", "e.g. -n 10")
    with open_db(args.db, read_only=True) as db:
        cur = db.connection
        exists = cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'anatid_turns'"
                             ).fetchone()[0]
        if args.stats:
            s = stats(db) if exists else {"turns": 0, "sessions": 0, "commands": 0, "top_tools": [], "top_files": []}
            if args.json:
                print_json(s)
                return EXIT_OK
            print(f"turns     {s['turns']}")
            print(f"sessions  {s['sessions']}")
            print(f"commands  {s['commands']}")
            print("tools     " + ", ".join(f"{t} {n}" for t, n in s["top_tools"]))
            print("files     " + ", ".join(f"{f} {n}" for f, n in s["top_files"]))
            return EXIT_OK
        rows = cur.execute("SELECT recorded_at, ask, summary, tools, files FROM anatid_turns "
                           "ORDER BY recorded_at DESC, rowid DESC LIMIT $n", {"n": args.n}).fetchall() if exists else []
    if args.json:
        print_json({"turns": [{"recorded_at": at, "ask": ask, "summary": summary, "tools": list(tools or []),
                               "files": list(files or [])} for at, ask, summary, tools, files in rows]})
        return EXIT_OK
    if not exists:
        print("no turns recorded yet")
    for at, ask, summary, tools, files in rows:
        print(f"{at:%Y-%m-%d %H:%M}  ask: {(ask or '-')[:80]}")
        print(f"      done: {(summary or '-')[:80]}")
        if tools:
            print(f"      tools: {', '.join(tools)}; files: {', '.join(files) or '-'}")
    return EXIT_OK
