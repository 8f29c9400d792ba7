"""DatabasePool: one anatid file per tenant, the filesystem as the boundary.

`DatabasePool("tenants/{tenant}/memory.anatid", root="/srv/anatid")` maps a
tenant name to a file under `root`. A name is refused, never sanitised: an
empty name, `.` or `..`, a path separator, a NUL or a name whose path resolves
outside `root` (through a symlink, say) raises ValidationError, because a
sanitised name can collide with another tenant's. So is a name whose file
would end in one of DuckDB's sidecar suffixes (`.wal`, `.wal.checkpoint`,
`.wal.recovery`, `.tmp`, case-insensitively): DuckDB writes those files beside
a database, so tenant `alice.wal` under `{tenant}` would be tenant `alice`'s
write-ahead log, and opening `alice` replays or deletes it. So is a name whose
file name, plus the longest sidecar suffix, is over the filesystem's name
limit, and a path through a symlink loop or a file where a folder must be; a
refused name creates nothing. Folders the pool creates are 0700 and files are
0600 (the 0700 folder is what guards DuckDB's `.wal`, which DuckDB creates
with its own mode). At most `max_open` handles stay open; the least recently
used one that is neither pinned nor running a call is closed when another is
needed.

Each file records the tenant it was created for (`anatid_meta.pool_tenant`);
a handle is refused when the file under a name belongs to another tenant (a
renamed or hard-linked file), and a pooled handle refuses `require(other)`.
"""
from __future__ import annotations

import functools
import inspect
import os
import threading
import time
import weakref
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import duckdb

from .db import Anatid
from .errors import AnatidError, NotFoundError, ValidationError
from .pool_paths import (PLACEHOLDER, SIDECAR_BYTES, check_file_name, check_template, fs_limit, probe,
                         tenant_name, unusable)
from .validate import encodable, shown

if TYPE_CHECKING:
    from .store import Store

_META_KEY = "pool_tenant"

_BUSY_WAIT_SECONDS = 10.0   # how long get() waits for a call on a handle to end before PoolExhausted


class CrossTenantError(AnatidError, PermissionError):
    """A pooled handle or file was asked to serve a tenant other than its own."""


class PoolExhausted(AnatidError):
    """max_open handles are open and none can be closed: each is pinned by a `with pool.tenant(...)`
    block or running a call."""


