"""prune, remember_many and stats."""
from __future__ import annotations

import gc
import itertools
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Iterator

from .. import validate
from ..errors import ValidationError
from .memories import _check_episode_arg, _ensure_dim, forget, require_valid_to_after


@dataclass(frozen=True)
class PruneReport:
    candidates: tuple[int, ...]
    dry_run: bool
    forgotten: tuple[int, ...]
    hard: bool


def prune(store, *, min_strength: float = 0.5, older_than: timedelta = timedelta(days=30), kinds=None,
          dry_run: bool = True, hard: bool = False, writer: str | None = None, now=None) -> PruneReport:
    """Forget believed memories weaker than `min_strength` and unused for `older_than`.

    Runs as a query, then one transaction per memory: a failure part-way leaves
    the earlier forgets committed. Call with dry_run=True (the default) first.
    """
    min_strength = validate.finite_number(min_strength, "min_strength")
    if not isinstance(older_than, timedelta) or older_than < timedelta(0):
        raise ValidationError("older_than", f"{validate.shown(older_than)} is not a non-negative timedelta",
                              "a timedelta")
    kinds = validate.kinds(kinds)
    if not isinstance(dry_run, bool) or not isinstance(hard, bool):
        raise ValidationError("dry_run", "dry_run and hard must be bools", "True or False")
    t = store.view(None).valid_at if now is None else store.view(now).valid_at
    try:
        cutoff = t - older_than
    except OverflowError:
        raise ValidationError("older_than", f"{older_than} before {t.isoformat()} UTC is before year 1",
                              "a timedelta reaching back no further than 0001-01-01") from None
    rows = store.read().execute(f"""
        SELECT memory_id FROM anatid_memories m
        WHERE m.tenant_id = $tenant AND m.tx_to IS NULL AND m.strength < $min_strength
          AND coalesce(m.last_used_at, m.tx_from) < $cutoff {"AND m.kind IN (SELECT unnest($kinds))" if kinds else ""}
        ORDER BY memory_id""", {"tenant": store.tenant, "min_strength": min_strength, "cutoff": cutoff,
                                **({"kinds": kinds} if kinds else {})}).fetchall()
    ids = tuple(int(r[0]) for r in rows)
    if dry_run:
        return PruneReport(ids, True, (), hard)
    done = []
    for mid in ids:
        forget(store, mid, hard=hard, writer=writer, reason="prune", now=now)
        done.append(mid)
    return PruneReport(ids, False, tuple(done), hard)


def _vectors_at_once(store, items) -> dict[int, "np.ndarray"] | None:
    """validate.embedding for every item's embedding in one numpy pass: item index -> the
    float32-rounded vector (a row of one matrix). None when any of them would fail (or they
    do not form one matrix): then each item is validated alone, so errors name the item as
    before."""
    import numpy as np
    # a dict subclass is left to the per-item path (which reads it as a plain dict)
    at = [i for i, item in enumerate(items) if type(item) is dict and item.get("embedding") is not None]
    if len(at) < 2:
        return None
    vectors = [items[i]["embedding"] for i in at]
    try:
        # straight to float32: numpy rounds each Python float as float64 -> float32 would, an
        # overflow becomes inf and a NaN stays NaN, so one finiteness check covers both
        with np.errstate(over="ignore", invalid="ignore"):
            f32 = _lists_as_matrix(vectors, np)
            if f32 is None:
                f32 = np.asarray(vectors, dtype=np.float32)
    except Exception:   # numpy's own errors, or the caller's __len__/__iter__/__float__: each item alone says which
        return None
    if f32.ndim != 2 or f32.shape[1] == 0 or (store.embedding_dim is not None and f32.shape[1] != store.embedding_dim):
        return None
    if not np.all(np.isfinite(f32)) or not np.all(np.any(f32, axis=1)):
        return None
    return dict(zip(at, f32))


def _lists_as_matrix(vectors: list, np):
    """Equally long plain lists (the usual embeddings) as one float32 matrix, their values read
    by one np.fromiter over the chained lists: ~2x faster than np.asarray of the nested lists
    here (5,000 x 64: 4.9 against 9.6 ms), each value converted by the same float32 setitem.
    None when they are not all lists of one non-zero length (np.asarray then reads them)."""
    if not all(type(v) is list for v in vectors):
        return None
    width = len(vectors[0])
    if width == 0 or not all(len(v) == width for v in vectors):
        return None
    flat = np.fromiter(itertools.chain.from_iterable(vectors), dtype=np.float32, count=len(vectors) * width)
    return flat.reshape(len(vectors), width)


class _Cache(dict):
    """Validated forms of the strings a batch repeats (entity names, kinds, writers): each
    distinct string goes through its validator once per batch."""

    def get_or(self, value, make):
        if type(value) is str:
            hit = self.get(value)
            if hit is None:
                hit = self[value] = make(value)
            return hit
        return make(value)


def _entity_name(value) -> tuple[str, str]:
    n = validate.name(value, "entities")
    return n, validate.name_key(n)


def _kind(value) -> str:
    return validate.name(value, "kind")


def _writer(value) -> str | None:
    return validate.optional_text(value, "writer")


