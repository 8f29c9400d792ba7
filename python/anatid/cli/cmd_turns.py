"""`anatid turns DB`: the per-turn ledger the Stop hook wrote (`--stats` for totals)."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("turns", help="show the per-turn ledger written by `anatid hook stop`")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("--stats", action="store_true", help="totals: turns, sessions, top tools and files")
    p.add_argument("-n", type=int, default=10, help="how many recent turns to list")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..db import Anatid
    from ..vault.turns import stats
    with Anatid.open(args.db, read_only=True) as db:
        cur = db.connection
        exists = cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'anatid_turns'"
                             ).fetchone()[0]
        if not exists:
            print("no turns recorded yet")
            return 0
        if args.stats:
            s = stats(db)
            print(f"turns     {s['turns']}")
            print(f"sessions  {s['sessions']}")
            print(f"commands  {s['commands']}")
            print("tools     " + ", ".join(f"{t} {n}" for t, n in s["top_tools"]))
            print("files     " + ", ".join(f"{f} {n}" for f, n in s["top_files"]))
            return 0
        rows = cur.execute("SELECT recorded_at, ask, summary, tools, files FROM anatid_turns "
                           "ORDER BY recorded_at DESC, rowid DESC LIMIT $n", {"n": args.n}).fetchall()
        for at, ask, summary, tools, files in rows:
            print(f"{at:%Y-%m-%d %H:%M}  ask: {(ask or '-')[:80]}")
            print(f"      done: {(summary or '-')[:80]}")
            if tools:
                print(f"      tools: {', '.join(tools)}; files: {', '.join(files) or '-'}")
    return 0
