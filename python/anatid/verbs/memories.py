"""Write verbs over memories: remember, supersede, update, forget, reinforce.

Each verb validates everything first, then runs exactly one transaction.
"""
from __future__ import annotations

import json

import numpy as np

from .. import text, validate
from ..errors import ConflictError, NotFoundError, ValidationError
from ..models import Episode, Memory
from ._rows import MEMORY_COLUMNS, episode_from_row, memory_from_row
from .entities import ensure_entities_named
from . import journal

_INSERT_MEMORY = """
INSERT INTO anatid_memories (memory_id, version, tenant_id, content, kind, confidence, strength, writer,
                             valid_from, valid_to, tx_from, tx_to, supersedes, superseded_by, last_used_at)
VALUES ($memory_id, $version, $tenant, $content, $kind, $confidence, $strength, $writer,
        $valid_from, $valid_to, $now, NULL, $supersedes, NULL, NULL)
"""

_INSERT_ABOUT = """
INSERT INTO anatid_edges (edge_id, tenant_id, kind, src_id, dst_id, rel_kind, weight,
                          valid_from, valid_to, tx_from, tx_to)
SELECT unnest($edge_ids), $tenant, 'about', $memory_id, unnest($entity_ids), NULL, 1.0,
       $valid_from, NULL, $now, NULL
"""

_INSERT_EMBEDDING = """
INSERT INTO anatid_embeddings (memory_id, tenant_id, embedding, norm)
VALUES ($memory_id, $tenant, $embedding::FLOAT[], $norm)
"""

_INSERT_EPISODE = """
INSERT INTO anatid_episodes (episode_id, tenant_id, content, source, writer, recorded_at)
VALUES ($episode_id, $tenant, $content, $source, $writer, $now)
"""

_AUDIT = """
INSERT INTO anatid_audit (audit_id, tenant_id, happened_at, verb, writer, subject_id, detail)
VALUES ($audit_id, $tenant, $now, $verb, $writer, $subject_id, $detail)
"""

_CURRENT_VERSION = f"""
SELECT {MEMORY_COLUMNS} FROM anatid_memories
WHERE tenant_id = $tenant AND memory_id = $memory_id AND tx_to IS NULL
"""


def vector_norms(mat) -> np.ndarray:
    """Norms of the float32 rows of `mat`, in float64: row by row the same arithmetic
    whatever the number of rows, so remember and remember_many store equal norms."""
    m = np.asarray(mat, dtype=np.float64)
    return np.sqrt(np.add.reduce(m * m, axis=1))


def vector_norm(vec: list[float]) -> float:
    return float(vector_norms([vec])[0])


def audit(store, cur, now, verb: str, subject_id: int | None, writer: str | None, **detail) -> None:
    cur.execute(_AUDIT, {"audit_id": store.ids.take()[0], "tenant": store.tenant, "now": now, "verb": verb,
                         "writer": writer, "subject_id": subject_id,
                         "detail": json.dumps(detail, sort_keys=True) if detail else None})


def _episode_id(store, cur, episode, writer, now) -> int | None:
    """An episode given as text is stored first; an id must exist in this tenant."""
    if episode is None:
        return None
    if isinstance(episode, str):
        content = validate.text(episode, "episode")
        eid = store.ids.take()[0]
        cur.execute(_INSERT_EPISODE, {"episode_id": eid, "tenant": store.tenant, "content": content,
                                      "source": None, "writer": writer, "now": now})
        return eid
    eid = validate.identifier(episode, "episode")
    if cur.execute("SELECT 1 FROM anatid_episodes WHERE tenant_id = $tenant AND episode_id = $id",
                   {"tenant": store.tenant, "id": eid}).fetchone() is None:
        raise NotFoundError(f"episode {eid} does not exist in tenant {store.tenant}")
    return eid


def _check_episode_arg(episode) -> None:
    if episode is None:
        return
    if isinstance(episode, str):
        validate.text(episode, "episode")
    else:
        validate.identifier(episode, "episode")


