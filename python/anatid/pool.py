"""DatabasePool: one anatid file per tenant, the filesystem as the boundary.

`DatabasePool("tenants/{tenant}/memory.anatid", root="/srv/anatid")` maps a
tenant name to a file under `root`. A name is refused, never sanitised: an
empty name, `.` or `..`, a path separator, a NUL or a name whose path resolves
outside `root` (through a symlink, say) raises ValidationError, because a
sanitised name can collide with another tenant's. Folders the pool creates are
0700 and files are 0600 (the 0700 folder is what guards DuckDB's `.wal`, which
DuckDB creates with its own mode). At most `max_open` handles stay open; the
least recently used unpinned one is closed when another is needed.

Each file records the tenant it was created for (`anatid_meta.pool_tenant`);
a handle is refused when the file under a name belongs to another tenant (a
renamed or hard-linked file), and a pooled handle refuses `require(other)`.
"""
from __future__ import annotations

import os
import string
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .db import Anatid
from .errors import AnatidError, ValidationError
from .validate import encodable, shown

_PLACEHOLDER = "{tenant}"
_META_KEY = "pool_tenant"
_MAX_NAME_BYTES = 255  # a file-name component on every common filesystem


class CrossTenantError(AnatidError, PermissionError):
    """A pooled handle or file was asked to serve a tenant other than its own."""


class PoolExhausted(AnatidError):
    """Every open handle is pinned by a `with pool.tenant(...)` block and max_open is reached."""


class PooledAnatid(Anatid):
    """An Anatid bound to one tenant of a pool (tenant_id 0 inside its own file)."""

    def __init__(self, store, tenant_name: str):
        super().__init__(store)
        self.tenant_name = tenant_name

    def require(self, tenant) -> "PooledAnatid":
        """Raise CrossTenantError unless `tenant` is this handle's tenant."""
        if _name(tenant) != self.tenant_name:
            raise CrossTenantError(f"this handle serves tenant {self.tenant_name!r}, not {shown(tenant)}: "
                                   "ask the pool for that tenant's handle")
        return self


def _name(tenant) -> str:
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
                                  f"{_MAX_NAME_BYTES} digits", f"a non-negative int of at most {_MAX_NAME_BYTES} "
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
            if len(tenant.encode("utf-8")) > _MAX_NAME_BYTES:
                problem = f"is longer than {_MAX_NAME_BYTES} bytes"
        except UnicodeEncodeError:
            problem = "contains unpaired surrogates"
    if problem:
        raise ValidationError("tenant", f"{tenant!r} {problem} (refused, never rewritten)",
                              "a non-empty name without '/', '\\\\', NUL, and not '.' or '..'")
    return tenant


