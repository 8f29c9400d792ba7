"""The path rules of DatabasePool: which tenant names and templates are refused, and why.

Every check runs before the pool creates anything, so a refused name leaves the disk as it was.
"""
from __future__ import annotations

import errno
import os
import stat
import string
from pathlib import Path

from .errors import ValidationError
from .validate import encodable, shown

PLACEHOLDER = "{tenant}"
MAX_NAME_BYTES = 255  # a file-name component on every common filesystem
# The names DuckDB (2.0.1, and the 1.5.6 CLI: read from both binaries, then tried) gives files
# beside a database `x`: its WAL `x.wal`, the checkpoint's WAL `x.wal.checkpoint`, `x.wal.recovery`,
# and the spill folder `x.tmp` (temp_directory's default). Opening `x` took a database stored as
# `x.wal` or `x.wal.checkpoint` for its own log, and that database was gone.
SIDECAR_SUFFIXES = (".wal", ".wal.checkpoint", ".wal.recovery", ".tmp")
SIDECAR_BYTES = max(len(s) for s in SIDECAR_SUFFIXES)   # reserved in every file name: DuckDB adds it later


def sidecar_suffix(file_name: str) -> str | None:
    """The DuckDB sidecar suffix `file_name` ends with, if any (case-insensitively: on macOS
    and Windows `x.WAL` is `x.wal`)."""
    folded = file_name.lower()
    return next((s for s in SIDECAR_SUFFIXES if folded.endswith(s)), None)


def tenant_name(tenant) -> str:
    """The tenant as a single, safe path component, or ValidationError."""
    if isinstance(tenant, bool) or not isinstance(tenant, (str, int)):
        raise ValidationError("tenant", f"expected a str or int, got {type(tenant).__name__}",
                              "a non-empty name without separators, or a non-negative int")
    # a subclass as the plain str/int it holds: its own methods never run in a check or a message
    tenant = int.__index__(tenant) if isinstance(tenant, int) else str.__str__(tenant)
    if isinstance(tenant, int):
        if tenant < 0:
            raise ValidationError("tenant", f"{tenant} is negative", "a non-negative int")
        if tenant.bit_length() > 850:   # more digits than a file name holds (and str() refuses 4,300+)
            raise ValidationError("tenant", f"an integer of {tenant.bit_length()} bits has more than "
                                  f"{MAX_NAME_BYTES} digits", f"a non-negative int of at most {MAX_NAME_BYTES} "
                                  "digits")
        return str(tenant)
    problem = None
    if tenant == "":
        problem = "is empty"
    elif tenant in (".", ".."):
        problem = f"{tenant!r} names a directory, not a tenant"
    elif "\x00" in tenant:
        problem = "contains a NUL character"
    elif "/" in tenant or "\\" in tenant or (os.altsep and os.altsep in tenant):
        problem = "contains a path separator"
    else:
        try:
            if len(tenant.encode("utf-8")) > MAX_NAME_BYTES:
                problem = f"is longer than {MAX_NAME_BYTES} bytes"
        except UnicodeEncodeError:
            problem = "contains unpaired surrogates"
    if problem:
        raise ValidationError("tenant", f"{shown(tenant)} {problem} (refused, never rewritten)",
                              "a non-empty name without '/', '\\\\', NUL, and not '.' or '..'")
    return tenant


def check_template(template) -> str:
    """The template as a plain str, or ValidationError: exactly the {tenant} field, relative,
    and no file name that ends like a sidecar whatever the name."""
    if not isinstance(template, str) or PLACEHOLDER not in (template := str.__str__(template)):
        raise ValidationError("path_template", f"{shown(template)} has no {PLACEHOLDER}",
                              "a relative path containing {tenant}, e.g. 'tenants/{tenant}.anatid'")
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ValidationError("path_template", f"{template!r}: {exc}", "a path with only {tenant}") from None
    if set(fields) != {"tenant"}:
        raise ValidationError("path_template", f"{template!r} has fields {sorted(set(fields))}",
                              "only the {tenant} field")
    if os.path.isabs(template) or "\x00" in template:
        raise ValidationError("path_template", f"{template!r} is absolute or contains NUL",
                              "a path relative to root")
    encodable(template, "path_template", "a valid Unicode path")
    last = template.replace("\\", "/").rsplit("/", 1)[-1]
    suffix = sidecar_suffix(last.rsplit(PLACEHOLDER, 1)[-1])
    if suffix is not None:
        raise ValidationError("path_template", f"{template!r}: every file would end in {suffix!r}, a suffix "
                              "DuckDB gives the files it writes beside a database (one tenant's file would be "
                              "another's)", "a file name not ending in " + ", ".join(SIDECAR_SUFFIXES) +
                              ", e.g. 'tenants/{tenant}.anatid'")
    return template


def fs_limit(root: Path, name: str, default: int) -> int:
    """os.pathconf(root, name), or `default` where the platform has no such limit."""
    try:
        return os.pathconf(root, name)
    except (OSError, ValueError, AttributeError):   # no pathconf (Windows) or no such limit
        return default


def check_file_name(name: str, file_name: str, parts: tuple, name_max: int) -> None:
    """Refuse tenant `name` if its file `file_name` is named like another file's sidecar, or if
    that name plus the longest sidecar suffix (or a folder name in `parts`) is over `name_max`
    bytes: DuckDB would fail only later, once the file exists ("cannot rollback", an orphan)."""
    suffix = sidecar_suffix(file_name)
    if suffix is not None:
        base = file_name[:-len(suffix)]
        raise ValidationError("tenant", f"{shown(name)}: its file {shown(file_name)} ends in {suffix!r}, the "
                              f"name DuckDB gives a file it writes beside the database {shown(base)}: opening "
                              "that tenant's file would replay or delete this one", "a name whose file does "
                              "not end in " + ", ".join(SIDECAR_SUFFIXES) + " (e.g. 'alice-wal' for "
                              "'alice.wal')")
    for part in parts[:-1]:
        if len(os.fsencode(part)) > name_max:
            raise ValidationError("tenant", f"{shown(name)} makes the folder name {shown(part)} "
                                  f"{len(os.fsencode(part))} bytes long, over the filesystem's "
                                  f"{name_max}-byte limit", "a shorter name")
    size = len(os.fsencode(file_name))
    if size + SIDECAR_BYTES > name_max:
        room = name_max - SIDECAR_BYTES - (size - len(os.fsencode(name)))
        raise ValidationError("tenant", f"{shown(name)}: its file name is {size} bytes, and DuckDB writes "
                              f"files beside it named with up to {SIDECAR_BYTES} bytes more "
                              f"('.wal.checkpoint'), over the filesystem's {name_max}-byte limit",
                              f"a name of at most {max(room, 0)} bytes (UTF-8) with this template")


def probe(name: str, path: Path) -> None:
    """Refuse a path the filesystem cannot open as a file: a symlink loop, a file where a
    folder must be, a folder where the file must be."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise unusable(name, path, exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise ValidationError("tenant", f"{shown(name)}: {str(path)!r} exists and is not a file "
                              f"(mode {st.st_mode:o})", "a name whose path is free or an anatid file")

def unusable(name: str, path: Path, exc: OSError) -> ValidationError:
    why = {errno.ELOOP: "runs through a symlink loop", errno.ENOTDIR: "runs through a file where a "
           "folder must be"}.get(exc.errno, f"cannot be used ({exc.strerror})")
    return ValidationError("tenant", f"{shown(name)}: its path {str(path)!r} {why}",
                           "a name whose path under the root is free or an anatid file: remove the "
                           "broken link or file")