def insert_memory(store, cur, *, memory_id: int, content: str, kind: str, confidence: float, writer,
                  entity_names: list[str], embedding, episode, valid_from, valid_to, now,
                  supersedes: int | None = None, strength: float = 1.0, version: int = 1) -> list[str]:
    """Every row one new memory needs, inside the caller's transaction; returns the
    entity names as stored (an existing entity keeps its first spelling)."""
    p = {"memory_id": memory_id, "version": version, "tenant": store.tenant, "content": content, "kind": kind,
         "confidence": confidence, "strength": strength, "writer": writer,
         "valid_from": valid_from if valid_from is not None else now, "valid_to": valid_to,
         "now": now, "supersedes": supersedes}
    episode_id = _episode_id(store, cur, episode, writer, now)
    cur.execute(_INSERT_MEMORY, p)
    by_key = ensure_entities_named(store, cur, entity_names, now)
    named = list(by_key.values())
    entity_ids = [eid for eid, _ in named]
    vf, vt = p["valid_from"], valid_to
    # Journal rows are written from these values, never read back from the big tables:
    # every statement here costs O(rows written).
    if entity_ids:
        cur.execute(_INSERT_ABOUT, {"edge_ids": store.ids.take(len(entity_ids)), "tenant": store.tenant,
                                    "memory_id": memory_id, "entity_ids": entity_ids,
                                    "valid_from": vf, "now": now})
        journal.about_added(store, cur, [(memory_id, e) for e in entity_ids], now,
                            known=[(kind, vf, vt, key) for key in by_key])
    if embedding is not None:
        norm = vector_norm(embedding)
        cur.execute(_INSERT_EMBEDDING, {"memory_id": memory_id, "tenant": store.tenant,
                                        "embedding": embedding, "norm": norm})
        journal.vector_changed(store, cur, [memory_id], now, known={memory_id: (vf, vt, norm, embedding)})
    if episode_id is not None:
        cur.execute("INSERT INTO anatid_evidence VALUES ($memory_id, $episode_id, $tenant)",
                    {"memory_id": memory_id, "episode_id": episode_id, "tenant": store.tenant})
    doc_len, terms, tfs = text.index_text(cur, store.tenant, memory_id, content)
    journal.text_changed(store, cur, [memory_id], now, known={memory_id: (doc_len, vf, vt, terms, tfs)})
    return [name for _, name in named]


def _validate_memory_args(store, content, entities, kind, confidence, embedding, writer, episode,
                          valid_from, valid_to):
    from ..timeutil import to_db
    content = validate.text(content, "content")
    names = validate.names(entities, "entities")
    kind = validate.name(kind, "kind")
    confidence = validate.finite_number(confidence, "confidence", low=0.0, high=1.0)
    vec = None if embedding is None else validate.embedding(embedding, store.embedding_dim)
    writer = validate.optional_text(writer, "writer")
    _check_episode_arg(episode)
    vf = None if valid_from is None else to_db(valid_from, "valid_from")
    vt = None if valid_to is None else to_db(valid_to, "valid_to")
    if vf is not None and vt is not None and vt <= vf:
        raise ValidationError("valid_to", "is not after valid_from", "valid_to > valid_from, or None")
    return content, names, kind, confidence, vec, writer, vf, vt


def _ensure_dim(store, cur, vec) -> None:
    """The first embedding written fixes the file's dimension. A vector validated before
    another thread's first one fixed it (two first remembers at once, or in one group) is
    checked again here, inside the transaction."""
    if vec is not None and store.embedding_dim is not None and len(vec) != store.embedding_dim:
        validate.embedding(vec, store.embedding_dim)   # raises EmbeddingDimensionError
    if vec is not None and store.embedding_dim is None:
        cur.execute("INSERT INTO anatid_meta VALUES ('embedding_dim', $d)", {"d": str(len(vec))})
        store.embedding_dim = len(vec)


def remember(store, content: str, entities=None, *, kind: str = "fact", confidence: float = 1.0,
             embedding=None, writer: str | None = None, episode=None, valid_from=None, valid_to=None,
             now=None) -> Memory:
    content, names, kind, confidence, vec, writer, vf, vt = _validate_memory_args(
        store, content, entities, kind, confidence, embedding, writer, episode, valid_from, valid_to)
    alone = lambda: _remember_alone(store, content, names, kind, confidence, vec, writer,  # noqa: E731
                                    episode, vf, vt, now)
    if now is not None or store.in_transaction or store.read_only:
        # an explicit instant, or a caller's transaction(), is one write of its own
        return alone()
    return store.group.submit((content, names, kind, confidence, vec, writer, vf, vt, episode), alone)


def _remember_alone(store, content, names, kind, confidence, vec, writer, episode, vf, vt, now) -> Memory:
    dim_before = store.embedding_dim
    try:
        with store.write() as cur:
            t = store.write_instant(now)
            # a fact that becomes true later (vf > t) is allowed; one that ends before it starts is not
            if vf is None and vt is not None:
                require_valid_to_after(vt, t)
            _ensure_dim(store, cur, vec)
            mid = store.ids.take()[0]
            stored = insert_memory(store, cur, memory_id=mid, content=content, kind=kind, confidence=confidence,
                                   writer=writer, entity_names=names, embedding=vec, episode=episode,
                                   valid_from=vf, valid_to=vt, now=t)
    except BaseException:
        store.embedding_dim = dim_before
        raise
    # Built from what was written, not read back: one statement fewer per remember.
    return memory_from_row((mid, 1, store.tenant, content, kind, confidence, 1.0, writer,
                            vf if vf is not None else t, vt, t, None, None, None), stored)


