"""`anatid show DB ENTITY`: a self-contained picture of an entity's neighbourhood through time."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from .contract import EXIT_OK, UsageError, add_json, open_db, print_json


def register(sub) -> None:
    p = sub.add_parser("show", help="draw an entity's neighbourhood through time (HTML with a time slider, or SVG)")
    p.add_argument("db", help="path of the memory file")
    p.add_argument("entity", help="the entity at the centre")
    p.add_argument("--hops", type=int, default=2, help="RELATES steps to walk from the entity (0-4, default 2)")
    p.add_argument("--as-of", metavar="ISO",
                   help="the instant the picture opens on (ISO-8601 with offset); default: the latest change")
    p.add_argument("--tenant", type=int, default=0)
    p.add_argument("--max-entities", type=int, default=None, help="cap on entities drawn (default 40)")
    p.add_argument("--max-memories", type=int, default=None, help="cap on memory versions per entity (default 12)")
    p.add_argument("-o", "--output", metavar="FILE.html|FILE.svg",
                   help="where to write; the suffix picks the format; '-' writes HTML to stdout "
                        "(default: ENTITY.html in the current directory)")
    add_json(p)                  # what was written, as JSON (not with -o -, which writes the page to stdout)
    p.set_defaults(run=run)


def _default_name(entity: str) -> str:
    slug = re.sub(r"[^\w.-]+", "-", entity.strip(), flags=re.UNICODE).strip("-.") or "entity"
    return f"{slug}.html"


def run(args) -> int:
    from ..show import gather, render_html, render_svg
    out = args.output or _default_name(args.entity)
    suffix = Path(out).suffix.lower() if out != "-" else ".html"
    if suffix not in (".html", ".htm", ".svg"):
        raise UsageError(f"-o {out}: the file name must end in .html or .svg", "e.g. -o ada.html")
    if out == "-" and args.json:
        raise UsageError("-o - writes the page to stdout, where --json would go", "give -o FILE.html with --json")
    if out != "-" and not Path(out).resolve().parent.is_dir():
        raise UsageError(f"-o {out}: the folder {Path(out).resolve().parent} does not exist", "create it first")
    caps = {k: v for k, v in (("max_entities", args.max_entities), ("max_memories", args.max_memories))
            if v is not None}
    with open_db(args.db, tenant=args.tenant, read_only=True) as db:
        hood = gather(db, args.entity, hops=args.hops, as_of=args.as_of, **caps)
    text = render_svg(hood) if suffix == ".svg" else render_html(hood)
    if out == "-":
        sys.stdout.write(text)
        return EXIT_OK
    Path(out).write_text(text, encoding="utf-8")
    versions = len({b.key for b in hood.beliefs})
    if args.json:
        print_json({"output": str(Path(out).resolve()), "format": "svg" if suffix == ".svg" else "html",
                    "entities": len(hood.nodes), "relations": len(hood.links), "memory_versions": versions,
                    "change_instants": len(hood.frames), "left_out": list(hood.omitted)})
        return EXIT_OK
    print(f"wrote {out}: {len(hood.nodes)} entities, {len(hood.links)} relations, "
          f"{versions} memory versions, {len(hood.frames)} change instants")
    for note in hood.omitted:
        print(f"left out: {note}")
    return EXIT_OK
