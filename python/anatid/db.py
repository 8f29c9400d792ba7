"""Anatid: the handle a user holds. A small facade: every method delegates to
a verb function in anatid.verbs; the Store owns connection and transactions."""
from __future__ import annotations

import inspect
import os
import random
import time
from contextlib import contextmanager
from functools import partial
from typing import Callable, TypeVar

from . import validate, verbs
from .errors import ConflictError, ValidationError
from .store import Store

T = TypeVar("T")


def _path(path) -> str:
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


class Anatid:
    """An open anatid memory file, scoped to one tenant.

    Raw SQL through `connection` sees every tenant in the file: the tenant
    scope is enforced by the verbs, not by DuckDB.
    """

    def __init__(self, store: Store):
        self._store = store

    @classmethod
    def open(cls, path: str = "memory.anatid", *, tenant: int = 0, embedding_dim: int | None = None,
             read_only: bool = False) -> "Anatid":
        return cls(Store(_path(path), tenant=tenant, embedding_dim=embedding_dim, read_only=read_only))

    # -- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> "Anatid":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def tenant(self) -> int:
        return self._store.tenant

    @property
    def connection(self):
        """This thread's DuckDB cursor on the file, for your own SQL (every tenant is visible)."""
        return self._store.cursor()

    @property
    def native(self):
        """NativeStatus: whether the C++ extension is loaded, and why not."""
        return self._store.native

    # -- writes ------------------------------------------------------------------------------------
    def remember(self, content, entities=None, **kw):
        return verbs.remember(self, content, entities, **kw)

    def remember_many(self, items, **kw):
        return verbs.remember_many(self, items, **kw)

    def supersede(self, old_id, content, **kw):
        return verbs.supersede(self, old_id, content, **kw)

    def update(self, memory_id, content, **kw):
        return verbs.update(self, memory_id, content, **kw)

    def forget(self, memory_id, **kw):
        return verbs.forget(self, memory_id, **kw)

    def reinforce(self, memory_id, amount=1.0, **kw):
        return verbs.reinforce(self, memory_id, amount, **kw)

    def prune(self, **kw):
        return verbs.prune(self, **kw)

    def relate(self, a, b, rel_kind="related", **kw):
        return verbs.relate(self, a, b, rel_kind, **kw)

    def relate_many(self, pairs, **kw):
        return verbs.relate_many(self, pairs, **kw)

    def unrelate(self, a, b, rel_kind=None, **kw):
        return verbs.unrelate(self, a, b, rel_kind, **kw)

    def upsert_entity(self, name, kind=None, **kw):
        return verbs.upsert_entity(self, name, kind, **kw)

    def episode(self, content, **kw):
        return verbs.episode(self, content, **kw)

    # -- reads -------------------------------------------------------------------------------------
    def get(self, memory_id, **kw):
        return verbs.get(self, memory_id, **kw)

    def recall(self, query, **kw):
        return verbs.recall(self, query, **kw)

    def recall_2hop(self, seed, **kw):
        return verbs.recall_2hop(self, seed, **kw)

    def context(self, entity, **kw):
        return verbs.context(self, entity, **kw)

    def provenance(self, memory_id):
        return verbs.provenance(self, memory_id)

    def as_of(self, t) -> "AsOf":
        """Every read verb as the memory saw the world at instant t."""
        from .timeutil import to_db
        to_db(t, "t")
        return AsOf(self, t)

    def maintain_indexes(self, policy=None, **kw) -> dict:
        """Build, validate and publish the derived-index generations that are due under
        `policy` (a MaintenancePolicy; default: any pending journal row), absorbing their
        journals. docs/indexes.md says when to call it."""
        from .verbs.indexes import maintain_indexes
        return maintain_indexes(self._store, policy=policy, **kw)

    def rebuild_fts_index(self) -> dict:
        """Rebuild and validate the text index of this handle's tenant, due or not."""
        from .verbs.indexes import rebuild_fts_index
        return rebuild_fts_index(self._store)

    def build_ann_index(self, **kw) -> dict:
        """Opt this tenant into the approximate (HNSW) vector index and build it now; see
        anatid.indexes.ann.build_ann_index and docs/indexes.md (ANN)."""
        from .verbs.indexes import build_ann_index
        return build_ann_index(self._store, **kw)

    def index_health(self, **kw) -> list[dict]:
        """Per index (graph, text, vector) and tenant: one reason (`fresh`, `stale_generation`,
        `unvalidated`, `historical_query`, `rebuild_in_progress`, `load_failure`, `damaged_base`,
        `absent`), counts and whether maintenance is due. Read-only."""
        from .indexes.report import index_health
        from .indexes.policy import MaintenancePolicy
        for name in ("all_tenants", "deep"):
            if name in kw and not isinstance(kw[name], bool):
                raise ValidationError(name, f"expected a bool, got {type(kw[name]).__name__}", "True or False")
        if kw.get("policy") is not None and not isinstance(kw["policy"], MaintenancePolicy):
            raise ValidationError("policy", f"expected a MaintenancePolicy, got {type(kw['policy']).__name__}",
                                  "anatid.MaintenancePolicy(...), or None")
        if kw.get("as_of") is not None:
            from .timeutil import to_db
            to_db(kw["as_of"], "as_of")
        with self._store.settling():     # no half-read result left behind (Store.settle)
            return index_health(self._store, **kw)

    def stats(self) -> dict:
        from .stats import stats
        with self._store.settling():
            return stats(self._store)

    def doctor(self):
        """Read-only integrity and upkeep checks of the whole file: a DoctorReport (docs/doctor.md)."""
        from .doctor import doctor
        health = getattr(self, "index_health", None)
        # the doctor covers every tenant (unwrap: a pooled handle wraps index_health in its call count)
        if inspect.unwrap(getattr(health, "__func__", None)) is Anatid.index_health:
            health = partial(health, all_tenants=True)
        with self._store.settling():
            return doctor(self._store, health)

    # -- transactions ------------------------------------------------------------------------------
    @contextmanager
    def transaction(self):
        """Run several verbs (and reads) as one transaction and one snapshot."""
        with self._store.transaction():
            yield self

    def atomic(self, fn: Callable[["Anatid"], T], *, retries: int = 8, base_delay: float = 0.005) -> T:
        """Call fn(db) in one transaction; re-run it on retryable conflicts with jittered backoff."""
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


class AsOf:
    """Read verbs bound to one past instant."""

    def __init__(self, db: Anatid, t):
        self._db = db
        self.t = t

    def recall(self, query, **kw):
        return self._db.recall(query, as_of=self.t, **kw)

    def recall_2hop(self, seed, **kw):
        return self._db.recall_2hop(seed, as_of=self.t, **kw)

    def context(self, entity, **kw):
        return self._db.context(entity, as_of=self.t, **kw)

    def get(self, memory_id):
        return self._db.get(memory_id, as_of=self.t)