class PooledAnatid(Anatid):
    """An Anatid bound to one tenant of a pool (tenant_id 0 inside its own file).

    Every public method counts as a running call while it runs (a `transaction()` block for
    its whole body): the pool never closes a handle with a call running, and a call on a
    handle the pool has closed raises AnatidError. SQL you run yourself through `connection`
    is not counted: do that inside `with pool.tenant(...)`, which pins the handle.
    """

    def __init__(self, store: Store, tenant_name: str, pool: DatabasePool | None = None) -> None:
        super().__init__(store)
        self.tenant_name = tenant_name
        # weak: a pool dropped without close() is freed at once, and with it its files' connections
        self._pool = weakref.ref(pool) if pool is not None else lambda: None
        self._calls_lock = threading.Lock()
        self._running = 0
        self._mine = threading.local()  # depth: calls this thread runs on this handle
        self._retired = False   # the pool closed it, or will as its last running call ends

    def require(self, tenant: str | int) -> PooledAnatid:
        """This handle, or CrossTenantError unless `tenant` is this handle's tenant.

        Raises:
            CrossTenantError: `tenant` is another tenant's name.
            ValidationError: `tenant` is not a valid tenant name.

        Example: ``pool.get("acme").require("acme").recall("tea")``
        """
        if tenant_name(tenant) != self.tenant_name:
            raise CrossTenantError(f"this handle serves tenant {self.tenant_name!r}, not {shown(tenant)}: "
                                   "ask the pool for that tenant's handle")
        return self

    @contextmanager
    def _call(self) -> Iterator[None]:
        mine = getattr(self._mine, "depth", 0)  # a call inside this thread's running call is part of it
        with self._calls_lock:
            if (self._retired and not mine) or self._store.closed:
                raise AnatidError(f"this handle of tenant {self.tenant_name!r} is closed (its pool evicted or "
                                  "closed it): ask the pool again, pool.get(...), or hold it in "
                                  "`with pool.tenant(...)` to keep it open")
            self._running += 1
        pool = self._pool()
        local = pool._local if pool is not None else None
        if local is not None:
            local.depth = getattr(local, "depth", 0) + 1
        self._mine.depth = mine + 1
        try:
            yield
        finally:
            self._mine.depth = mine
            if local is not None:
                local.depth -= 1
            with self._calls_lock:
                self._running -= 1
                last_out = self._running == 0 and self._retired
            if last_out:    # evicted or closed while this call ran: the last call out closes the file
                self._close_file()
                if pool is not None and pool._waiting:
                    pool._wake()

    def _retire(self) -> bool:
        """Refuse new calls and close the file now, if no call is running; else False (nothing done)."""
        with self._calls_lock:
            if self._running:
                return False
            self._retired = True
        self._close_file()
        return True

    def _retire_later(self) -> None:
        """Refuse new calls; close the file now, or when its last running call ends."""
        with self._calls_lock:
            self._retired = True
            idle = self._running == 0
        if idle:
            self._close_file()

    def _reprieve(self) -> None:
        """Take back a _retire_later() whose wait timed out, if a call still runs (the last call
        out has not decided to close the file yet)."""
        with self._calls_lock:
            if self._running:
                self._retired = False

    def _close_file(self) -> None:
        try:
            self.close()
        except duckdb.Error:    # SQL of the caller's own through `connection` still runs: the handle is
            pass                # closed to anatid now, and DuckDB lets go of the file once that SQL is done
        DatabasePool._restrict(Path(self._store.path))

    @contextmanager
    def transaction(self) -> Iterator[PooledAnatid]:
        """Run several verbs (and reads) as one transaction and one snapshot; the handle counts
        as in use until the block ends.

        Raises:
            AnatidError: the pool has closed this handle.
            ConflictError: a concurrent transaction changed the same rows (at commit).

        Example: ``with pool.get("acme").transaction() as db: db.remember("a")``
        """
        with self._call(), Anatid.transaction(self):
            yield self


def _guarded(method):
    @functools.wraps(method)
    def call(self, *args, **kw):
        with self._call():
            return method(self, *args, **kw)
    return call


# Every public method of Anatid (its own and its mixins') runs as a counted call (close, as_of
# and transaction excepted: as_of's reads call these methods, transaction is counted for its
# whole block above). functools.wraps keeps each method's signature and docstring.
for _verb in dir(Anatid):
    _method = inspect.getattr_static(Anatid, _verb)
    if not _verb.startswith("_") and inspect.isfunction(_method) and _verb not in ("close", "as_of", "transaction"):
        setattr(PooledAnatid, _verb, _guarded(_method))


