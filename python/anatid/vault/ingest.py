"""Incremental, bitemporal ingest of a markdown vault into an anatid file.

Each note is an entity; its chunks are memories ABOUT it (kind `vault_note`,
or `vault_outdated` when its front matter names a replacement); each resolved
[[wikilink]] is an open RELATES edge `links_to`, and `superseded_by` is one
more edge of that name. `anatid_vault_files` keeps, per path, the content
hash and the believed chunk ids, so a re-ingest:

* reads and hashes every file, and writes nothing for an unchanged one;
* supersedes the chunks of a changed note (a chunk whose text is unchanged
  keeps its memory), forgets the chunks it no longer has, and edits its links;
* soft-forgets the chunks of a deleted note and closes its links: the rows
  stay, so `db.as_of(before)` answers with the vault as it was.

A note that cannot be ingested (see files.py and notes.content_problem: binary,
too large, a symlink out of the vault, a title over MAX_TITLE_CHARS...) is
skipped and listed with its reason in IngestReport.skipped; it never fails the
vault. Every such decision is made before anything is written, and all writes
of one ingest are one transaction: a failure leaves the file as it was.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import validate
from ..errors import ValidationError
from ..timeutil import to_db, utcnow
from . import files
from . import notes as nt
from . import tables
from .embed import Embedder, get_embedder
from .progress import Progress, check_sink

NOTE_KIND = "vault_note"
OUTDATED_KIND = "vault_outdated"
VAULT_KINDS = (NOTE_KIND, OUTDATED_KIND)
LINK_KINDS = ("links_to", "superseded_by")
WRITER_PREFIX = "vault:"


@dataclass
class IngestReport:
    scanned: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_written: int = 0
    chunks_kept: int = 0
    chunks_closed: int = 0
    links_opened: int = 0
    links_closed: int = 0
    unresolved_links: int = 0
    embed_seconds: float = 0.0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    # (path, reason) of every note or folder left out, in the order found; the path is printable
    # (bytes that are not UTF-8 shown as \xNN)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        skipped = f", {len(self.skipped)} skipped" if self.skipped else ""
        return (f"{self.scanned} notes: {self.new} new, {self.changed} changed, {self.unchanged} unchanged, "
                f"{self.deleted} deleted{skipped}; {self.chunks_written} chunks written, {self.chunks_kept} kept, "
                f"{self.chunks_closed} closed; links +{self.links_opened} -{self.links_closed} "
                f"({self.unresolved_links} unresolved); embed {self.embed_seconds:.1f}s, total {self.seconds:.1f}s")


@dataclass
class _Stored:
    path: str
    content_hash: str
    title: str
    entity: str
    kind: str
    memory_ids: list[int]
    chunk_hashes: list[str]
    links: list[str]
    superseded_by: str | None
    deleted: bool


def _chunk_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def writer_for(path: str) -> str:
    """Each chunk's writer names its note: the mapping memory -> note that survives time travel."""
    return WRITER_PREFIX + path


def check_embedder(cur, tenant: int, embedder: Embedder) -> None:
    stored = tables.get_meta(cur, tenant, "embedder")
    if stored is None:
        tables.set_meta(cur, tenant, "embedder", embedder.name)
    elif stored != embedder.name:
        raise ValueError(f"this file's vault was embedded with {stored!r}, not {embedder.name!r}: "
                         f"ingest with --embedder {stored}, or into a new file")


def stored_embedder(db) -> str | None:
    cur = db.connection
    tables.ensure(cur)
    return tables.get_meta(cur, db.tenant, "embedder")


def _load_stored(cur, tenant: int) -> dict[str, _Stored]:
    rows = cur.execute("""SELECT path, content_hash, title, entity, kind, memory_ids, chunk_hashes, links,
                                 superseded_by, deleted_at IS NOT NULL
                          FROM anatid_vault_files WHERE tenant_id = $t""", {"t": tenant}).fetchall()
    return {r[0]: _Stored(r[0], r[1], r[2], r[3], r[4], [int(x) for x in r[5]], list(r[6]), list(r[7]), r[8],
                          bool(r[9])) for r in rows}