def current_version(store, cur, memory_id: int, verb: str):
    """The believed version of a memory, or a clear error saying why there is none."""
    row = cur.execute(_CURRENT_VERSION, {"tenant": store.tenant, "memory_id": memory_id}).fetchone()
    if row is not None:
        return row
    exists = cur.execute("SELECT 1 FROM anatid_memories WHERE tenant_id = $tenant AND memory_id = $id LIMIT 1",
                         {"tenant": store.tenant, "id": memory_id}).fetchone()
    if exists is None:
        raise NotFoundError(f"memory {memory_id} does not exist in tenant {store.tenant}")
    raise ConflictError(f"cannot {verb} memory {memory_id}: it was forgotten", retryable=False)


def require_valid_to_after(vt, t, item: str | None = None) -> None:
    """valid_from defaults to the write instant t: a valid_to at or before it would store an
    interval that ends before it starts (doctor's memory_interval_order)."""
    if vt <= t:
        where = f"{item}: " if item else ""
        raise ValidationError("valid_to", f"{where}{vt.isoformat()} UTC is not after the write instant "
                              f"{t.isoformat()} UTC, where valid_from defaults to",
                              "a valid_to after now, or an explicit earlier valid_from")


def require_after(t, start, what: str) -> None:
    """An explicit now= before (or at) the start of the row it closes would leave an
    inverted or empty interval: refuse it instead."""
    if t <= start:
        raise ValidationError("now", f"{t} is not after {what} {start}", f"an instant after {start}")


def about_entities(store, cur, memory_id: int) -> list[str]:
    rows = cur.execute("""
        SELECT e.name FROM anatid_edges a JOIN anatid_entities e ON e.entity_id = a.dst_id
        WHERE a.tenant_id = $tenant AND a.kind = 'about' AND a.src_id = $id ORDER BY a.edge_id""",
                       {"tenant": store.tenant, "id": memory_id}).fetchall()
    return [r[0] for r in rows]


def supersede(store, old_id, content: str, *, entities=None, kind: str | None = None, confidence=None,
              embedding=None, writer: str | None = None, episode=None, now=None) -> Memory:
    old_id = validate.identifier(old_id, "old_id")
    content, names, kind_v, conf_v, vec, writer, _, _ = _validate_memory_args(
        store, content, entities, "fact" if kind is None else kind, 1.0 if confidence is None else confidence,
        embedding, writer, episode, None, None)
    dim_before = store.embedding_dim
    try:
        with store.write() as cur:
            t = store.write_instant(now)
            old = current_version(store, cur, old_id, "supersede")
            if old[9] is not None:  # valid_to
                raise ConflictError(f"cannot supersede memory {old_id}: it is already closed "
                                    f"(superseded by {old[13]})", retryable=False)
            if t <= old[8]:
                raise ValidationError("now", f"{t} is not after the old memory's valid_from {old[8]}",
                                      "an instant after the memory became valid")
            _ensure_dim(store, cur, vec)
            new_id = store.ids.take()[0]
            cur.execute("UPDATE anatid_memories SET valid_to = $now, superseded_by = $new "
                        "WHERE tenant_id = $tenant AND memory_id = $old AND tx_to IS NULL",
                        {"now": t, "new": new_id, "tenant": store.tenant, "old": old_id})
            text.unindex_text(cur, store.tenant, old_id)
            journal.memory_closed(store, cur, [old_id], t)
            inherit = names if entities is not None else about_entities(store, cur, old_id)
            # insert_memory returns the stored spellings, as get() shows them
            inherit = insert_memory(store, cur, memory_id=new_id, content=content,
                                    kind=kind_v if kind is not None else old[4],
                                    confidence=old[5] if confidence is None else conf_v, writer=writer,
                                    entity_names=inherit, embedding=vec, episode=episode, valid_from=t,
                                    valid_to=None, now=t, supersedes=old_id)
            cur.execute("""INSERT INTO anatid_edges VALUES ($eid, $tenant, 'supersedes', $new, $old, NULL, 1.0,
                           $now, NULL, $now, NULL)""",
                        {"eid": store.ids.take()[0], "tenant": store.tenant, "new": new_id, "old": old_id, "now": t})
            audit(store, cur, t, "supersede", old_id, writer, new_memory_id=str(new_id))
            row = cur.execute(_CURRENT_VERSION, {"tenant": store.tenant, "memory_id": new_id}).fetchone()
    except BaseException:
        store.embedding_dim = dim_before
        raise
    return memory_from_row(row, inherit)


