"""Which files of a vault are notes, and reading one without trusting the folder.

A vault may come from anywhere (a cloned repository, a sync folder), so a scan
takes only regular files that are inside the vault's real root:

* a file symlink is followed only when its target resolves inside the root;
  one pointing outside (`innocent.md -> ../secret.txt`), a dangling one and a
  loop are skipped with the reason;
* a folder symlink is never descended: when it points inside the root its notes
  are already scanned under their own paths (so a link to an ancestor cannot
  loop), when it points outside it is skipped and reported;
* FIFOs, devices and sockets are skipped unopened; so are names that are not
  UTF-8 and paths longer than MAX_PATH_CHARS.

Reading opens the file without following a symlink and without blocking,
checks it is still the regular file the scan vetted (same device and inode),
and reads at most MAX_NOTE_BYTES + 1 bytes. Every refusal is a `Skip` with a
reason a person can act on; nothing here raises for one bad file.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from .. import validate
from ..errors import ValidationError

NOTE_SUFFIXES = (".md", ".markdown")
# Syncthing, Dropbox, Nextcloud/ownCloud and Obsidian Sync leave these beside the real note.
_CONFLICT = re.compile(r"\.sync-conflict-|\(conflicted copy|\(conflict|_conflict-\d", re.IGNORECASE)
# A note is read whole and may be one paragraph, i.e. one chunk: the cap keeps every chunk
# (plus its title line) under validate.MAX_TEXT_CHARS, and a runaway file out of memory.
MAX_NOTE_BYTES = 512 * 1024
# The path is part of the writer (`vault:<path>`) and of a disambiguated entity name
# (`title (path)`), both at most validate.MAX_NAME_CHARS; 640 leaves room for both.
MAX_PATH_CHARS = 640

_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
assert validate.MAX_TEXT_CHARS > MAX_NOTE_BYTES + validate.MAX_NAME_CHARS


class Unreadable(Exception):
    """One note could not be read; the message is the reason shown to the user."""


@dataclass(frozen=True)
class Found:
    path: str            # relative POSIX path as named in the vault
    real: str            # absolute path of the regular file to open (a symlink's target)
    ident: tuple[int, int]   # (st_dev, st_ino) seen by the scan


@dataclass
class Scan:
    root: str                                   # the vault's real path
    found: dict[str, Found] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (shown path, reason)
    # paths (and "folder/" prefixes) the scan could not look at: what was stored there is kept,
    # not forgotten as deleted, since a permission glitch is not a deletion
    unsure: set[str] = field(default_factory=set)

    @property
    def paths(self) -> list[str]:
        return sorted(self.found)

    def skip(self, rel: str, reason: str, *, unsure: bool = False) -> None:
        self.skipped.append((shown(rel), reason))
        if unsure:
            self.unsure.add(rel)

    def uncertain(self, rel: str) -> bool:
        return rel in self.unsure or any(rel.startswith(u) for u in self.unsure if u.endswith("/"))


def shown(rel: str) -> str:
    """A path safe to print: bytes that are not UTF-8 as \\xNN, control characters escaped."""
    text = os.fsencode(rel).decode("utf-8", "backslashreplace")
    return "".join(repr(c)[1:-1] if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text)


def is_note_name(name: str) -> bool:
    return name.lower().endswith(NOTE_SUFFIXES)


def is_hidden(parts) -> bool:
    """Dot-folders (.obsidian, .trash, .git) and dot-files are not part of the vault."""
    return any(p.startswith(".") for p in parts)


def is_conflict(name: str) -> bool:
    return bool(_CONFLICT.search(name))


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return what
    return "not a regular file"


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def scan_vault(vault: str | os.PathLike) -> Scan:
    """Every note of the vault, found without leaving its real root. Dot-folders, dot-files,
    sync-conflict copies and files that are not notes by name are passed over in silence;
    everything else that is refused is in `skipped` with its reason."""
    if not Path(vault).is_dir():
        raise FileNotFoundError(f"vault {str(vault)!r} is not a directory")
    root = os.path.realpath(vault)
    out = Scan(root)
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if not rel_dir:
                raise ValidationError("vault", f"{str(vault)!r} cannot be read ({exc.strerror})",
                                      "a folder this user can list") from None
            out.skip(rel_dir + "/", f"folder cannot be read ({exc.strerror}): its notes are skipped", unsure=True)
            continue
        subdirs = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            note = is_note_name(entry.name) and not is_conflict(entry.name)
            try:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(rel)
                elif entry.is_symlink():
                    _symlink(out, rel, entry.path, note)
                elif note:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode):
                        _accept(out, rel, entry.path, st)
                    else:
                        out.skip(rel, f"is {_kind(st.st_mode)}, not a regular file")
            except FileNotFoundError:
                if note:
                    out.skip(rel, "vanished during the scan")
            except OSError as exc:
                if note:
                    out.skip(rel, f"cannot be inspected ({exc.strerror})", unsure=True)
        stack.extend(reversed(subdirs))
    return out


def _symlink(out: Scan, rel: str, path: str, note: bool) -> None:
    try:
        target = os.path.realpath(path, strict=True)
        st = os.stat(target)
    except OSError as exc:
        if note:
            what = "a symlink loop" if exc.errno == errno.ELOOP else "a dangling symlink"
            out.skip(rel, f"is {what} (to {shown(os.readlink(path))})")
        return
    inside = _inside(target, out.root)
    if stat.S_ISDIR(st.st_mode):
        if not inside:
            out.skip(rel + "/", f"is a folder symlink to {shown(target)}, outside the vault: not followed, "
                                "its notes are skipped (move or copy them into the vault)")
        elif target != out.root and is_hidden(os.path.relpath(target, out.root).split(os.sep)):
            out.skip(rel + "/", "is a folder symlink into a dot-folder: its notes are skipped")
        # else the target is a folder of the vault, scanned under its own path: never twice, never a loop
        return
    if not note:
        return
    if not inside:
        out.skip(rel, f"is a symlink to {shown(target)}, outside the vault: not followed")
    elif not stat.S_ISREG(st.st_mode):
        out.skip(rel, f"is a symlink to {_kind(st.st_mode)}, not a regular file")
    else:
        _accept(out, rel, target, st)


def _accept(out: Scan, rel: str, real: str, st: os.stat_result) -> None:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        out.skip(rel, "its name is not valid UTF-8: rename it")
        return
    if len(rel) > MAX_PATH_CHARS:
        out.skip(rel, f"its path is {len(rel)} characters long (at most {MAX_PATH_CHARS}): "
                      "move it to a shorter path")
        return
    out.found[rel] = Found(rel, real, (st.st_dev, st.st_ino))


def find_one(vault: str | os.PathLike, rel: str) -> Found:
    """The Found for one relative path, vetted as the scan would (Unreadable if refused)."""
    root = os.path.realpath(vault)
    try:
        real = os.path.realpath(os.path.join(root, rel), strict=True)
        st = os.stat(real)
    except OSError as exc:
        raise Unreadable(f"cannot be opened ({exc.strerror})") from None
    if not _inside(real, root):
        raise Unreadable(f"resolves to {shown(real)}, outside the vault")
    if not stat.S_ISREG(st.st_mode):
        raise Unreadable(f"is {_kind(st.st_mode)}, not a regular file")
    return Found(rel, real, (st.st_dev, st.st_ino))


def read_found(found: Found) -> bytes:
    """The bytes of a scanned note, or Unreadable naming why not (never blocks, never follows
    a symlink planted after the scan, never reads more than MAX_NOTE_BYTES + 1 bytes)."""
    try:
        fd = os.open(found.real, _OPEN_FLAGS)
    except FileNotFoundError:
        raise Unreadable("vanished during the ingest") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable("was replaced by a symlink during the ingest") from None
        raise Unreadable(f"cannot be read ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable(f"was replaced by {_kind(st.st_mode)} during the ingest")
        if (st.st_dev, st.st_ino) != found.ident:
            raise Unreadable("was replaced by another file during the ingest")
        if st.st_size > MAX_NOTE_BYTES:
            raise Unreadable(_too_big(st.st_size))
        parts, size = [], 0
        while size <= MAX_NOTE_BYTES:
            block = os.read(fd, MAX_NOTE_BYTES + 1 - size)
            if not block:
                break
            parts.append(block)
            size += len(block)
        if size > MAX_NOTE_BYTES:
            raise Unreadable(_too_big(size, grew=True))
        return b"".join(parts)
    except OSError as exc:
        raise Unreadable(f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


def _too_big(size: int, grew: bool = False) -> str:
    return (f"is {'over ' if grew else ''}{size} bytes (at most {MAX_NOTE_BYTES}, MAX_NOTE_BYTES): "
            "split it into smaller notes")
