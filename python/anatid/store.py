"""Connection, cursors and transactions of one open anatid file.

The Store owns the DuckDB connection (created by `_native.connect`, the one
module that loads the extension), hands each thread its own cursor, and
turns a block of statements into exactly one transaction. Verbs never call
BEGIN/COMMIT themselves.
"""
from __future__ import annotations

import itertools
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import duckdb

from . import schema, validate
from .errors import AnatidError, ConflictError, DatabaseLocked, ReadOnlyError, StorageError, ValidationError
from .group_commit import GroupCommit
from .ids import IdAllocator, allocator_for
from .predicates import TimeView
from .timeutil import WriteClock, to_db, utcnow

BRUTE_FORCE_CEILING = 100_000
SCAN_CEILING = 100_000

_clocks: dict[str, WriteClock] = {}
_memory_ids = itertools.count(1)
_clocks_lock = threading.Lock()


def _clock_for(key: str) -> WriteClock:
    with _clocks_lock:
        return _clocks.setdefault(key, WriteClock())


# DuckDB's words for a write (or read) the operating system refused: ENOSPC, EFBIG, EIO, EDQUOT,
# and the state it leaves after a failure it cannot roll back.
_STORAGE_MARKERS = ("Could not write", "Could not read", "Could not truncate", "Could not fsync", "Could not sync",
                    "Cannot open file", "No space left", "File too large", "Disk quota", "Input/output error",
                    "database has been invalidated")


def translate_duckdb_error(exc: Exception, path: str | None = None, *, opening: bool = False) -> AnatidError | None:
    """Map DuckDB's errors that have a meaning for anatid users. Only a real write-write
    conflict is a (retryable) ConflictError: a commit that failed to reach the disk is a
    StorageError, which no retry can fix."""
    text = str(exc)
    if "Could not set lock on file" in text or "Conflicting lock" in text:
        holder = text[text.find("Conflicting lock"):].split(". See", 1)[0] if "Conflicting lock" in text else ""
        return DatabaseLocked(
            "another process holds this file (DuckDB lets one process write a file, or several read it "
            "when every one opened it read_only=True): close the file in that process, or route this "
            f"work through it. {holder}".strip())
    if isinstance(exc, duckdb.IOException) or any(m in text for m in _STORAGE_MARKERS):
        return StorageError(path or "the database file", text, opening=opening)
    if "Conflict on" in text or "write-write conflict" in text:
        return ConflictError(f"a concurrent transaction changed the same rows: {text}", retryable=True)
    if isinstance(exc, duckdb.TransactionException) and "constraint violation" in text:
        # two transactions inserted the same key: DuckDB finds it at the second one's commit
        return ConflictError(f"a concurrent transaction inserted the same key: {text}", retryable=True)
    if isinstance(exc, duckdb.ConstraintException) and ("anatid_entities" in text or "name_key" in text):
        return ConflictError(f"a concurrent transaction created the same entity: {text}", retryable=True)
    return None


@dataclass
class _ThreadState:
    cursor: duckdb.DuckDBPyConnection | None = None
    depth: int = 0
    snapshot_depth: int = 0
    clock_before: object = None      # the write clock's last instant when the transaction began
    clock_taken: object = None       # the last write instant this transaction took


def exhaust(con: duckdb.DuckDBPyConnection) -> None:
    """Read `con`'s last result to its end. DuckDB keeps a connection's transaction open
    while its last result is not exhausted (a fetchone()), and an open transaction holds
    back the cleanup of every UPDATE and DELETE committed after it began: no checkpoint can
    run, automatic or not ("other write transactions active"), and the WAL grows without
    bound (900 MB was seen from a writer of supersedes and updates). Costs microseconds."""
    try:
        con.fetchall()
    except duckdb.Error:     # no result to read
        pass


