"""Reading a markdown vault: which files are notes, and what each note says.

A note's identity is its path relative to the vault (POSIX, with extension).
Its title comes from front matter `title:`, else the first `# H1` outside code,
else the file name. Wikilinks `[[target#heading|alias]]` resolve by path
without extension, then by file name, both case-insensitively, the way
Obsidian resolves them; links inside code fences and inline code are text,
not links. Which files are notes, and reading them safely, is files.py.
"""
from __future__ import annotations

import codecs
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ValidationError
from . import files
from .files import NOTE_SUFFIXES

CHUNK_CHARS = 900
# An entity name holds the title and, for a second note with that title, its path:
# title + " (path, n)" stays under validate.MAX_NAME_CHARS with files.MAX_PATH_CHARS.
MAX_TITLE_CHARS = 300

_LINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_UTF_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
              (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


@dataclass
class Note:
    path: str                       # relative POSIX path, with extension
    title: str
    front: dict[str, str]
    body: str                       # text after the front matter
    chunks: list[str]
    links: list[str]                # raw link targets, anchors and aliases stripped, in order, unique
    superseded_by: str | None       # raw link target from front matter
    content_hash: str
    first_paragraph: str = ""
    link_spans: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return note_key(self.path)


def note_key(path: str) -> str:
    """The case-folded path without extension: what a [[folder/note]] link names."""
    stem = path.rsplit(".", 1)[0] if path.lower().endswith(NOTE_SUFFIXES) else path
    return stem.casefold()


def stem_key(path: str) -> str:
    return note_key(path).rsplit("/", 1)[-1]


def is_skipped(rel_parts: tuple[str, ...]) -> bool:
    """Dot-folders (.obsidian, .trash, .git) and sync-conflict copies are not notes."""
    return files.is_hidden(rel_parts) or files.is_conflict(rel_parts[-1])


def scan(vault: str | os.PathLike) -> list[str]:
    """Relative paths of every note in the vault, sorted (the order is the contract).
    files.scan_vault says also what it refused and why."""
    return files.scan_vault(vault).paths


def content_problem(data: bytes) -> str | None:
    """Why these bytes are not a markdown note, or None. A stray undecodable byte is not a
    reason (read_text makes it U+FFFD); NUL bytes are: binary data, or UTF-16/32 text."""
    for bom, enc in _UTF_BOMS:
        if data.startswith(bom):
            return f"is {enc} text (it starts with a {enc} byte-order mark): re-save it as UTF-8"
    nul = data.find(b"\x00")
    if nul >= 0:
        return f"contains a NUL byte at offset {nul}: a binary file, or UTF-16/UTF-32 text (re-save it as UTF-8)"
    return None


def read_text(data: bytes) -> str:
    """UTF-8 with or without a BOM; undecodable bytes become U+FFFD rather than failing the vault."""
    return data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """A minimal `key: value` reader: enough for title and superseded_by, no YAML dependency."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    after = text.find("\n", end + 4)
    body = "" if after < 0 else text[after + 1:]
    front = {}
    for line in text[4:end].split("\n"):
        if ":" not in line or line[:1].isspace() or line.lstrip().startswith("#"):
            continue
        key, value = line.split(":", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        front[key.strip().lower()] = value
    return front, body


def strip_code(text: str) -> str:
    """The text with fenced blocks and inline code removed: where links are not links."""
    out, fence = [], None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
                continue
            if m.group(1) == fence:
                fence = None
                continue
        if fence is None:
            out.append(_INLINE_CODE.sub(" ", line))
    return "\n".join(out)


def link_target(raw: str) -> str:
    """`folder/Note#Heading|alias` -> `folder/Note`; `#Heading` alone links to the same note -> ''."""
    target = raw.split("|", 1)[0].split("#", 1)[0].strip()
    if target.lower().endswith(NOTE_SUFFIXES):
        target = target.rsplit(".", 1)[0]
    return target


def wikilinks(text: str) -> list[str]:
    seen, out = set(), []
    for m in _LINK.finditer(strip_code(text)):
        target = link_target(m.group(1))
        key = target.casefold()
        if target and key not in seen:
            seen.add(key)
            out.append(target)
    return out


def render_links(text: str) -> str:
    """`[[target|alias]]` -> `alias`, `[[target#h]]` -> `target`: the prose a reader sees."""
    def one(m):
        raw = m.group(1)
        if "|" in raw:
            return raw.split("|", 1)[1].strip()
        return raw.split("#", 1)[0].strip() or raw.strip("#").strip()
    return _LINK.sub(one, text)


def h1_text(line: str) -> str | None:
    """The text of an ATX `# heading` line, or None: what `^#\\s+(.+?)\\s*#*\\s*$` captures, in
    linear time (that regex backtracks cubically on a long run of spaces inside the line)."""
    if not line.startswith("#"):
        return None
    rest = line[1:].lstrip()
    gap = len(line) - 1 - len(rest)         # the whitespace after '#', at least one
    if gap < 1:
        return None
    if not rest:                            # '#' and spaces only: the pattern keeps one space
        return line[-1] if gap >= 2 else None
    core = rest.rstrip().rstrip("#").rstrip()   # drop trailing spaces, a closing '#' run, spaces
    return core or rest[0]                  # all '#': the pattern keeps the first


def _title(front: dict[str, str], body: str, path: str) -> str:
    if front.get("title") and front["title"].strip():
        return front["title"].strip()
    for line in strip_code(body).split("\n"):
        text = h1_text(line)
        if text is not None:
            title = render_links(text).strip()
            if title:
                return title
            break
    name = Path(path).name.rsplit(".", 1)[0].strip()
    return name or path.strip()


def paragraphs(body: str) -> list[str]:
    """Blank-line separated blocks; a fenced code block stays one block."""
    blocks, cur, fence = [], [], None
    for line in body.split("\n"):
        m = _FENCE.match(line)
        if m:
            fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
        if not line.strip() and fence is None:
            if cur:
                blocks.append("\n".join(cur).strip())
                cur = []
            continue
        cur.append(line)
    if cur:
        blocks.append("\n".join(cur).strip())
    return [b for b in blocks if b]


def first_prose(blocks: list[str]) -> str:
    """The first paragraph that is prose: not a heading, list, quote, table, fence or tag line."""
    for b in blocks:
        head = b.lstrip()[:1]
        if head in "#-*>|`~+" or b.lstrip()[:2].rstrip(".").isdigit():
            continue
        if len(b.split()) >= 5:
            return render_links(b)
    return ""


def chunk(title: str, blocks: list[str], limit: int = CHUNK_CHARS) -> list[str]:
    """Paragraphs packed into chunks of about `limit` characters. The first chunk
    starts with the title when the body does not (so a title always finds its note)."""
    chunks, cur = [], ""
    for b in blocks:
        if cur and len(cur) + len(b) + 2 > limit:
            chunks.append(cur)
            cur = ""
        cur = f"{cur}\n\n{b}" if cur else b
    if cur:
        chunks.append(cur)
    if not chunks:
        chunks = [title]
    elif title.casefold() not in chunks[0][:len(title) + 200].casefold():
        chunks[0] = f"# {title}\n\n{chunks[0]}"
    return chunks


def parse(path: str, data: bytes) -> Note:
    text = read_text(data)
    front, body = split_front_matter(text)
    title = _title(front, body, path)
    blocks = paragraphs(body)
    sup = wikilinks(front.get("superseded_by", "")) if front.get("superseded_by") else []
    return Note(path=path, title=title, front=front, body=body, chunks=chunk(title, blocks),
                links=wikilinks(body), superseded_by=sup[0] if sup else None,
                content_hash=content_hash(data), first_paragraph=first_prose(blocks))


def read_note(vault: str | os.PathLike, rel: str) -> Note:
    """One note by its relative path, read as the ingest reads it (a regular file inside the
    vault, at most files.MAX_NOTE_BYTES, not binary). Raises ValidationError naming why not."""
    try:
        data = files.read_found(files.find_one(vault, rel))
    except files.Unreadable as exc:
        raise ValidationError(rel, str(exc), "a regular UTF-8 markdown file inside the vault") from None
    problem = content_problem(data)
    if problem:
        raise ValidationError(rel, problem, "a UTF-8 markdown file")
    return parse(rel, data)


class Resolver:
    """Link target -> note path, by case-folded path without extension, then by file name.
    Two notes with one file name: a bare [[name]] picks the shortest path, then the
    alphabetically first, as Obsidian does for an ambiguous link."""

    def __init__(self, paths):
        self.by_key: dict[str, str] = {}
        self.by_stem: dict[str, str] = {}
        for p in sorted(paths, key=lambda p: (p.count("/"), p)):
            self.by_key.setdefault(note_key(p), p)
            self.by_stem.setdefault(stem_key(p), p)

    def __call__(self, target: str) -> str | None:
        k = target.casefold().strip("/")
        return self.by_key.get(k) or self.by_stem.get(k.rsplit("/", 1)[-1])