class DatabasePool:
    """Open anatid files by tenant name, at most `max_open` at a time (LRU)."""

    def __init__(self, path_template: str, *, root: str | os.PathLike[str], max_open: int = 16,
                 embedding_dim: int | None = None, read_only: bool = False) -> None:
        """A pool of one file per tenant; nothing is opened until get() or tenant().

        Args:
            path_template: the file of a tenant under root, with one "{tenant}" placeholder.
            root: the folder every tenant's file stays under (created 0700 when missing).
            max_open: how many handles stay open at most.
            embedding_dim: passed to Anatid.open for every file.
            read_only: open every file read-only (a missing tenant raises NotFoundError).

        Raises:
            ValidationError: a bad template, root or max_open.

        Example: ``pool = DatabasePool("tenants/{tenant}/memory.anatid", root="/srv/anatid")``
        """
        self.template = check_template(path_template)
        if isinstance(max_open, bool) or not isinstance(max_open, int) or max_open < 1:
            raise ValidationError("max_open", f"{shown(max_open)} is not a positive int", "an int >= 1")
        try:
            folder: Any = os.fspath(root) if isinstance(root, (str, os.PathLike)) else None
        except Exception:   # a PathLike whose own __fspath__ raised or returned neither str nor bytes
            folder = None
        if not isinstance(folder, str) or not folder or "\x00" in folder:
            raise ValidationError("root", f"{shown(folder)} is not a folder path", "a folder path (str or pathlib.Path)")
        folder = encodable(str.__str__(folder), "root", "a valid Unicode folder path")
        folder = Path(folder)
        try:
            if not folder.exists() and not read_only:
                folder.mkdir(mode=0o700, parents=True)
                os.chmod(folder, 0o700)
        except OSError as exc:  # a name too long, a parent that is a file or not writable
            raise ValidationError("root", f"{shown(str(folder))} cannot be created ({exc.strerror})",
                                  "an existing or creatable folder") from exc
        if not folder.is_dir():
            raise ValidationError("root", f"{str(folder)!r} is not a folder", "an existing or creatable folder")
        self.root = Path(os.path.realpath(folder))
        self._name_max = fs_limit(self.root, "PC_NAME_MAX", 255)
        self._path_max = fs_limit(self.root, "PC_PATH_MAX", 4096)
        self.max_open = max_open
        self.embedding_dim = embedding_dim
        self.read_only = read_only
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)   # a call ended on a handle get() could close
        self._waiting = 0
        self._local = threading.local()                 # depth: calls this thread runs on pooled handles
        self._open: OrderedDict[str, PooledAnatid] = OrderedDict()  # least recently used first
        self._pins: dict[str, int] = {}
        self.closed = False

    # -- paths ---------------------------------------------------------------------------------
    def path_for(self, tenant: str | int) -> Path:
        """The file of `tenant` under root (nothing is created).

        Raises:
            ValidationError: a refused tenant name (the module docstring lists the rules).

        Example: ``pool.path_for("acme")``
        """
        name = tenant_name(tenant)
        relative = self.template.replace(PLACEHOLDER, name)
        candidate = self.root / relative
        check_file_name(name, candidate.name, Path(relative).parts, self._name_max)
        try:
            resolved = Path(os.path.realpath(candidate))
        except OSError as exc:  # realpath itself gave up (a loop, on some Pythons)
            raise unusable(name, candidate, exc) from None
        if resolved == self.root or os.path.commonpath([self.root, resolved]) != str(self.root):
            raise ValidationError("tenant", f"{shown(name)} resolves to {str(resolved)!r}, outside the pool root",
                                  f"a name whose file stays under {str(self.root)!r}")
        if resolved.name != candidate.name:     # a symlink to a file named otherwise: check that name too
            check_file_name(name, resolved.name, (), self._name_max)
        if len(os.fsencode(str(resolved))) + SIDECAR_BYTES >= self._path_max:
            raise ValidationError("tenant", f"{shown(name)}: the path {shown(str(resolved))} with DuckDB's "
                                  f"{SIDECAR_BYTES}-byte sidecar suffix is over the {self._path_max}-byte path "
                                  "limit", "a shorter name, template or root")
        probe(name, resolved)
        return resolved

    def _prepare_folders(self, path: Path) -> list[Path]:
        """Create the missing folders of `path` (0700); the ones created, outermost first."""
        missing = []
        parent = path.parent
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        created = []
        for folder in reversed(missing):
            folder.mkdir(mode=0o700)
            created.append(folder)
            os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
        return created

    @staticmethod
    def _restrict(path: Path) -> None:
        for p in (path, Path(str(path) + ".wal")):
            try:
                os.chmod(p, 0o600)
            except FileNotFoundError:
                pass

    # -- handles -------------------------------------------------------------------------------
    def get(self, tenant: str | int) -> PooledAnatid:
        """The open handle of `tenant`, opening it (and closing the LRU idle one) if needed.

        The handle stays valid until it is evicted; hold it inside `with pool.tenant(...)`
        to keep it open. A handle is never closed while a call runs on it: when every open
        handle is pinned or busy, the least recently used busy one refuses new calls and is
        closed as its running calls end; get() waits for that (up to 10 s), then raises
        PoolExhausted. It raises PoolExhausted at once when every handle is pinned, or when
        the thread asking runs a call on a pooled handle itself (waiting could wait on it).

        Raises:
            ValidationError: a refused tenant name.
            CrossTenantError: the file under that name belongs to another tenant.
            PoolExhausted: no handle could be closed to make room (see above).
            NotFoundError: a read-only pool has no file for this tenant.
            AnatidError: the pool is closed.

        Example: ``pool.get("acme").remember("Ada prefers tea")``
        """
        with self._lock:
            if self.closed:
                raise AnatidError("this pool is closed")
            name = tenant_name(tenant)
            handle = self._open.get(name)
            if handle is not None and handle._retired:     # being evicted: its last call closes it
                self._wait_closed(handle)
            if handle is not None and not handle._store.closed:
                self._open.move_to_end(name)
                return handle
            if self._open.get(name) is handle is not None:  # closed by its caller (`with pool.get(...)`)
                del self._open[name]
            path = self.path_for(name)
            self._make_room()
            handle = self._open_file(name, path)
            self._open[name] = handle
            return handle

    @contextmanager
    def tenant(self, tenant: str | int) -> Iterator[PooledAnatid]:
        """The handle of `tenant`, pinned against eviction for the block (get()'s errors).

        Example: ``with pool.tenant("acme") as db: db.recall("tea")``
        """
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
            for n in [n for n, h in self._open.items() if h._store.closed]:   # by its caller or last call
                del self._open[n]
            if len(self._open) < self.max_open:
                return
            unpinned = [n for n in self._open if n not in self._pins]
            if not unpinned:
                raise PoolExhausted(f"all {self.max_open} open handles are pinned: raise max_open "
                                    "or leave a `with pool.tenant(...)` block first")
            idle = next((n for n in unpinned if self._open[n]._retire()), None)
            if idle is not None:
                del self._open[idle]
                continue
            victim = self._open[unpinned[0]]     # every unpinned handle runs a call: the LRU one goes
            self._check_may_wait()
            victim._retire_later()
            try:
                self._wait_closed(victim)
            except PoolExhausted:
                victim._reprieve()
                raise

    def _check_may_wait(self) -> None:
        if getattr(self._local, "depth", 0):
            raise PoolExhausted(f"all {self.max_open} open handles are pinned or running a call, and this "
                                "thread runs a call on one (waiting could wait on itself): raise max_open, "
                                "or ask for this tenant outside the running call")

    def _wait_closed(self, handle: PooledAnatid) -> None:
        """Wait (the pool lock released) until the last running call on `handle` has closed it."""
        self._check_may_wait()
        deadline = time.monotonic() + _BUSY_WAIT_SECONDS
        while not handle._store.closed:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PoolExhausted(f"all {self.max_open} open handles are pinned or running a call, and the "
                                    f"call on tenant {handle.tenant_name!r} did not end within "
                                    f"{_BUSY_WAIT_SECONDS:g} s: raise max_open, or pin long work with "
                                    "`with pool.tenant(...)`")
            self._waiting += 1
            try:
                self._idle.wait(min(left, 0.05))    # poll too: the last call closes without the pool lock
            finally:
                self._waiting -= 1

    def _wake(self) -> None:
        with self._lock:
            self._idle.notify_all()

    def _open_file(self, name: str, path: Path) -> PooledAnatid:
        existed = path.exists()
        created: list[Path] = []
        if not existed:
            if self.read_only:
                raise NotFoundError(f"tenant {name!r} has no file at {str(path)!r} (pool is read-only)")
            created = self._prepare_folders(path)
        try:
            db = Anatid.open(str(path), tenant=0, embedding_dim=self.embedding_dim, read_only=self.read_only)
        except BaseException:
            if not existed:
                self._remove_new(path, created)
            raise
        handle = PooledAnatid(db._store, name, self)
        try:
            self._restrict(path)
            self._claim(handle, name, existed)
        except BaseException:
            handle.close()
            if not existed:
                self._remove_new(path, created)
            raise
        return handle

    @staticmethod
    def _remove_new(path: Path, folders: list[Path]) -> None:
        """A refused open leaves nothing behind: the new file, its WAL, the folders made for it."""
        for p in (path, *(Path(str(path) + s) for s in (".wal", ".wal.checkpoint", ".wal.recovery"))):
            try:
                os.remove(p)
            except OSError:
                pass
        for folder in reversed(folders):
            try:
                os.rmdir(folder)
            except OSError:
                pass

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
        """Close every handle: an idle one now, one running a call when that call ends;
        later get() calls raise AnatidError.

        Example: ``pool.close()``
        """
        with self._lock:
            for name in list(self._open):
                self._open.pop(name)._retire_later()
            self.closed = True

    def __enter__(self) -> "DatabasePool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
