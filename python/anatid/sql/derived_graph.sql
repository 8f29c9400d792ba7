-- Derived: the graph index (docs/sql.md, "Graph recall"). Never canonical: dropping
-- these tables loses speed, not facts (reads then go to the SQL oracle).

-- One row per tenant: the current base generation, published by maintain_indexes().
-- blob is src/graph_generation.hpp's serialized form; the counts are for stats().
-- nonce is last because a file made before it gets it by ALTER TABLE ADD COLUMN on its
-- next read-write open (anatid.schema), which appends: one column order for every file.
CREATE TABLE IF NOT EXISTS anatid_graph_generations (
    generation_id  BIGINT    NOT NULL,
    tenant_id      BIGINT    NOT NULL,
    built_at       TIMESTAMP NOT NULL,
    format_version INTEGER   NOT NULL,
    entities       BIGINT    NOT NULL,
    edges          BIGINT    NOT NULL,
    memories       BIGINT    NOT NULL,
    bytes          BIGINT    NOT NULL,
    blob           BLOB      NOT NULL,
    nonce          BIGINT    NOT NULL   -- random: the process-wide cache key is (generation_id, nonce)
);

-- The base marker (op 0, a = generation_id, b = its nonce) and every write since that base was built,
-- written in the same transaction as the write (anatid.indexes.graph's journal hooks).
-- `entry` is one text field per row, "op|seq|a|b|valid_from_us|valid_to_us|a_key|b_key|kind"
-- (src/graph_codec.hpp): a read then scans two columns, not nine.
-- op 1: pair {a, b} connected during [valid_from, valid_to)   a_key, b_key: name keys
-- op 2: pair {a, b} has no believed relates edge              (rows of one write share
--       a seq; the latest seq of a pair restates it whole)
-- op 3: memory a ABOUT entity b (b_key), kind, visible during [valid_from, valid_to)
-- op 4: memory a closed (soft forget, supersede)   op 5: memory a erased (hard forget)
CREATE TABLE IF NOT EXISTS anatid_graph_journal (
    tenant_id BIGINT  NOT NULL,
    seq       BIGINT  NOT NULL,
    op        TINYINT NOT NULL,
    entry     VARCHAR NOT NULL
);
