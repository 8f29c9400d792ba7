"""`anatid ingest VAULT --db FILE`: bring a memory file in line with a markdown vault."""
from __future__ import annotations

import sys
from pathlib import Path

from .contract import EXIT_OK, UsageError, add_json, creating, open_db, print_json
from .progress import terminal_progress


def register(sub) -> None:
    p = sub.add_parser("ingest", help="ingest a markdown vault ([[wikilinks]] become the graph), incrementally")
    p.add_argument("vault", help="folder of markdown notes")
    p.add_argument("--db", required=True, help="path of the memory file (created if missing)")
    p.add_argument("--tenant", type=int, default=0)
    p.add_argument("--embedder", default=None,
                   help="'minilm' (default, needs anatid[embed]) or 'hashing[-DIM]'; a file keeps the one it began with")
    p.add_argument("--quiet", action="store_true", help="no progress bar (there is none unless stderr is a terminal)")
    add_json(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..vault.embed import get_embedder
    from ..vault.ingest import ingest_vault, stored_embedder
    if not Path(args.vault).is_dir():           # checked before the memory file is created
        raise UsageError(f"vault {args.vault}: no such folder", "give the folder that holds the markdown notes")
    embedder = None
    if not Path(args.db).exists():              # a new file: an unusable embedder must not leave one behind
        embedder = _embedder(get_embedder, args.embedder)
    with creating(args.db), open_db(args.db, tenant=args.tenant, read_only=False, create=True) as db:
        if embedder is None:
            embedder = _embedder(get_embedder, args.embedder or stored_embedder(db))
        with terminal_progress(enabled=not args.quiet) as progress:
            try:
                report = ingest_vault(db, args.vault, embedder=embedder, progress=progress)
            except (ValueError, FileNotFoundError) as exc:
                raise UsageError(str(exc)) from None
    if args.json:
        print_json({**_fields(report), "summary": report.summary()})
    else:
        print(report.summary())
        for path, reason in report.skipped:    # a skipped note never fails the run: named, exit 0
            print(f"anatid ingest: skipped {path}: {reason}", file=sys.stderr)
    return EXIT_OK


def _embedder(get_embedder, name):
    try:
        return get_embedder(name)
    except ValueError as exc:                   # an unknown name; ImportError names the extra itself
        raise UsageError(str(exc)) from None


def _fields(report) -> dict:
    from dataclasses import asdict
    return asdict(report)
