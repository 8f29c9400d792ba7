-- Derived: the opt-in ANN (HNSW) index of the vector arm (anatid.indexes.ann).
-- anatid_ann_config is the opt-in, one row per tenant (build_ann_index() writes it);
-- anatid_ann_gen holds the tenant's current generation: one serialized HNSW index
-- (src/hnsw.hpp, versioned and checksummed) built in the same transaction as the vector
-- generation it covers. It is usable only while that vector generation is current, since
-- the vector journal (emptied by each vector rebuild) holds every change since. Dropping
-- these tables loses speed, never an answer: the exact scan answers without them.
CREATE TABLE IF NOT EXISTS anatid_ann_config (
    tenant_id       BIGINT  NOT NULL,
    m               INTEGER NOT NULL,   -- links per node (level 0 keeps 2 m)
    ef_construction INTEGER NOT NULL,
    ef_search       INTEGER NOT NULL,   -- search width per query; 0: the generation's calibrated one
    use_when        VARCHAR NOT NULL    -- 'always' or 'above_ceiling' (see docs/indexes.md)
);

CREATE TABLE IF NOT EXISTS anatid_ann_gen (
    tenant_id     BIGINT    NOT NULL,
    gen_id        BIGINT    NOT NULL,
    nonce         BIGINT    NOT NULL,   -- random: the process-wide cache key is (gen_id, nonce)
    built_at      TIMESTAMP NOT NULL,
    n_rows        BIGINT    NOT NULL,
    vector_gen_id BIGINT    NOT NULL,   -- the anatid_vector_gen it was built with
    seed          BIGINT    NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_ann_gen_parts (
    gen_id  BIGINT  NOT NULL,
    part    INTEGER NOT NULL,
    payload BLOB    NOT NULL
);

-- The search widths the build calibrated (src/hnsw.hpp, HnswCalibration): held-out rows
-- queried the graph of the others against the exact top k; per recall depth, the smallest
-- ef reaching the target recall, with the recall it measured. Copied out of the generation's
-- BLOB header (anatid_ann_info) so a recall plans its width without reading the BLOB.
CREATE TABLE IF NOT EXISTS anatid_ann_calibration (
    gen_id          BIGINT  NOT NULL,
    depth           INTEGER NOT NULL,   -- the recall depth calibrated (10 and 50)
    candidates      INTEGER NOT NULL,   -- rows asked of the index at that depth
    ef              INTEGER NOT NULL,   -- the calibrated search width
    recall_at_10    DOUBLE  NOT NULL,   -- measured on the held-out rows with that width
    recall_at_depth DOUBLE  NOT NULL,
    visited         DOUBLE  NOT NULL,   -- similarities computed per query at that width, as a share of the rows
    queries         INTEGER NOT NULL    -- held-out rows; 0 below 1,000 rows (ef = rows: exhaustive, not measured)
);
