"""`anatid ingest VAULT --db FILE`: bring a memory file in line with a markdown vault."""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("ingest", help="ingest a markdown vault ([[wikilinks]] become the graph), incrementally")
    p.add_argument("vault", help="folder of markdown notes")
    p.add_argument("--db", required=True, help="path of the memory file (created if missing)")
    p.add_argument("--tenant", type=int, default=0)
    p.add_argument("--embedder", default=None,
                   help="'minilm' (default, needs anatid[embed]) or 'hashing[-DIM]'; a file keeps the one it began with")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..db import Anatid
    from ..vault.ingest import ingest_vault, stored_embedder
    with Anatid.open(args.db, tenant=args.tenant) as db:
        name = args.embedder or stored_embedder(db)
        try:
            report = ingest_vault(db, args.vault, embedder=name, progress=not args.quiet)
        except (ValueError, ImportError, FileNotFoundError) as exc:
            print(f"anatid ingest: {exc}", file=sys.stderr)
            return 2
    print(report.summary())
    for path, reason in report.skipped:    # a skipped note never fails the run: named, exit 0
        print(f"anatid ingest: skipped {path}: {reason}", file=sys.stderr)
    return 0
