"""`anatid ask DB "question"`: recall over an ingested vault; `--ab` runs the vector
and the graph pipelines side by side and appends one row to anatid_ab_recall."""
from __future__ import annotations

from .contract import EXIT_OK, UsageError, add_json, open_db, print_json


def register(sub) -> None:
    p = sub.add_parser("ask", help="ask an ingested vault (vector, expand or graph mode; --ab compares)")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("question")
    p.add_argument("--tenant", type=int, default=0)
    p.add_argument("--mode", choices=("vector", "expand", "graph"), default="graph")
    p.add_argument("-k", type=int, default=12)
    p.add_argument("--ab", action="store_true", help="run vector and --mode, show both, log the difference")
    p.add_argument("--as-of", default=None, help="ISO-8601 instant with offset: ask the vault as it was")
    add_json(p)
    p.set_defaults(run=run)


def _show(title, result) -> None:
    print(f"--- {title} ---")
    for i, h in enumerate(result.hits, 1):
        print(f"{i:3}. [{h.score:6.3f}] {h.title}  ({h.path}; {'+'.join(h.sources)})")
    for note in result.notes:
        print(f"     note: {note}")


def run(args) -> int:
    from ..vault.ab import log_ab
    from ..vault.recall import VaultRecall
    if args.k < 1:
        raise UsageError(f"-k {args.k}: must be 1 or more", "e.g. -k 12")
    with open_db(args.db, tenant=args.tenant, read_only=not args.ab) as db:
        try:
            rec = VaultRecall(db)
        except ValueError as exc:               # no ingested vault in this file
            raise UsageError(str(exc)) from None
        if not args.ab:
            result = rec.ask(args.question, mode=args.mode, k=args.k, as_of=args.as_of)
            if args.json:
                print_json(result)
            else:
                _show(args.mode, result)
            return EXIT_OK
        qvec = rec.embedder.embed([args.question])[0]
        direct = rec.ask(args.question, mode="vector", k=args.k, embedding=qvec, as_of=args.as_of)
        assoc = rec.ask(args.question, mode=args.mode if args.mode != "vector" else "graph", k=args.k,
                        embedding=qvec, as_of=args.as_of)
        row = log_ab(db, args.question, direct, assoc, args.k)
    if args.json:
        print_json({"direct": direct, "associative": assoc, "ab": row})
        return EXIT_OK
    print(f"A/B RECALL: {args.question}")
    print(f"(graph added {row['graph_added']} candidates; {row['new_in_top']} new notes in the top {args.k}, "
          f"{row['promoted_via_graph']} of them from outside the vector pool"
          f"{'; entity gate on' if assoc.gated else ''})")
    _show("DIRECT (vector)", direct)
    _show(f"ASSOCIATIVE ({assoc.mode})", assoc)
    return EXIT_OK
