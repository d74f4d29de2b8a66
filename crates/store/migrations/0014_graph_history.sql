-- The graph's history: every change made through the graph's gate (an agent's, an accepted
-- proposal's, the owner's, and the owner's undos), one row per change, with the connection it
-- changed as it was before and after. Undo puts `before` back while the connection is still as
-- `after` left it. Rows count against the agent connection's history budget like notes' versions.
CREATE TABLE graph_changes (
    id               INTEGER PRIMARY KEY,
    at               INTEGER NOT NULL,            -- Unix seconds
    actor            TEXT NOT NULL,               -- the graph author: 'owner', 'agent:<slug>[~<8 hex>]'
    connection_id    TEXT,                        -- the agent's connection; NULL for the owner
    label            TEXT NOT NULL,               -- the connection's label then ('' for the owner)
    tool             TEXT NOT NULL,               -- connect, set_connection_type, disconnect,
                                                  -- write_connection_note, or revert
    proposal_id      INTEGER,                     -- the accepted proposal it applied
    reverted         INTEGER,                     -- the graph change an undo undid
    graph_connection TEXT NOT NULL,               -- the connection's id in graph.jsonl (c-...)
    before           TEXT,                        -- its line before; NULL when the change made it
    after            TEXT,                        -- its line after; NULL when the change removed it
    size             INTEGER NOT NULL,            -- bytes of `before` and `after`, for the budget
    -- Recorded (0) under graph.lock before graph.jsonl is written, done (1) after, under the same
    -- lock: a row not done belongs to a process that died, and is undone by the next graph writer.
    done             INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX graph_changes_by_connection ON graph_changes (connection_id);
CREATE INDEX graph_changes_by_graph_connection ON graph_changes (graph_connection, id);
CREATE INDEX graph_changes_not_done ON graph_changes (id) WHERE done = 0;
-- Every graph write forgets the entries past their days (`history::prune`): found by time.
CREATE INDEX graph_changes_by_time ON graph_changes (at);

-- Every change to notes first asks for the changes left not done (`notes::changes::recover`): found
-- by this index, not by reading every change the history keeps.
CREATE INDEX note_changes_not_done ON note_changes (id) WHERE done = 0;