def update(store, memory_id, content: str, *, expected_version: int, writer: str | None = None,
           now=None) -> Memory:
    """Compare-and-swap correction: a new version of the same memory_id."""
    memory_id = validate.identifier(memory_id, "memory_id")
    content = validate.text(content, "content")
    expected_version = validate.positive_int(expected_version, "expected_version")
    writer = validate.optional_text(writer, "writer")
    with store.write() as cur:
        t = store.write_instant(now)
        cur_row = current_version(store, cur, memory_id, "update")
        if cur_row[1] != expected_version:
            raise ConflictError(f"memory {memory_id} is at version {cur_row[1]}, not the expected "
                                f"{expected_version}: another writer got there first", retryable=True)
        require_after(t, cur_row[10], f"version {expected_version}'s tx_from")
        cur.execute("UPDATE anatid_memories SET tx_to = $now WHERE tenant_id = $tenant AND memory_id = $id "
                    "AND version = $v AND tx_to IS NULL",
                    {"now": t, "tenant": store.tenant, "id": memory_id, "v": expected_version})
        cur.execute(f"""
            INSERT INTO anatid_memories
            SELECT memory_id, version + 1, tenant_id, $content, kind, confidence, strength,
                   coalesce($writer, writer), valid_from, valid_to, $now, NULL, supersedes, superseded_by,
                   last_used_at
            FROM anatid_memories WHERE tenant_id = $tenant AND memory_id = $id AND version = $v""",
                    {"content": content, "writer": writer, "now": t, "tenant": store.tenant,
                     "id": memory_id, "v": expected_version})
        text.unindex_text(cur, store.tenant, memory_id)
        if cur_row[9] is None or cur_row[9] > t:
            text.index_text(cur, store.tenant, memory_id, content)
        journal.text_changed(store, cur, [memory_id], t)
        audit(store, cur, t, "update", memory_id, writer, from_version=expected_version)
        row = cur.execute(_CURRENT_VERSION, {"tenant": store.tenant, "memory_id": memory_id}).fetchone()
        names = about_entities(store, cur, memory_id)
    return memory_from_row(row, names)


def forget(store, memory_id, *, hard: bool = False, writer: str | None = None, reason: str | None = None,
           now=None) -> dict:
    memory_id = validate.identifier(memory_id, "memory_id")
    if not isinstance(hard, bool):
        raise ValidationError("hard", f"expected a bool, got {type(hard).__name__}", "True or False")
    writer = validate.optional_text(writer, "writer")
    reason = validate.optional_text(reason, "reason")
    with store.write() as cur:
        t = store.write_instant(now)
        if hard:
            from .erase import erase_memory
            erase_memory(store, cur, memory_id)
            audit(store, cur, t, "forget_hard", memory_id, writer)
            return {"memory_id": memory_id, "hard": True}
        row = current_version(store, cur, memory_id, "forget")
        require_after(t, row[10], "the believed version's tx_from")
        cur.execute("UPDATE anatid_memories SET tx_to = $now WHERE tenant_id = $tenant AND memory_id = $id "
                    "AND tx_to IS NULL", {"now": t, "tenant": store.tenant, "id": memory_id})
        text.unindex_text(cur, store.tenant, memory_id)
        journal.memory_closed(store, cur, [memory_id], t)
        audit(store, cur, t, "forget", memory_id, writer, **({"reason": reason} if reason else {}))
    return {"memory_id": memory_id, "hard": False}


def reinforce(store, memory_id, amount: float = 1.0, *, now=None) -> Memory:
    memory_id = validate.identifier(memory_id, "memory_id")
    amount = validate.finite_number(amount, "amount", low=-1e6, high=1e6)
    with store.write() as cur:
        t = store.write_instant(now)
        current_version(store, cur, memory_id, "reinforce")
        cur.execute("UPDATE anatid_memories SET strength = greatest(strength + $amount, 0), last_used_at = $now "
                    "WHERE tenant_id = $tenant AND memory_id = $id AND tx_to IS NULL",
                    {"amount": amount, "now": t, "tenant": store.tenant, "id": memory_id})
        row = cur.execute(_CURRENT_VERSION, {"tenant": store.tenant, "memory_id": memory_id}).fetchone()
    return memory_from_row(row)


def episode(store, content: str, *, source: str | None = None, writer: str | None = None, now=None) -> Episode:
    content = validate.text(content, "content")
    source = validate.optional_text(source, "source")
    writer = validate.optional_text(writer, "writer")
    with store.write() as cur:
        t = store.write_instant(now)
        eid = store.ids.take()[0]
        cur.execute(_INSERT_EPISODE, {"episode_id": eid, "tenant": store.tenant, "content": content,
                                      "source": source, "writer": writer, "now": t})
        row = cur.execute("SELECT episode_id, tenant_id, content, source, writer, recorded_at FROM anatid_episodes "
                          "WHERE episode_id = $id", {"id": eid}).fetchone()
    return episode_from_row(row)