def _entity_names(live: dict[str, str], fresh: list[str], stored: dict[str, _Stored]) -> dict[str, str]:
    """path -> entity name. A note keeps the name it has; a new or changed note takes its
    title, unless another live note already holds that name: then `title (path)`, then
    `title (path, 2)`, `title (path, 3)`... until the name is free (another note may be
    titled `title (path)`)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    fresh_set = set(fresh)
    for path in sorted(live):
        if path not in fresh_set and path in stored:
            names[path] = stored[path].entity
            taken.add(validate.name_key(names[path]))
    for path in fresh:
        title = live[path]
        name, n = title, 1
        while validate.name_key(name) in taken:
            n += 1
            name = f"{title} ({path})" if n == 2 else f"{title} ({path}, {n - 1})"
        names[path] = name
        taken.add(validate.name_key(name))
    return names


def _note_problem(note: nt.Note) -> str | None:
    """Why this parsed note cannot be written, checked before the transaction opens."""
    if len(note.title) > nt.MAX_TITLE_CHARS:
        return (f"its title is {len(note.title)} characters long (at most {nt.MAX_TITLE_CHARS}): shorten "
                "the first '# ' heading or set 'title:' in the front matter")
    try:   # what remember_many will check, so that one note can never refuse the batch
        for text in note.chunks:
            validate.text(text, "chunk")
        validate.optional_text(writer_for(note.path), "writer")
    except ValidationError as exc:
        return f"cannot be stored: {exc}"
    return None


def ingest_vault(db, vault, *, embedder: Embedder | str | None = None, now=None, progress=None,
                 max_chunk_chars: int = nt.CHUNK_CHARS) -> IngestReport:
    """Bring the memory file in line with the vault on disk. Returns what changed.

    `progress`, if given, is called as progress(done, total, label) for each phase
    (read, embed, write), like maintain_indexes()' callback."""
    check_sink(progress)
    t0 = time.monotonic()
    emb = embedder if embedder is not None and not isinstance(embedder, str) else get_embedder(embedder)
    report = IngestReport()
    at = None if now is None else to_db(now, "now")
    cur = db.connection
    tables.ensure(cur)
    scanned = files.scan_vault(Path(vault))
    paths = scanned.paths
    report.scanned = len(paths)
    report.skipped = list(scanned.skipped)
    stored = _load_stored(cur, db.tenant)

    # 1. read and hash everything; parse only what changed
    bar = Progress(len(paths), "read ", progress)
    parsed: dict[str, nt.Note] = {}
    titles: dict[str, str] = {}
    links: dict[str, list[str]] = {}
    sup: dict[str, str | None] = {}
    for path in paths:
        old = stored.get(path)
        live_old = old is not None and not old.deleted
        note = problem = None
        try:
            data = files.read_found(scanned.found[path])
        except files.Unreadable as exc:
            problem = str(exc)
        if problem is None and not (live_old and old.content_hash == nt.content_hash(data)):
            problem = nt.content_problem(data)
            if problem is None:
                note = nt.parse(path, data)
                if max_chunk_chars != nt.CHUNK_CHARS:
                    note.chunks = nt.chunk(note.title, nt.paragraphs(note.body), max_chunk_chars)
                problem = _note_problem(note)
        if problem is not None:
            # a note that read badly this time keeps what it last was: a half-synced file is not a deletion
            report.skipped.append((files.shown(path), problem + ("; its last ingested version is kept"
                                                                 if live_old else "")))
            if live_old:
                titles[path], links[path], sup[path] = old.title, old.links, old.superseded_by
        elif note is None:
            titles[path], links[path], sup[path] = old.title, old.links, old.superseded_by
            report.unchanged += 1
        else:
            parsed[path] = note
            titles[path], links[path], sup[path] = note.title, note.links, note.superseded_by
            if old is None or old.deleted:
                report.new += 1
            else:
                report.changed += 1
        bar.advance()
    bar.close()
    # a stored note the scan could not look at (an unreadable folder) is kept, not deleted
    gone = [p for p, s in stored.items() if not s.deleted and p not in titles and not scanned.uncertain(p)]
    for p, s in stored.items():
        if not s.deleted and p not in titles and p not in gone:
            titles[p], links[p], sup[p] = s.title, s.links, s.superseded_by
    report.deleted = len(gone)

    resolve = nt.Resolver(titles)
    entity = _entity_names(titles, sorted(parsed), stored)
    replaced_by = {}
    for path, target in sup.items():
        dst = resolve(target) if target else None
        if dst is not None and dst != path:
            replaced_by[path] = dst
    kind = {p: OUTDATED_KIND if p in replaced_by else NOTE_KIND for p in titles}

    # 2. plan chunk writes: which texts need a vector
    plans = {}
    to_embed: list[str] = []
    for path, note in parsed.items():
        old = stored.get(path)
        keep_old = (old is not None and not old.deleted and old.entity == entity[path] and old.kind == kind[path])
        old_by_hash = {}
        if keep_old:
            for mid, h in zip(old.memory_ids, old.chunk_hashes):
                old_by_hash.setdefault(h, []).append(mid)
        slots = []
        for text in note.chunks:
            h = _chunk_hash(text)
            if old_by_hash.get(h):
                slots.append((text, h, old_by_hash[h].pop(0)))
            else:
                slots.append((text, h, None))
                to_embed.append(text)
        live_old = old is not None and not old.deleted
        kept_ids = {m for _, _, m in slots if m is not None}
        # chunks of the old note that no new chunk kept: superseded in order, the rest forgotten
        reusable = [m for m in old.memory_ids if m not in kept_ids] if live_old else []
        plans[path] = (slots, reusable)

    vectors = {}
    if to_embed:
        te = time.monotonic()
        bar = Progress(len(to_embed), "embed", progress)
        batch = 256
        uniq = list(dict.fromkeys(to_embed))
        for i in range(0, len(uniq), batch):
            part = uniq[i:i + batch]
            for text, vec in zip(part, emb.embed(part)):
                vectors[text] = vec
            bar.advance(len(part))
        bar.close()
        report.embed_seconds = time.monotonic() - te

    # 3. write, in one transaction
    with db.transaction():
        check_embedder(cur, db.tenant, emb)
        new_rows = {}
        fresh_items, fresh_owner = [], []
        bar = Progress(len(parsed) + len(gone), "write", progress)
        for path in sorted(parsed):
            slots, reusable = plans[path]
            ids: list[int | None] = []
            for text, h, mid in slots:
                if mid is not None:
                    ids.append(mid)
                    report.chunks_kept += 1
                elif reusable:
                    old_id = reusable.pop(0)
                    m = db.supersede(old_id, text, entities=[entity[path]], kind=kind[path],
                                     embedding=vectors[text], writer=writer_for(path), now=now)
                    ids.append(m.memory_id)
                    report.chunks_written += 1
                else:
                    ids.append(None)
                    fresh_items.append({"content": text, "entities": [entity[path]], "kind": kind[path],
                                        "embedding": vectors[text], "writer": writer_for(path)})
                    fresh_owner.append((path, len(ids) - 1))
            for old_id in reusable:
                db.forget(old_id, writer=writer_for(path), reason="chunk removed from note", now=now)
                report.chunks_closed += 1
            new_rows[path] = (slots, ids)
            bar.advance()
        if fresh_items:
            for (path, i), mid in zip(fresh_owner, db.remember_many(fresh_items, now=now)):
                new_rows[path][1][i] = mid
            report.chunks_written += len(fresh_items)
        for path in gone:
            for mid in stored[path].memory_ids:
                db.forget(mid, writer=writer_for(path), reason="note deleted from vault", now=now)
                report.chunks_closed += 1
            bar.advance()
        bar.close()

        # kind changes of unchanged notes (their replacement appeared or vanished)
        for path in titles:
            if path in parsed:
                continue
            old = stored[path]
            if old.kind == kind[path]:
                continue
            ids = []
            for mid in old.memory_ids:
                content, vec = cur.execute(
                    "SELECT m.content, e.embedding FROM anatid_memories m LEFT JOIN anatid_embeddings e "
                    "ON e.memory_id = m.memory_id WHERE m.tenant_id = $t AND m.memory_id = $id AND m.tx_to IS NULL",
                    {"t": db.tenant, "id": mid}).fetchone()
                m = db.supersede(mid, content, kind=kind[path], embedding=vec, writer=writer_for(path), now=now)
                ids.append(m.memory_id)
                report.chunks_written += 1
            cur.execute("UPDATE anatid_vault_files SET kind = $k, memory_ids = $ids WHERE tenant_id = $t "
                        "AND path = $p", {"k": kind[path], "ids": ids, "t": db.tenant, "p": path})

        when = at if at is not None else utcnow().replace(tzinfo=None)
        for path, (slots, ids) in new_rows.items():
            note = parsed[path]
            cur.execute("DELETE FROM anatid_vault_files WHERE tenant_id = $t AND path = $p",
                        {"t": db.tenant, "p": path})
            cur.execute("""INSERT INTO anatid_vault_files VALUES ($t, $p, $h, $title, $entity, $kind, $ids, $hashes,
                           $links, $sup, $when, NULL)""",
                        {"t": db.tenant, "p": path, "h": note.content_hash, "title": note.title,
                         "entity": entity[path], "kind": kind[path], "ids": ids, "hashes": [h for _, h, _ in slots],
                         "links": note.links, "sup": note.superseded_by, "when": when})
        for path in gone:
            cur.execute("UPDATE anatid_vault_files SET deleted_at = $when, memory_ids = [] "
                        "WHERE tenant_id = $t AND path = $p", {"when": when, "t": db.tenant, "p": path})

        _sync_edges(db, cur, titles, links, replaced_by, entity, resolve, stored, report, now)
    report.seconds = time.monotonic() - t0
    return report


