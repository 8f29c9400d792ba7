-- Derived: the text index's base generations and journal (anatid.indexes.text).
-- A generation is an immutable snapshot of one tenant's postings, stored as BLOB
-- parts (little-endian arrays, see docs/indexes.md) that the extension parses once
-- per process; the journal holds the current state of every memory whose text or visibility changed
-- since, written in the same transaction as the change. Dropping these tables
-- loses speed, never an answer: with no generation every document is scanned.
CREATE TABLE IF NOT EXISTS anatid_text_gen (
    tenant_id BIGINT    NOT NULL,
    gen_id    BIGINT    NOT NULL,
    nonce     BIGINT    NOT NULL,   -- random: the process-wide cache key is (gen_id, nonce)
    built_at  TIMESTAMP NOT NULL,
    n_docs    BIGINT    NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_text_gen_parts (
    gen_id  BIGINT  NOT NULL,
    part    INTEGER NOT NULL,
    payload BLOB    NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_text_journal (
    tenant_id BIGINT    NOT NULL,
    memory_id BIGINT    NOT NULL,
    seq       BIGINT    NOT NULL,   -- allocator id of the write: the latest row of a memory wins
    doc_len   INTEGER,              -- NULL: the memory has no believed text any more
    vf        BIGINT,               -- valid_from, epoch microseconds
    vt        BIGINT,               -- valid_to, epoch microseconds (INT64_MAX when open)
    -- its postings as one string, "term:tf term:tf ..." sorted by term (NULL: none). Tokens
    -- are runs of [\p{L}\p{M}\p{N}] (anatid/text.py TOKEN_PATTERN): never ' ' or ':'. One
    -- VARCHAR is what a read scans cheaply; lists cost a per-row materialization
    -- (src/text_journal.hpp). A file written with terms VARCHAR[] + tfs INTEGER[] instead
    -- is migrated on its next read-write open (anatid.schema).
    postings  VARCHAR
);
