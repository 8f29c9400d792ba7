"""`anatid recall DB "query"`: hybrid recall from the command line."""
from __future__ import annotations

from ._render import table
from .contract import EXIT_OK, add_json, open_db, print_json


def register(sub) -> None:
    p = sub.add_parser("recall", help="hybrid recall (text and graph arms) over one tenant")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("query", help="what to recall")
    p.add_argument("--k", type=int, default=10, help="number of hits (default 10)")
    p.add_argument("--seed", action="append", metavar="ENTITY",
                   help="start the graph arm from this entity (repeatable); default: entities named in the query")
    p.add_argument("--tenant", type=int, default=0)
    p.add_argument("--as-of", metavar="ISO", help="recall as the memory saw the world then (ISO-8601 with offset)")
    add_json(p)
    p.set_defaults(run=run)


def run(args) -> int:
    with open_db(args.db, tenant=args.tenant, read_only=True) as db:
        hits = db.recall(args.query, k=args.k, seed_entity=args.seed, as_of=args.as_of)
    if args.json:
        print_json({"engine": hits.engine, "arms": list(hits.arms), "notes": list(hits.notes),
                    "hits": [{"memory_id": str(h.memory_id), "score": h.score, "sources": list(h.sources),
                              "hop": h.hop, "kind": h.kind, "content": h.content} for h in hits]})
        return EXIT_OK
    if hits:
        print(table(["#", "score", "sources", "memory_id", "kind", "content"],
                    [[i, round(h.score, 6), "+".join(h.sources), str(h.memory_id), h.kind, h.content]
                     for i, h in enumerate(hits, 1)]))
    else:
        print("no hits")
    footer = f"engine: {hits.engine}; arms: {', '.join(hits.arms) or 'none'}"
    for note in hits.notes:
        footer += f"\nnote: {note}"
    print(footer)
    return EXIT_OK