_OPEN_VAULT_EDGES = """
SELECT s.name, d.name, e.rel_kind
FROM anatid_edges e
JOIN anatid_entities s ON s.entity_id = e.src_id
JOIN anatid_entities d ON d.entity_id = e.dst_id
WHERE e.tenant_id = $t AND e.kind = 'relates' AND e.tx_to IS NULL AND e.valid_to IS NULL
  AND e.rel_kind IN (SELECT unnest($kinds)) AND s.name_key IN (SELECT unnest($keys))
"""


def _sync_edges(db, cur, titles, links, replaced_by, entity, resolve, stored, report, now) -> None:
    """Open the links the vault has and close the ones it lost, by entity name."""
    want = set()
    for path in titles:
        for target in links[path]:
            dst = resolve(target)
            if dst is None:
                report.unresolved_links += 1
            elif dst != path and validate.name_key(entity[dst]) != validate.name_key(entity[path]):
                want.add((validate.name_key(entity[path]), validate.name_key(entity[dst]), "links_to"))
        if path in replaced_by:
            want.add((validate.name_key(entity[path]), validate.name_key(entity[replaced_by[path]]), "superseded_by"))
    display = {validate.name_key(n): n for n in entity.values()}
    owners = {validate.name_key(s.entity) for s in stored.values()} | set(display)
    rows = cur.execute(_OPEN_VAULT_EDGES, {"t": db.tenant, "kinds": list(LINK_KINDS), "keys": sorted(owners)})
    have = {(validate.name_key(a), validate.name_key(b), k) for a, b, k in rows.fetchall()}
    names = {**{validate.name_key(s.entity): s.entity for s in stored.values()}, **display}
    for a, b, k in sorted(have - want):
        report.links_closed += db.unrelate(names.get(a, a), names.get(b, b), k, now=now)
    # unrelate closes both directions; reopen what is still wanted
    rows = cur.execute(_OPEN_VAULT_EDGES, {"t": db.tenant, "kinds": list(LINK_KINDS), "keys": sorted(owners)})
    have = {(validate.name_key(a), validate.name_key(b), k) for a, b, k in rows.fetchall()}
    opened = [(display[a], display[b], k) for a, b, k in sorted(want - have)]
    db.relate_many(opened, now=now)  # one set-based write, not a relate per link
    report.links_opened += len(opened)