def _validate_item(store, item, writer, vec, caches: tuple[_Cache, _Cache, _Cache]):
    """_validate_memory_args for one item of a batch, the same checks in the same order (so
    the same error for the same bad value), with repeated strings validated once (the cache
    lookups are inlined: this runs once per item, ~2.4 us of which the calls were a third)."""
    get = item.get
    content = validate.text(item["content"], "content")
    entities = get("entities")
    names, keys = [], []
    if entities is not None:
        if isinstance(entities, str):
            entities = [entities]
        elif type(entities) is not list and type(entities) is not tuple:
            # a set, a subclass (read through its base type) or the usual error
            entities = validate.names(entities, "entities")
        known = caches[0]
        seen = set()
        for v in entities:
            nk = known.get(v) if type(v) is str else None
            n, k = nk if nk is not None else known.get_or(v, _entity_name)
            if k not in seen:
                seen.add(k)
                names.append(n)
                keys.append(k)
    kind = get("kind", "fact")
    hit = caches[1].get(kind) if type(kind) is str else None
    kind = hit if hit is not None else caches[1].get_or(kind, _kind)
    confidence = (validate.finite_number(item["confidence"], "confidence", low=0.0, high=1.0)
                  if "confidence" in item else 1.0)
    if vec is None:
        vec = get("embedding")
        if vec is not None:
            vec = validate.embedding(vec, store.embedding_dim)
    w = get("writer", writer)
    if w is not None:
        w = caches[2].get_or(w, _writer)
    episode = get("episode")
    if episode is not None:
        _check_episode_arg(episode)
    vf, vt = get("valid_from"), get("valid_to")
    if vf is not None or vt is not None:
        from ..timeutil import to_db
        vf = None if vf is None else to_db(vf, "valid_from")
        vt = None if vt is None else to_db(vt, "valid_to")
        if vf is not None and vt is not None and vt <= vf:
            raise ValidationError("valid_to", "is not after valid_from", "valid_to > valid_from, or None")
    return content, names, keys, kind, confidence, vec, w, vf, vt, episode


def _plain_item(i: int, item, allowed: set[str]) -> dict:
    """A dict subclass as the plain dict it holds (its own keys()/get() never run), or the
    error naming the item."""
    if isinstance(item, dict) and type(item) is not dict:
        item = dict(dict.items(item))
        if "content" in item and item.keys() <= allowed:
            return item
    raise ValidationError(f"items[{i}]", "is not a dict with 'content' and known keys", ", ".join(sorted(allowed)))


@contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for one batch (when it was running; resumed
    after). A batch allocates a few container objects per item (tuples, lists, the tokens),
    none of them in a cycle; while they are alive every ~700 allocations trigger a collection,
    the survivors are promoted, and every few batches a full collection walks the whole heap,
    collecting nothing of the batch's (`benchmark/remember_many.py --base`: the Python share of a
    batch of 5,000 fell 72.4 -> 58.5 ms). Paused, they are freed by reference counting first.
    Another thread's batch meanwhile finds it paused and leaves it to the first to resume."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def remember_many(store, items, *, writer: str | None = None, now=None) -> list[int]:
    """Write many memories in one transaction. Each item is a dict of remember()'s arguments
    (content, entities, kind, confidence, embedding, episode, valid_from, valid_to)."""
    with _cycle_collection_paused():
        return _remember_many(store, items, writer=writer, now=now)


def _remember_many(store, items, *, writer: str | None = None, now=None) -> list[int]:
    if not isinstance(items, (list, tuple)):
        # any iterable a `for item in items: remember(...)` loop takes (a generator, a view),
        # but not text or a single dict, whose iteration yields no items
        if isinstance(items, (str, bytes, bytearray, dict)) or not hasattr(type(items), "__iter__"):
            raise ValidationError("items", f"expected a list, got {type(items).__name__}", "a list of dicts")
        try:
            items = list(validate.members(items))
        except MemoryError:
            raise
        except Exception as exc:  # the caller's own __iter__ (or generator) raised
            raise ValidationError("items", f"could not be iterated ({type(exc).__name__})",
                                  "a list of dicts") from exc
    items = validate.members(items)  # a subclass read through its base type: its own __iter__ never runs
    allowed = {"content", "entities", "kind", "confidence", "embedding", "episode", "valid_from", "valid_to",
               "writer"}
    prepared = []
    vectors = _vectors_at_once(store, items)
    caches = (_Cache(), _Cache(), _Cache())  # entity names, kinds, writers
    for i, item in enumerate(items):
        if type(item) is not dict or "content" not in item or not item.keys() <= allowed:
            item = _plain_item(i, item, allowed)
        prepared.append(_validate_item(store, item, writer, vectors.get(i) if vectors is not None else None,
                                       caches))
    if not prepared:
        return []
    dims = {len(a[5]) for a in prepared if a[5] is not None}
    if len(dims) > 1:
        raise ValidationError("items", f"embeddings of different lengths {sorted(dims)}", "one length")
    from .bulk import bulk_insert
    dim_before = store.embedding_dim
    try:
        with store.write() as cur:
            t = store.write_instant(now)
            for i, a in enumerate(prepared):
                if a[7] is None and a[8] is not None:
                    require_valid_to_after(a[8], t, f"items[{i}]")
            first_vec = next((a[5] for a in prepared if a[5] is not None), None)
            _ensure_dim(store, cur, first_vec)
            return bulk_insert(store, cur, prepared, t)
    except BaseException:
        store.embedding_dim = dim_before
        raise
