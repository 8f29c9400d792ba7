-- anatid schema version 1. Canonical tables first, then derived ones.
-- Every instant is a naive TIMESTAMP in UTC. Intervals are half-open
-- [from, to) and NULL means open. See docs/architecture.md.

CREATE TABLE IF NOT EXISTS anatid_meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_entities (
    entity_id  BIGINT    NOT NULL,
    tenant_id  BIGINT    NOT NULL,
    name       VARCHAR   NOT NULL,
    name_key   VARCHAR   NOT NULL,   -- whitespace-collapsed, lower-cased name
    kind       VARCHAR,
    created_at TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, name_key)
);

-- One row per version of a memory. A correction (update) closes the current
-- version's tx_to and adds version+1 with the same memory_id; a supersede
-- closes valid_to and links a new memory_id.
CREATE TABLE IF NOT EXISTS anatid_memories (
    memory_id     BIGINT    NOT NULL,
    version       INTEGER   NOT NULL,
    tenant_id     BIGINT    NOT NULL,
    content       VARCHAR   NOT NULL,
    kind          VARCHAR   NOT NULL,
    confidence    DOUBLE    NOT NULL,
    strength      DOUBLE    NOT NULL,
    writer        VARCHAR,
    valid_from    TIMESTAMP NOT NULL,
    valid_to      TIMESTAMP,
    tx_from       TIMESTAMP NOT NULL,
    tx_to         TIMESTAMP,
    supersedes    BIGINT,
    superseded_by BIGINT,
    last_used_at  TIMESTAMP
);

-- kind: 'about' (memory -> entity), 'relates' (entity -> entity, rel_kind),
-- 'supersedes' (new memory -> old memory).
CREATE TABLE IF NOT EXISTS anatid_edges (
    edge_id    BIGINT    NOT NULL,
    tenant_id  BIGINT    NOT NULL,
    kind       VARCHAR   NOT NULL,
    src_id     BIGINT    NOT NULL,
    dst_id     BIGINT    NOT NULL,
    rel_kind   VARCHAR,
    weight     DOUBLE    NOT NULL,
    valid_from TIMESTAMP NOT NULL,
    valid_to   TIMESTAMP,
    tx_from    TIMESTAMP NOT NULL,
    tx_to      TIMESTAMP
);

CREATE TABLE IF NOT EXISTS anatid_episodes (
    episode_id  BIGINT    NOT NULL,
    tenant_id   BIGINT    NOT NULL,
    content     VARCHAR   NOT NULL,
    source      VARCHAR,
    writer      VARCHAR,
    recorded_at TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_evidence (
    memory_id  BIGINT NOT NULL,
    episode_id BIGINT NOT NULL,
    tenant_id  BIGINT NOT NULL
);

-- Stored once per memory_id: a correction keeps the vector.
-- Vectors are stored uncompressed: DuckDB's float compression (ALPRD) saved 16% of their
-- bytes on 100k unit 64-d vectors but doubled the checkpoint's time for them, and a write-heavy
-- memory checkpoints every few batches (docs/benchmarks.md, "Write throughput"). Files made
-- before this keep their compressed columns; both read the same.
CREATE TABLE IF NOT EXISTS anatid_embeddings (
    memory_id BIGINT  NOT NULL,
    tenant_id BIGINT  NOT NULL,
    embedding FLOAT[] NOT NULL USING COMPRESSION uncompressed,
    norm      DOUBLE  NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_audit (
    audit_id   BIGINT    NOT NULL,
    tenant_id  BIGINT    NOT NULL,
    happened_at TIMESTAMP NOT NULL,
    verb       VARCHAR   NOT NULL,
    writer     VARCHAR,
    subject_id BIGINT,
    detail     VARCHAR
);

-- Derived: text postings of each memory's current content, maintained by
-- every write in its own transaction. Never canonical: an exact scan over
-- anatid_memories gives the same scores.
CREATE TABLE IF NOT EXISTS anatid_postings (
    tenant_id BIGINT  NOT NULL,
    memory_id BIGINT  NOT NULL,
    term      VARCHAR NOT NULL,
    tf        INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_text_docs (
    tenant_id BIGINT  NOT NULL,
    memory_id BIGINT  NOT NULL,
    doc_len   INTEGER NOT NULL
);
