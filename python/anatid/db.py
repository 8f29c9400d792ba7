"""Anatid: the handle a user holds. A small facade: every method delegates to
a verb function in anatid.verbs (the write, read and upkeep methods live in
db_writes, db_reads and db_upkeep); the Store owns connection and transactions."""
from __future__ import annotations

import os
import random
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, TypeVar

from . import validate
from .db_reads import AsOf, ReadVerbs
from .db_upkeep import UpkeepVerbs
from .db_writes import WriteVerbs
from .errors import ConflictError, ValidationError
from .store import Store

if TYPE_CHECKING:
    import duckdb

    from ._native import NativeStatus

T = TypeVar("T")


def _path(path: str | os.PathLike[str]) -> str:
    """The file name to open: a str or os.PathLike of one (str(anything) would open a file
    named after the value's repr)."""
    try:
        p = os.fspath(path)
    except Exception:   # not a path, or the caller's own __fspath__ raised
        raise ValidationError("path", f"expected a file path, got {type(path).__name__}",
                              "a str or pathlib.Path, or ':memory:'") from None
    if not isinstance(p, str):
        raise ValidationError("path", f"expected a file path, got {type(p).__name__}",
                              "a str or pathlib.Path (bytes paths are not accepted)")
    p = str.__str__(p)
    if "\x00" in p:
        raise ValidationError("path", "contains a NUL character", "a file path without NUL")
    validate.encodable(p, "path", "a valid Unicode file path")
    longest = max((len(part.encode("utf-8")) for part in p.split(os.sep)), default=0)
    if longest > 255:   # NAME_MAX of every common filesystem: DuckDB's IOException otherwise
        raise ValidationError("path", f"has a file or folder name of {longest} bytes",
                              "names of at most 255 bytes between separators")
    return p


class Anatid(WriteVerbs, ReadVerbs, UpkeepVerbs):
    """An open anatid memory file, scoped to one tenant: `Anatid.open(path)`.

    Raw SQL through `connection` sees every tenant in the file: the tenant
    scope is enforced by the verbs, not by DuckDB.
    """

    def __init__(self, store: Store) -> None:
        self._store = store

    @classmethod
    def open(cls, path: str | os.PathLike[str] = "memory.anatid", *, tenant: int = 0,
             embedding_dim: int | None = None, read_only: bool = False) -> Anatid:
        """Open (or create) an anatid file and return a handle scoped to one tenant.

        Args:
            path: the file, or ":memory:" for a database that lives as long as the handle.
            tenant: the tenant id every verb of this handle reads and writes.
            embedding_dim: the embedding dimension, checked against the file's (default: the
                first embedding stored fixes it).
            read_only: open without writing (several processes may then read one file).

        Raises:
            ValidationError: a bad path or argument.
            DatabaseLocked: another process holds the file open for writing.
            SchemaVersionError: the file was written by an incompatible anatid.
            EmbeddingDimensionError: `embedding_dim` differs from the file's.

        Example: ``db = Anatid.open("memory.anatid")``
        """
        return cls(Store(_path(path), tenant=tenant, embedding_dim=embedding_dim, read_only=read_only))

    # -- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the file (idempotent); every later call on this handle raises AnatidError.

        Example: ``db.close()``
        """
        self._store.close()

    def __enter__(self) -> Anatid:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def tenant(self) -> int:
        """The tenant id this handle reads and writes."""
        return self._store.tenant

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """This thread's DuckDB cursor on the file, for your own SQL (every tenant is visible)."""
        return self._store.cursor()

    @property
    def native(self) -> NativeStatus:
        """NativeStatus: whether the C++ extension is loaded, and why not."""
        return self._store.native

    # -- transactions ------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Anatid]:
        """Run several verbs (and reads) as one transaction and one snapshot: all or nothing.

        Raises:
            ConflictError: a concurrent transaction changed the same rows (at commit).

        Example: ``with db.transaction(): db.remember("a"); db.remember("b")``
        """
        with self._store.transaction():
            yield self

    def atomic(self, fn: Callable[[Anatid], T], *, retries: int = 8, base_delay: float = 0.005) -> T:
        """Call fn(db) in one transaction; re-run it on retryable conflicts with jittered backoff.

        Args:
            fn: a function of the handle; its return value is returned.
            retries: how many re-runs after the first attempt.
            base_delay: the first backoff in seconds, doubled per attempt.

        Raises:
            ConflictError: still conflicting after `retries` re-runs, or not retryable.
            ValidationError: a bad argument.

        Example: ``db.atomic(lambda db: db.remember("counted once"))``
        """
        if not callable(fn):
            raise ValidationError("fn", f"expected a callable, got {type(fn).__name__}", "a function of the handle")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValidationError("retries", f"{validate.shown(retries)} is not a non-negative int", "an int >= 0")
        base_delay = validate.finite_number(base_delay, "base_delay", low=0.0, high=60.0)
        attempt = 0
        while True:
            try:
                with self._store.transaction():
                    return fn(self)
            except ConflictError as exc:
                if not exc.retryable or attempt >= retries or self._store.in_transaction:
                    raise
                time.sleep(base_delay * (2 ** attempt) * (0.5 + random.random()))
                attempt += 1


__all__ = ["Anatid", "AsOf"]
