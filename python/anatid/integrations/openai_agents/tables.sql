-- Tables of the OpenAI Agents SDK integration, in the same file as the memory
-- graph so that history and knowledge join in one query. Created on first use
-- with IF NOT EXISTS: a file that never met an agent has none of them.

-- Conversation history of AnatidSession. item_id comes from a sequence, so a
-- popped item's id is never reused and order is insertion order.
CREATE SEQUENCE IF NOT EXISTS anatid_session_item_seq;

CREATE TABLE IF NOT EXISTS anatid_session_items (
    item_id    BIGINT    NOT NULL PRIMARY KEY,
    tenant_id  BIGINT    NOT NULL,
    session_id VARCHAR   NOT NULL,
    item       VARCHAR   NOT NULL,   -- the SDK's input item, as JSON text
    role       VARCHAR,              -- 'user', 'assistant', ... or NULL for tool items
    text       VARCHAR,              -- what the item says, for matching entity names
    terms      VARCHAR[],            -- tokens of text, same tokenizer as recall
    added_at   TIMESTAMP NOT NULL
);

-- What each conversation committed to memory, written in the same
-- transaction as the memory write itself.
CREATE TABLE IF NOT EXISTS anatid_session_writes (
    tenant_id  BIGINT    NOT NULL,
    session_id VARCHAR   NOT NULL,
    memory_id  BIGINT    NOT NULL,   -- the memory written (the new one for a supersede)
    verb       VARCHAR   NOT NULL,   -- remember | supersede | forget | forget_hard
    related_id BIGINT,               -- the superseded memory, for a supersede
    call_id    VARCHAR,              -- the model's tool call id
    writer     VARCHAR,
    written_at TIMESTAMP NOT NULL
);

-- RunStateStore: interrupted runs parked for review. state is the SDK's own
-- serialization (RunState.to_string()); pending lists the calls awaiting a
-- decision as JSON [{call_id, tool_name, arguments}].
CREATE TABLE IF NOT EXISTS anatid_run_states (
    run_id       VARCHAR   NOT NULL PRIMARY KEY,
    tenant_id    BIGINT    NOT NULL,
    status       VARCHAR   NOT NULL,   -- pending | resuming | completed | failed
    agent_name   VARCHAR,
    session_id   VARCHAR,
    state        VARCHAR   NOT NULL,
    pending      VARCHAR   NOT NULL,
    metadata     VARCHAR,              -- caller's JSON object
    final_output VARCHAR,              -- JSON, once completed
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);

-- The audit trail of every parked run: parked, approved, rejected, resumed,
-- completed, failed. Never updated or deleted by anatid.
CREATE TABLE IF NOT EXISTS anatid_run_state_events (
    event_id  BIGINT    NOT NULL,
    tenant_id BIGINT    NOT NULL,
    run_id    VARCHAR   NOT NULL,
    happened_at TIMESTAMP NOT NULL,
    action    VARCHAR   NOT NULL,
    call_id   VARCHAR,
    tool_name VARCHAR,
    actor     VARCHAR,                 -- reviewer or process that acted
    detail    VARCHAR                  -- JSON: rejection message, note, error
);

CREATE SEQUENCE IF NOT EXISTS anatid_run_state_event_seq;