def _check_template(template) -> str:
    if not isinstance(template, str) or _PLACEHOLDER not in (template := str.__str__(template)):
        raise ValidationError("path_template", f"{shown(template)} has no {_PLACEHOLDER}",
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
    return template


class DatabasePool:
    """Open anatid files by tenant name, at most `max_open` at a time (LRU)."""

    def __init__(self, path_template: str, *, root, max_open: int = 16, embedding_dim: int | None = None,
                 read_only: bool = False) -> None:
        self.template = _check_template(path_template)
        if isinstance(max_open, bool) or not isinstance(max_open, int) or max_open < 1:
            raise ValidationError("max_open", f"{shown(max_open)} is not a positive int", "an int >= 1")
        try:
            root = os.fspath(root) if isinstance(root, (str, os.PathLike)) else None
        except Exception:   # a PathLike whose own __fspath__ raised or returned neither str nor bytes
            root = None
        if not isinstance(root, str) or not root or "\x00" in root:
            raise ValidationError("root", f"{shown(root)} is not a folder path", "a folder path (str or pathlib.Path)")
        root = encodable(str.__str__(root), "root", "a valid Unicode folder path")
        root = Path(root)
        try:
            if not root.exists() and not read_only:
                root.mkdir(mode=0o700, parents=True)
                os.chmod(root, 0o700)
        except OSError as exc:  # a name too long, a parent that is a file or not writable
            raise ValidationError("root", f"{shown(str(root))} cannot be created ({exc.strerror})",
                                  "an existing or creatable folder") from exc
        if not root.is_dir():
            raise ValidationError("root", f"{str(root)!r} is not a folder", "an existing or creatable folder")
        self.root = Path(os.path.realpath(root))
        self.max_open = max_open
        self.embedding_dim = embedding_dim
        self.read_only = read_only
        self._lock = threading.RLock()
        self._open: OrderedDict[str, PooledAnatid] = OrderedDict()  # least recently used first
        self._pins: dict[str, int] = {}
        self.closed = False

    # -- paths ---------------------------------------------------------------------------------
    def path_for(self, tenant) -> Path:
        """The file of `tenant` under root, or ValidationError (nothing is created)."""
        name = _name(tenant)
        candidate = self.root / self.template.replace(_PLACEHOLDER, name)
        resolved = Path(os.path.realpath(candidate))
        if resolved == self.root or os.path.commonpath([self.root, resolved]) != str(self.root):
            raise ValidationError("tenant", f"{name!r} resolves to {str(resolved)!r}, outside the pool root",
                                  f"a name whose file stays under {str(self.root)!r}")
        return resolved

    def _prepare_folders(self, path: Path) -> None:
        missing = []
        parent = path.parent
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        for folder in reversed(missing):
            folder.mkdir(mode=0o700)
            os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask

    @staticmethod
    def _restrict(path: Path) -> None:
        for p in (path, Path(str(path) + ".wal")):
            try:
                os.chmod(p, 0o600)
            except FileNotFoundError:
                pass

    # -- handles -------------------------------------------------------------------------------
    def get(self, tenant) -> PooledAnatid:
        """The open handle of `tenant`, opening it (and evicting the LRU one) if needed.

        The handle stays valid until it is evicted; hold it inside `with pool.tenant(...)`
        to keep it open.
        """
        with self._lock:
            if self.closed:
                raise AnatidError("this pool is closed")
            name = _name(tenant)
            handle = self._open.get(name)
            if handle is not None:
                self._open.move_to_end(name)
                return handle
            path = self.path_for(name)
            self._make_room()
            handle = self._open_file(name, path)
            self._open[name] = handle
            return handle

    @contextmanager
    def tenant(self, tenant) -> Iterator[PooledAnatid]:
        """`with pool.tenant("acme") as db:` the handle, pinned against eviction."""
        with self._lock:
            handle = self.get(tenant)
            name = handle.tenant_name
            self._pins[name] = self._pins.get(name, 0) + 1
        try:
            yield handle
        finally:
            with self._lock:
                self._pins[name] -= 1
                if self._pins[name] == 0:
                    del self._pins[name]

    def _make_room(self) -> None:
        while len(self._open) >= self.max_open:
            victim = next((n for n in self._open if n not in self._pins), None)
            if victim is None:
                raise PoolExhausted(f"all {self.max_open} open handles are in use: raise max_open "
                                    "or leave a `with pool.tenant(...)` block first")
            self._close_one(victim)

    def _close_one(self, name: str) -> None:
        handle = self._open.pop(name)
        handle.close()
        self._restrict(Path(handle._store.path))

    def _open_file(self, name: str, path: Path) -> PooledAnatid:
        existed = path.exists()
        if not existed:
            if self.read_only:
                from .errors import NotFoundError
                raise NotFoundError(f"tenant {name!r} has no file at {str(path)!r} (pool is read-only)")
            self._prepare_folders(path)
        db = Anatid.open(str(path), tenant=0, embedding_dim=self.embedding_dim, read_only=self.read_only)
        handle = PooledAnatid(db._store, name)
        try:
            self._restrict(path)
            self._claim(handle, name, existed)
        except BaseException:
            handle.close()
            raise
        return handle

    def _claim(self, handle: PooledAnatid, name: str, existed: bool) -> None:
        """Record the owner in a new file; refuse a file that belongs to another tenant."""
        con = handle._store.cursor()
        row = con.execute("SELECT value FROM anatid_meta WHERE key = $k", {"k": _META_KEY}).fetchone()
        if row is None:
            if existed and self._has_rows(con):
                raise CrossTenantError(f"{str(handle._store.path)!r} holds data but no pool owner: "
                                       f"it was not created by a pool for tenant {name!r}")
            if not self.read_only:
                con.execute("INSERT INTO anatid_meta VALUES ($k, $v)", {"k": _META_KEY, "v": name})
        elif row[0] != name:
            raise CrossTenantError(f"the file for tenant {name!r} belongs to tenant {row[0]!r} "
                                   "(renamed or linked file): refusing to serve it")

    @staticmethod
    def _has_rows(con) -> bool:
        return con.execute("SELECT EXISTS (SELECT 1 FROM anatid_memories) OR EXISTS "
                           "(SELECT 1 FROM anatid_entities)").fetchone()[0]

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def open_tenants(self) -> list[str]:
        """Tenants with an open handle, least recently used first."""
        with self._lock:
            return list(self._open)

    def close(self) -> None:
        with self._lock:
            for name in list(self._open):
                self._close_one(name)
            self.closed = True

    def __enter__(self) -> "DatabasePool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