class Store:
    def __init__(self, path: str, *, tenant: int, embedding_dim: int | None, read_only: bool) -> None:
        from . import _native

        self.path = path
        self.tenant = validate.tenant(tenant)
        self.read_only = read_only
        try:
            self.con, self.native = _native.connect(path, read_only=read_only)
        except duckdb.Error as exc:
            mapped = translate_duckdb_error(exc, path, opening=True)
            if mapped is not None:
                raise mapped from exc
            raise
        # a closed connection's id() can be reused: a counter names each in-memory database once
        self._key = os.path.realpath(path) if path not in (":memory:", "") else f":memory:{next(_memory_ids)}"
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._cursors_lock = threading.Lock()
        try:
            self.schema_version = schema.ensure_schema(self.con, read_only)
            self.embedding_dim = self._settle_embedding_dim(embedding_dim)
        except BaseException:
            # A refused open must let go of the file: a leaked connection keeps DuckDB's
            # instance (and its config) alive until garbage collection.
            self.con.close()
            raise
        self.ids: IdAllocator = allocator_for(self._key, schema.max_id(self.con))
        self.clock: WriteClock = _clock_for(self._key)
        # tx time keeps increasing across processes: the next write comes after the file's last
        self.clock.observe(schema.last_write_instant(self.con))
        exhaust(self.con)    # the setup's last fetchone() would hold a transaction open for good
        # concurrent remembers share one transaction and one fsync (anatid.group_commit)
        self.group = GroupCommit(self._remember_group)
        self.closed = False

    # -- setup -------------------------------------------------------------------------------
    def _settle_embedding_dim(self, asked: int | None) -> int | None:
        stored = schema.get_meta(self.con, "embedding_dim")
        if asked is not None:
            asked = validate.positive_int(asked, "embedding_dim", maximum=65_536)
        if stored is None:
            if asked is not None and not self.read_only:
                self.con.execute("INSERT INTO anatid_meta VALUES ('embedding_dim', ?)", [str(asked)])
            return asked
        if asked is not None and asked != int(stored):
            raise ValidationError("embedding_dim", f"{asked} differs from the file's {stored}",
                                  f"{stored}, or omit it to use the stored value")
        return int(stored)

    def _remember_group(self, calls: list[tuple]) -> list:
        from .verbs.grouped import remember_group
        return remember_group(self, calls)

    # -- cursors and transactions ----------------------------------------------------------------
    def _state(self) -> _ThreadState:
        st = getattr(self._local, "state", None)
        if st is None:
            st = self._local.state = _ThreadState()
        return st

    def cursor(self) -> duckdb.DuckDBPyConnection:
        if self.closed:
            raise AnatidError("this anatid handle is closed")
        st = self._state()
        if st.cursor is None:
            st.cursor = self.con.cursor()
            with self._cursors_lock:
                self._cursors.append(st.cursor)
        return st.cursor

    @contextmanager
    def write(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction for one write verb; joins an enclosing transaction()."""
        if self.read_only:
            raise ReadOnlyError("this handle was opened read_only=True: reopen it read-write to write")
        with self.transaction() as cur:
            yield cur

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        cur = self.cursor()
        st = self._state()
        if st.depth > 0:
            st.depth += 1
            try:
                yield cur
            finally:
                st.depth -= 1
            return
        cur.begin()
        st.depth = 1
        st.clock_before, st.clock_taken = self.clock.last, None
        try:
            yield cur
            cur.commit()
        except BaseException as exc:
            try:
                cur.rollback()
            except duckdb.Error:
                pass
            if st.clock_taken is not None:   # a refused write leaves the clock where it was
                self.clock.retract(st.clock_before, st.clock_taken)
            if isinstance(exc, duckdb.Error):
                mapped = translate_duckdb_error(exc, self.path)
                if mapped is not None:
                    raise mapped from exc
            raise
        finally:
            st.depth = 0
            st.clock_before = st.clock_taken = None

    @property
    def in_transaction(self) -> bool:
        return self._state().depth > 0

    def read(self) -> duckdb.DuckDBPyConnection:
        return self.cursor()

    def settle(self) -> None:
        """Read this thread's last result to its end (a write ends with COMMIT instead). See exhaust()."""
        st = getattr(self._local, "state", None)
        if st is not None and st.cursor is not None:
            exhaust(st.cursor)

    @contextmanager
    def settling(self) -> Iterator[None]:
        """Around a read verb: settle() as it returns or raises."""
        try:
            yield
        finally:
            self.settle()

    # -- time --------------------------------------------------------------------------------------
    def write_instant(self, now) -> "object":
        t = self.clock.next(now)
        st = self._state()
        if st.depth > 0:
            st.clock_taken = t if st.clock_taken is None or t > st.clock_taken else st.clock_taken
        return t

    def view(self, as_of=None, valid_at=None) -> TimeView:
        """Current view at the reading instant, or the historical view at as_of."""
        if as_of is None:
            now = utcnow().replace(tzinfo=None)
            last = self.clock.last
            if last is not None and last > now:
                now = last
            va = to_db(valid_at, "valid_at") if valid_at is not None else now
            return TimeView(valid_at=va)
        t = to_db(as_of, "as_of")
        va = to_db(valid_at, "valid_at") if valid_at is not None else t
        return TimeView(valid_at=va, tx_at=t)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with self._cursors_lock:
            for c in self._cursors:
                try:
                    c.close()
                except duckdb.Error:
                    pass
            self._cursors.clear()
        self.con.close()
